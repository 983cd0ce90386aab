/**
 * CEILING, NOT GENERATED: node:http and mysql2 alone, for the public SELECT
 * and for the first keyset page of bench_pages (issue 31: 20 rows and whether
 * another page follows, with no cursor signed): about as fast as Node serves
 * these routes on this machine.
 */
import { createServer } from 'node:http';
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

createServer((request, response) => {
  const page = FIRST_PAGES[request.url ?? ''];
  if (page !== undefined) {
    pool.execute(page, [21]).then(
      ([rows]) => {
        const items = (rows as object[]).slice(0, 20);
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ items, next: (rows as object[]).length > 20 ? 'more' : null }));
      },
      () => response.writeHead(500, { 'content-type': 'application/json' }).end('{"message":"Internal error","status":500}'),
    );
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
