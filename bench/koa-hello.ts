/**
 * CEILING, NOT GENERATED: Koa and @koa/router answering without a database: the framework's own cost. And
 * `/api/v1.0/duties/catalog`: the one-row public GET with the duties the contract gives every GET (bench/raw-http.ts
 * has the same on bare node:http), in a Koa handler as a well-made Koa API would write it: what Koa adds to them.
 */
import { hash, randomUUID } from 'node:crypto';
import Router from '@koa/router';
import Koa from 'koa';
import { poolFromEnv, REQUEST_ID, SECURITY_HEADERS } from './by-hand.js';

const pool = poolFromEnv();

const app = new Koa();
const router = new Router();
router.get('/api/v1.0/catalog', (ctx) => {
  ctx.body = { catalog: [{ item_id: 1, title: 'hello', price: '1.00' }] };
});
router.get('/api/v1.0/duties/catalog', async (ctx) => {
  const incoming = ctx.get('x-request-id');
  ctx.set('X-Request-Id', REQUEST_ID.test(incoming) ? incoming : randomUUID());
  const given = ctx.query.id;
  if (typeof given !== 'string' || !/^[0-9]{1,15}$/.test(given)) ctx.throw(400, 'id is not a whole number');
  const [rows] = await pool.execute('select item_id, title, price from bench_items where item_id = ?', [Number(given)]);
  const text = JSON.stringify({ catalog: rows });
  ctx.set({ 'Cache-Control': 'no-cache', ...SECURITY_HEADERS });
  ctx.type = 'application/json; charset=utf-8';
  ctx.etag = hash('sha256', text, 'base64url').slice(0, 27);
  ctx.body = text;
  if (ctx.fresh) ctx.status = 304;
});
app.use(router.routes());
app.listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write('ready\n'));
process.once('SIGTERM', () => process.exit(0));
