/**
 * CEILING, NOT GENERATED: node:http and mysql2 alone, for the public SELECT
 * and for keyset pages of bench_pages (issue 31: 20 rows and whether another
 * page follows, with no cursor signed), the first and one after a key given in
 * the query string (issue 46: the page after 900,000 rows): about as fast as
 * Node serves these routes on this machine. `/api/v1.0/duties/catalog` is the
 * same SELECT with what the contract asks of every GET and nothing else, and
 * `/api/v1.0/duties/page` the safe backend's 10 KB page so (`dutiesAnswer`):
 * what those duties cost on bare node:http, and what a digest's 304 saves.
 */
import { hash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { poolFromEnv, REQUEST_ID, SECURITY_HEADERS } from './by-hand.js';

const pool = poolFromEnv();

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

/**
 * A GET with the duties docs/internals/contract.md gives every GET of a public resource, written as directly as
 * node:http allows: the request id kept or made and sent back, the security headers (runtime/security-headers.ts)
 * with a public answer's Cache-Control, the strong ETag of the text sent (runtime/conditional/tags.ts) and the 304
 * when If-None-Match holds it. No framework, router, guard, log line or metrics: what is left between this and the
 * generated server is theirs (issue 46). The 10 KB page's 304 against its 200 is what a digest's 304 saves on bare
 * node:http (issue 44).
 */
function dutiesAnswer(request: IncomingMessage, response: ServerResponse, statement: string, values: number[], key: string): void {
  pool.execute(statement, values).then(
    ([rows]) => {
      const text = JSON.stringify({ [key]: rows });
      const tag = `"${hash('sha256', text, 'base64url').slice(0, 27)}"`;
      response.setHeader('Cache-Control', 'no-cache');
      for (const [name, value] of SECURITY_HEADER_LIST) response.setHeader(name, value);
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

/** The security headers as pairs, walked without an iterator of the object's keys on every request (as runtime/front-door.ts). */
const SECURITY_HEADER_LIST = Object.entries(SECURITY_HEADERS);

const DUTIES = /^\/api\/v1\.0\/duties\/(catalog\?id=([^&]*)|page)$/;

/** The duties' routes: the one-row GET, its `id` checked as a whole number, and bench/resources/safe/page.xml's 10 KB. */
function duties(request: IncomingMessage, response: ServerResponse, route: string, id: string | undefined): void {
  const incoming = request.headers['x-request-id'];
  response.setHeader('X-Request-Id', typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID());
  if (route === 'page') {
    dutiesAnswer(request, response, 'select item_id, user_id, title, price, created_on from bench_pages where item_id <= 100 order by item_id', [], 'rows');
    return;
  }
  if (id === undefined || !/^[0-9]{1,15}$/.test(id)) {
    response.writeHead(400, { 'content-type': 'application/json; charset=utf-8' }).end('{"message":"id is not a whole number","status":400}');
    return;
  }
  dutiesAnswer(request, response, 'select item_id, title, price from bench_items where item_id = ?', [Number(id)], 'catalog');
}

createServer((request, response) => {
  // The ceiling's own routes pay a prefix test for these, not their expression.
  const withDuties = request.url?.startsWith('/api/v1.0/duties/') ? DUTIES.exec(request.url) : null;
  if (withDuties) {
    duties(request, response, withDuties[1] === 'page' ? 'page' : 'catalog', withDuties[2]);
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
