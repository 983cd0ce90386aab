/**
 * BASELINE, NOT GENERATED: the benchmark's routes written by hand the way a
 * careful engineer would with the same stack (Koa, @koa/router,
 * koa-bodyparser, mysql2, jsonwebtoken with a KeyObject): the same checks
 * (auth, role, parameter types, transaction) and the same answers as the
 * generated server, so that the two can be compared request for request.
 */
import { createSecretKey, randomUUID } from 'node:crypto';
import Router from '@koa/router';
import jwt from 'jsonwebtoken';
import Koa from 'koa';
import bodyParser from 'koa-bodyparser';
import type mysql from 'mysql2/promise';
import type { ErrorBody } from '../runtime/contract.js';
import { poolFromEnv, SECURITY_HEADERS } from './by-hand.js';

const pool = poolFromEnv({ timezone: 'Z' });
const key = createSecretKey(Buffer.from(process.env.JWT_SECRET ?? '', 'utf8'));
const AUTH_SQL = `select cast(u.user_id as char) as sub, r.role_name as aud
from usr_role r inner join usr u on r.user_id = u.user_id
where u.user_name = ? and u.pass_word = ?`;
const ITEMS_SQL = 'select item_id, title, price from bench_items where user_id = ? order by item_id limit 10';

class Failure extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

const app = new Koa();
app.use(async (ctx, next) => {
  ctx.set('X-Request-Id', randomUUID());
  try {
    await next();
    if (ctx.status === 404 && ctx.body === undefined) throw new Failure(404, 'Not found');
  } catch (error) {
    let body: ErrorBody;
    if (error instanceof Failure) {
      ctx.set(error.headers);
      body = { message: error.message, status: error.status };
    } else if ((error as { status?: number }).status === 400) {
      body = { message: 'Malformed request body', status: 400 };
    } else {
      body = { message: 'Internal error', status: 500 };
    }
    ctx.status = body.status;
    ctx.body = body;
  }
});
// The security headers an API needs (OWASP's REST Security Cheat Sheet), as the generated server sends them.
app.use((ctx, next) => {
  ctx.set({
    'Cache-Control': 'no-store',
    ...SECURITY_HEADERS,
  });
  // HSTS only over HTTPS (RFC 6797 §7.2), as the generated server sends it.
  if (ctx.secure) ctx.set('Strict-Transport-Security', 'max-age=31536000; includeSubDomains');
  return next();
});
app.use(bodyParser({ enableTypes: ['json', 'form'] }));

function field(ctx: Koa.Context, name: string): string {
  const body = ctx.request.body as Record<string, unknown> | undefined;
  const value = body?.[name] ?? ctx.query[name];
  if (typeof value !== 'string' && typeof value !== 'number') throw new Failure(400, `Missing parameter '${name}'`);
  return String(value);
}

function wholeNumber(ctx: Koa.Context, name: string): number {
  const value = field(ctx, name);
  if (!/^[0-9]+$/.test(value)) throw new Failure(400, `Parameter '${name}' must be a whole number, 0 or more`);
  return Number(value);
}

function bearer(ctx: Koa.Context, role: string): string {
  const header = ctx.get('Authorization');
  if (!header) throw new Failure(403, 'Forbidden access to resource');
  const token = header.startsWith('Bearer ') ? header.slice(7) : header;
  let payload: jwt.JwtPayload;
  try {
    payload = jwt.verify(token, key, { algorithms: ['HS256'], issuer: 'api' }) as jwt.JwtPayload;
  } catch {
    throw new Failure(401, 'Invalid token', { 'WWW-Authenticate': 'Bearer realm="api", error="invalid_token"' });
  }
  // The same binding as xmlrest's: a token names the backend that signed it.
  if (typeof payload.exp !== 'number' || typeof payload.sub !== 'string' || payload.backend !== 'api') throw new Failure(401, 'Invalid token');
  const audience = Array.isArray(payload.aud) ? payload.aud : [payload.aud];
  if (!audience.includes(role)) throw new Failure(403, 'Forbidden access to resource');
  return payload.sub;
}

