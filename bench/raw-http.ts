/**
 * CEILING, NOT GENERATED: node:http and mysql2 alone, for the public SELECT:
 * about as fast as Node serves this route on this machine.
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

createServer((request, response) => {
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
