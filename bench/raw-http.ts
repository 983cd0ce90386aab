/**
 * CEILING, NOT GENERATED: node:http and mysql2 alone, for the public SELECT
 * and for keyset pages of bench_pages (issue 31: 20 rows and whether another
 * page follows, with no cursor signed), the first and one after a key given in
 * the query string (issue 46: the page after 900,000 rows): about as fast as
 * Node serves these routes on this machine. `/api/v1.0/duties/catalog` is the
 * same SELECT with what the contract asks of every GET and nothing else (see
 * `dutiesAnswer`): what those duties cost on bare node:http.
 */
import { hash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import mysql from 'mysql2/promise';

const url = new URL(process.env.DATABASE_URL ?? '');
const pool = mysql.createPool({
  host: url.hostname,
  port: Number(url.port),
  user: decodeURIComponent(url.username),
  password: decodeURIComponent(url.password),
  database: url.pathname.slice(1),
  connectionLimit: 10,
  supportBigNumbers: true,
  bigNumberStrings: true,
});

/** The first page of each key shape of the page scenarios, as its statement: 21 rows say whether a next page follows. */
const FIRST_PAGES: Record<string, string> = {
  '/api/v1.0/raw-pages?key=item_id': 'select item_id, user_id, title, price, created_on from bench_pages order by item_id limit ?',
  '/api/v1.0/raw-pages?key=newest': 'select item_id, user_id, title, price, created_on from bench_pages order by created_on desc, item_id desc limit ?',
};

/**
 * The page after a key, as the generated server's statement after a cursor (runtime/lists/statement.ts: the keyset
 * condition written out term by term, each `?`): `after=ITEM_ID`, or `after_on=CREATED_ON&after_id=ITEM_ID`
 * newest first, the key's values sent as they are, nothing signed or checked.
 */
const DEEP_PAGES: Record<string, string> = {
  item_id: 'select item_id, user_id, title, price, created_on from bench_pages where (item_id > ?) order by item_id limit ?',
  newest:
    'select item_id, user_id, title, price, created_on from bench_pages where (created_on < ? or (created_on = ? and item_id < ?)) order by created_on desc, item_id desc limit ?',
};
const DEEP = /^\/api\/v1\.0\/raw-pages\?key=(item_id|newest)&(?:after=([0-9]+)|after_on=([0-9T:-]+)&after_id=([0-9]+))$/;

/** 20 rows of a page's 21 and whether a next page follows, as the first page's answer. */
function pageAnswer(statement: string, values: (string | number)[], response: ServerResponse): void {
  pool.execute(statement, values).then(
    ([rows]) => {
      const items = (rows as object[]).slice(0, 20);
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ items, next: (rows as object[]).length > 20 ? 'more' : null }));
    },
    () => response.writeHead(500, { 'content-type': 'application/json' }).end('{"message":"Internal error","status":500}'),
  );
}

/** An incoming X-Request-Id kept, as runtime/request-log.ts keeps one. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/**
 * The one-row GET with the duties docs/internals/contract.md gives every GET of a public resource, written as
 * directly as node:http allows: the request id kept or made and sent back, `id` checked as a whole number, the
 * security headers (runtime/security-headers.ts) with a public answer's Cache-Control, the strong ETag of the
 * text sent (runtime/conditional/tags.ts) and its 304. No framework, router, guard, log line or metrics: what is
 * left between this and the generated server is theirs (issue 46).
 */
function dutiesAnswer(request: IncomingMessage, response: ServerResponse, given: string): void {
  const incoming = request.headers['x-request-id'];
  const requestId = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
  response.setHeader('X-Request-Id', requestId);
  const id = /^[0-9]{1,15}$/.test(given) ? Number(given) : Number.NaN;
  if (Number.isNaN(id)) {
    response.writeHead(400, { 'content-type': 'application/json; charset=utf-8' }).end('{"message":"id is not a whole number","status":400}');
    return;
  }
  pool.execute('select item_id, title, price from bench_items where item_id = ?', [id]).then(
    ([rows]) => {
      const text = JSON.stringify({ catalog: rows });
      const tag = `"${hash('sha256', text, 'base64url').slice(0, 27)}"`;
      response.setHeader('Cache-Control', 'no-cache');
      response.setHeader('X-Content-Type-Options', 'nosniff');
      response.setHeader('X-Frame-Options', 'DENY');
      response.setHeader('Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'");
      response.setHeader('ETag', tag);
      if (request.headers['if-none-match'] === tag) {
        response.writeHead(304).end();
        return;
      }
      response.setHeader('Content-Type', 'application/json; charset=utf-8');
      response.setHeader('Content-Length', Buffer.byteLength(text));
      response.writeHead(200).end(text);
    },
    () => response.writeHead(500, { 'content-type': 'application/json' }).end('{"message":"Internal error","status":500}'),
  );
}

createServer((request, response) => {
  const duties = /^\/api\/v1\.0\/duties\/catalog\?id=([^&]*)$/.exec(request.url ?? '');
  if (duties) {
    dutiesAnswer(request, response, duties[1]!);
    return;
  }
  const deep = request.url?.startsWith('/api/v1.0/raw-pages?') ? DEEP.exec(request.url) : null;
  if (deep) {
    const [, key, after, at, id] = deep;
    const on = at?.replace('T', ' ') ?? '';
    pageAnswer(DEEP_PAGES[key!]!, key === 'item_id' ? [Number(after), 21] : [on, on, Number(id), 21], response);
    return;
  }
  const page = FIRST_PAGES[request.url ?? ''];
  if (page !== undefined) {
    pageAnswer(page, [21], response);
    return;
  }
  const match = /^\/api\/v1\.0\/catalog\?id=([0-9]+)$/.exec(request.url ?? '');
  if (!match) {
    response.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"Not found","status":404}');
    return;
  }
  pool.execute('select item_id, title, price from bench_items where item_id = ?', [Number(match[1])]).then(
    ([rows]) => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ catalog: rows })),
    () => response.writeHead(500, { 'content-type': 'application/json' }).end('{"message":"Internal error","status":500}'),
  );
}).listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write('ready\n'));
// Ends by exiting rather than by the signal, so that a profile asked for (--profile, --cpu-prof) is written.
process.once('SIGTERM', () => process.exit(0));