async function basic(ctx: Koa.Context, role: string): Promise<string> {
  const header = ctx.get('Authorization');
  if (!header) throw new Failure(403, 'Forbidden access to resource');
  const decoded = Buffer.from(header.replace(/^Basic /i, ''), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon === -1) throw new Failure(401, 'Invalid credentials');
  const [rows] = await pool.execute(
    'select r.user_id, r.role_name from usr_role r inner join usr u on r.user_id = u.user_id where u.user_name = ? and u.pass_word = ?',
    [decoded.slice(0, colon), decoded.slice(colon + 1)],
  );
  const roles = rows as { user_id: number; role_name: string }[];
  if (roles.length === 0) throw new Failure(401, 'Invalid credentials', { 'WWW-Authenticate': 'Basic realm="basic"' });
  const granted = roles.find((row) => row.role_name === role);
  if (!granted) throw new Failure(403, 'Forbidden access to resource');
  return String(granted.user_id);
}

function sign(sub: string, aud: string | string[]): string {
  const now = Math.floor(Date.now() / 1000);
  return jwt.sign({ sub, aud, iss: 'api', backend: 'api', iat: now, exp: now + 3600, jti: randomUUID() }, key, { algorithm: 'HS256' });
}

const router = new Router();
router.get('/api/v1.0/catalog', async (ctx) => {
  const id = wholeNumber(ctx, 'id');
  const [rows] = await pool.execute('select item_id, title, price from bench_items where item_id = ?', [id]);
  ctx.body = { catalog: rows };
});
// The Bearer GET's ceiling: the same statement for the same rows, with no authentication at all.
router.get('/api/v1.0/items-of', async (ctx) => {
  const [rows] = await pool.execute(ITEMS_SQL, [wholeNumber(ctx, 'uid')]);
  ctx.body = { items: rows };
});
router.get('/api/v1.0/my-items', async (ctx) => {
  const uid = bearer(ctx, 'member');
  const [rows] = await pool.execute(ITEMS_SQL, [uid]);
  ctx.body = { items: rows };
});
router.post('/api/v1.0/my-items', async (ctx) => {
  const uid = bearer(ctx, 'member');
  const title = field(ctx, 'title');
  if (title.length > 100) throw new Failure(400, "Parameter 'title' must be at most 100 characters");
  const price = field(ctx, 'price');
  if (!/^-?[0-9]+(\.[0-9]*)?$/.test(price)) throw new Failure(400, "Parameter 'price' must be a decimal number");
  const connection = await pool.getConnection();
  try {
    await connection.beginTransaction();
    const [header] = await connection.execute('insert into bench_items (user_id, title, price) values (?, ?, ?)', [uid, title, price]);
    const { affectedRows, insertId } = header as mysql.ResultSetHeader;
    const [item] = await connection.execute('select item_id, title, price from bench_items where item_id = ?', [insertId]);
    await connection.commit();
    ctx.status = 201;
    ctx.body = { added: { affectedRows, insertId }, item };
  } catch (error) {
    await connection.rollback();
    throw error;
  } finally {
    connection.release();
  }
});
router.post('/api/v1.0/token', async (ctx) => {
  const [rows] = await pool.execute(AUTH_SQL, [field(ctx, 'user'), field(ctx, 'pass')]);
  const first = (rows as { sub: string; aud: string }[])[0];
  if (!first) throw new Failure(401, 'Invalid credentials');
  ctx.status = 201;
  ctx.body = { token: sign(first.sub, first.aud) };
});
router.post('/api/', async (ctx) => {
  if (field(ctx, 'auth').toLowerCase() !== 'bearer') throw new Failure(400, "Parameter 'auth' must be 'bearer'");
  const [rows] = await pool.execute(AUTH_SQL, [field(ctx, 'userid'), field(ctx, 'password')]);
  const found = rows as { sub: string; aud: string }[];
  if (found.length === 0) throw new Failure(401, 'Invalid credentials');
  const roles = [...new Set(found.map((row) => row.aud))];
  ctx.body = { token: sign(found[0]!.sub, roles.length === 1 ? roles[0]! : roles), type: 'Bearer' };
});
router.get('/basic/v1.0/my-items', async (ctx) => {
  const uid = await basic(ctx, 'member');
  const [rows] = await pool.execute(ITEMS_SQL, [uid]);
  ctx.body = { items: rows };
});
app.use(router.routes());
app.listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write('ready\n'));
