/**
 * CEILING, NOT GENERATED: node:http and mysql2 alone, for the public SELECT
 * and for keyset pages of bench_pages (issue 31: 20 rows and whether another
 * page follows, with no cursor signed), the first and one after a key given in
 * the query string (issue 46: the page after 900,000 rows): about as fast as
 * Node serves these routes on this machine.
 */
import { createServer, type ServerResponse } from 'node:http';
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

createServer((request, response) => {
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
