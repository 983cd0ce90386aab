import jwt from 'jsonwebtoken';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { backends as demoBackends } from '../../generated/index.js';
import { connectTo } from '../../scripts/connection.js';
import { addPlainTextUser } from '../../scripts/schema.js';
import { backends as labBackends } from '../golden/lab/expected/index.js';
import { basic, decodeJwt, form, startServer, TEST_SECRET, type TestServer } from '../support/server.js';

/**
 * Contract §3, §4 and §5 over real HTTP against the real server and MariaDB:
 * the demo backends (shop: Bearer, staff: Basic) and the golden lab backend
 * (every backend.xml option away from its default).
 */
let server: TestServer;
let url: string;

const UTF8_USER = 'zoë';
const COLON_PASSWORD = 'pa:ss wörd:';

beforeAll(async () => {
  const connection = await connectTo(inject('databaseUrl'));
  // Plain-text rows, as systems before xmlrest stored them: the lab backend's own AuthQuery compares
  // $pass in SQL the way the seed shows, and the staff backend verifies them in constant time.
  await addPlainTextUser(connection, UTF8_USER, COLON_PASSWORD, ['staff', 'member']);
  await addPlainTextUser(connection, 'multi', 'multi-pass', ['customer', 'admin', 'member']);
  await connection.end();
  server = await startServer([...demoBackends, ...labBackends]);
  url = server.url;
});
afterAll(() => server.close());

async function call(path: string, init: RequestInit = {}) {
  const response = await fetch(url + path, init);
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: response.status, headers: response.headers, body: body as Record<string, unknown> };
}

async function shopToken(user: string, pass: string): Promise<string> {
  const { status, body } = await call('/shop/v1.0/token', { method: 'POST', ...form({ user, pass }) });
  expect(status).toBe(201);
  return body.token as string;
}

/** A token signed by hand; it names the shop backend, as every token xmlrest signs names its own, unless it says otherwise. */
function signed(payload: Record<string, unknown>, options: jwt.SignOptions = {}, secret = TEST_SECRET): string {
  return jwt.sign({ backend: 'shop', ...payload }, secret, { algorithm: 'HS256', noTimestamp: true, ...options });
}
const inAnHour = () => Math.floor(Date.now() / 1000) + 3600;

function withAuth(authorization: string, request: { body: string; headers: Record<string, string> }) {
  return { body: request.body, headers: { ...request.headers, authorization } };
}

const FORBIDDEN = { message: 'Forbidden access to resource', status: 403 };

describe('routing (docs/internals/contract.md §3)', () => {
  it('answers 404 JSON for an unknown path', async () => {
    const { status, body } = await call('/shop/v1.0/nothing');
    expect(status).toBe(404);
    expect(body).toEqual({ message: 'Not found', status: 404 });
  });

  it('answers 405 with Allow for a known path and another method', async () => {
    const { status, body, headers } = await call('/shop/v1.0/products', { method: 'DELETE' });
    expect(status).toBe(405);
    expect(body).toEqual({ message: 'Method DELETE not allowed', status: 405 });
    expect(headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    // In any spelling that reaches the resource: letter case and a trailing slash.
    const other = await call('/SHOP/v1.0/Products/', { method: 'DELETE' });
    expect({ status: other.status, allow: other.headers.get('allow') }).toEqual({ status: 405, allow: 'GET, HEAD, OPTIONS' });
  });

  it('routes before it authenticates: an unknown path with bad credentials is 404', async () => {
    const { status } = await call('/staff/v1.0/nothing', { headers: { authorization: basic('carol', 'wrong') } });
    expect(status).toBe(404);
  });

  it('answers a resource the same at its exact path, with a trailing slash, in other letter case and to HEAD', async () => {
    // The exact path goes straight to its handler (routes.ts); its loose spelling finds the same one.
    const exact = await call('/shop/v1.0/products');
    expect(exact.status).toBe(200);
    expect(Array.isArray(exact.body.products)).toBe(true);
    for (const path of ['/shop/v1.0/products/', '/SHOP/v1.0/Products']) {
      const { status, body } = await call(path);
      expect({ path, status, body }).toEqual({ path, status: 200, body: exact.body });
    }
    const head = await fetch(`${url}/shop/v1.0/products`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await head.text()).toBe('');
  });
  it('answers a route with every header set along its path, written at once by the front door; HEAD and 304 as ever', async () => {
    // The front door writes a route's text itself (front-door.ts, writeText): nothing it or the route set may be lost.
    const get = await fetch(`${url}/shop/v1.0/products`);
    const text = await get.text();
    const headers = Object.fromEntries(get.headers);
    expect(get.status).toBe(200);
    expect(headers).toMatchObject({
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(Buffer.byteLength(text)),
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
      'cache-control': expect.stringContaining('no-cache'),
      etag: expect.stringMatching(/^"[A-Za-z0-9_-]{27}"$/),
      'x-request-id': expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    expect(JSON.parse(text)).toHaveProperty('products');
    const head = await fetch(`${url}/shop/v1.0/products`, { method: 'HEAD' });
    expect({ length: head.headers.get('content-length'), etag: head.headers.get('etag'), body: await head.text() }).toEqual({
      length: headers['content-length'],
      etag: headers.etag,
      body: '',
    });
    const same = await fetch(`${url}/shop/v1.0/products`, { headers: { 'if-none-match': headers.etag! } });
    expect(same.status).toBe(304);
    expect(same.headers.get('etag')).toBe(headers.etag);
    expect(same.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(await same.text()).toBe('');
  });

  it('serves each version at its own path', async () => {
    const v1 = await call('/shop/v1.0/products');
    const v2 = await call('/shop/v2.0/products?max_price=10');
    expect(v1.status).toBe(200);
    expect((v1.body.products as unknown[]).length).toBeGreaterThanOrEqual(3);
    expect(v2.body.products).toEqual([expect.objectContaining({ name: 'Cup', price: '6.00' })]);
  });

  it('sets a request id on every response and keeps a sane incoming one', async () => {
    const fresh = await call('/shop/v1.0/products');
    expect(fresh.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const kept = await call('/shop/v1.0/nothing', { headers: { 'x-request-id': 'trace-42' } });
    expect(kept.headers.get('x-request-id')).toBe('trace-42');
    const replaced = await call('/shop/v1.0/products', { headers: { 'x-request-id': 'bad id; with spaces' } });
    expect(replaced.headers.get('x-request-id')).not.toContain('bad');
  });
});

describe('authentication and roles (docs/internals/contract.md §4), Basic backend', () => {
  it('lets a user with the role in, with $uid bound to their id', async () => {
    const { status, body } = await call('/staff/v1.0/me', { headers: { authorization: basic('carol', 'carol-pass') } });
    expect(status).toBe(200);
    expect(body.me).toEqual([expect.objectContaining({ user_id: 3, user_name: 'carol' })]);
  });

  it('answers 403 with the seed body when the Authorization header is absent', async () => {
    const { status, body, headers } = await call('/staff/v1.0/me');
    expect(status).toBe(403);
    expect(body).toEqual(FORBIDDEN);
    expect(headers.get('www-authenticate')).toBeNull();
  });

  it('answers 401 with a Basic challenge for a wrong password, never echoing it', async () => {
    const { status, body, headers } = await call('/staff/v1.0/me', { headers: { authorization: basic('carol', 'not-her-password') } });
    expect(status).toBe(401);
    expect(body).toEqual({ message: 'Invalid credentials', status: 401 });
    expect(headers.get('www-authenticate')).toBe('Basic realm="staff", charset="UTF-8"');
    expect(JSON.stringify(body)).not.toContain('not-her-password');
  });

  it('answers 401 for an unknown user, a malformed value and an empty header', async () => {
    for (const authorization of [
      basic('nobody', 'x'),
      'Basic !!!notbase64',
      'Basic ' + Buffer.from('no-colon').toString('base64'),
      '',
      'Basic',
      'Digest abc',
    ]) {
      const { status, body } = await call('/staff/v1.0/me', { headers: { authorization } });
      expect(status, authorization).toBe(401);
      expect(body.status).toBe(401);
    }
  });

  it('answers 403 when the user is authenticated but lacks the role', async () => {
    const { status, body } = await call('/staff/v1.0/me', { headers: { authorization: basic('dave', 'dave-pass') } });
    expect(status).toBe(403);
    expect(body).toEqual(FORBIDDEN);
  });

  it('accepts Basic with and without padding, any case of the scheme word, UTF-8 and colons in the password', async () => {
    for (const padding of [true, false]) {
      const header = basic(UTF8_USER, COLON_PASSWORD, { padding });
      expect(header.endsWith('=') || !padding).toBe(true);
      const { status, body } = await call('/staff/v1.0/me', { headers: { authorization: header } });
      expect(status).toBe(200);
      expect(body.me).toEqual([expect.objectContaining({ user_name: UTF8_USER })]);
    }
    const lower = basic('carol', 'carol-pass').replace('Basic', 'bAsIc');
    expect((await call('/staff/v1.0/me', { headers: { authorization: lower } })).status).toBe(200);
  });

  it('compares passwords exactly: no case folding, no trailing-space padding', async () => {
    for (const pass of ['CAROL-PASS', 'carol-pass ', 'carol-pass\t']) {
      expect((await call('/staff/v1.0/me', { headers: { authorization: basic('carol', pass) } })).status).toBe(401);
    }
  });

  it('treats a Bearer token on a Basic backend as wrong credentials', async () => {
    const token = await shopToken('carol', 'carol-pass');
    const { status, headers } = await call('/staff/v1.0/me', { headers: { authorization: `Bearer ${token}` } });
    expect(status).toBe(401);
    expect(headers.get('www-authenticate')).toContain('Basic realm="staff"');
  });

  it('checks authentication before parameters: no header and no parameters is 403, not 400', async () => {
    expect((await call('/staff/v1.0/notes', { method: 'POST' })).status).toBe(403);
    const missing = await call('/staff/v1.0/notes', { method: 'POST', headers: { authorization: basic('carol', 'carol-pass') } });
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ message: "Missing parameter 'title'", status: 400 });
  });
});

describe('authentication and roles (docs/internals/contract.md §4), Bearer backend', () => {
  it('accepts the token with and without the Bearer prefix, in any case', async () => {
    const token = await shopToken('alice', 'alice-pass');
    for (const authorization of [`Bearer ${token}`, token, `bearer ${token}`, `BEARER  ${token}`]) {
      const { status, body } = await call('/shop/v1.0/orders', { headers: { authorization } });
      expect(status, authorization.slice(0, 8)).toBe(200);
      expect(Array.isArray(body.orders)).toBe(true);
    }
  });

  it('answers 403 without a header, and ignores tokens in the query string or body', async () => {
    const token = await shopToken('alice', 'alice-pass');
    for (const path of ['/shop/v1.0/orders', `/shop/v1.0/orders?access_token=${token}`, `/shop/v1.0/orders?token=${token}`]) {
      const { status, body } = await call(path);
      expect(status).toBe(403);
      expect(body).toEqual(FORBIDDEN);
    }
    const inBody = await call('/shop/v1.0/orders', { method: 'POST', ...form({ access_token: token, token, product_id: '2', quantity: '1' }) });
    expect(inBody.status).toBe(403);
  });

  it('answers 403 when the token is valid but its audience lacks the role', async () => {
    const token = await shopToken('alice', 'alice-pass');
    const { status, body } = await call('/shop/v1.0/report', { headers: { authorization: `Bearer ${token}` } });
    expect(status).toBe(403);
    expect(body).toEqual(FORBIDDEN);
  });

  it('accepts an aud array when any member is the role', async () => {
    const token = signed({ sub: '2', aud: ['customer', 'admin'], iss: 'shop', exp: inAnHour() });
    expect((await call('/shop/v1.0/report', { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
  });

  const rejected: [string, () => string, string][] = [
    ['expired', () => signed({ sub: '1', aud: 'customer', iss: 'shop', exp: Math.floor(Date.now() / 1000) - 10 }), 'token expired'],
    [
      'signed with another secret',
      () => signed({ sub: '1', aud: 'customer', iss: 'shop', exp: inAnHour() }, {}, 'another-secret-another-secret-another'),
      'token signature is invalid',
    ],
    ['from another issuer', () => signed({ sub: '1', aud: 'customer', iss: 'lab-issuer', exp: inAnHour() }), 'token issuer is not accepted'],
    ['without exp', () => signed({ sub: '1', aud: 'customer', iss: 'shop' }), 'token has no expiry (exp)'],
    ['without sub', () => signed({ aud: 'customer', iss: 'shop', exp: inAnHour() }), 'token has no subject (sub)'],
    ['with a numeric aud', () => signed({ sub: '1', aud: 42, iss: 'shop', exp: inAnHour() }), 'token audience (aud) is missing or not a string'],
    [
      'with alg none',
      () => {
        const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
        return `${part({ alg: 'none', typ: 'JWT' })}.${part({ sub: '1', aud: 'customer', iss: 'shop', backend: 'shop', exp: inAnHour() })}.`;
      },
      'token algorithm is not HS256',
    ],
    ['signed HS512', () => signed({ sub: '1', aud: 'customer', iss: 'shop', exp: inAnHour() }, { algorithm: 'HS512' }), 'token algorithm is not HS256'],
    ['truncated', () => signed({ sub: '1', aud: 'customer', iss: 'shop', exp: inAnHour() }).slice(0, -5), 'token signature is invalid'],
    ['not a JWT', () => 'abc.def.ghi', 'token is malformed'],
    ['without the backend claim', () => signed({ sub: '1', aud: 'customer', iss: 'shop', exp: inAnHour(), backend: undefined }), 'token names no backend'],
    [
      'for another backend',
      () => signed({ sub: '1', aud: 'customer', iss: 'shop', exp: inAnHour(), backend: 'staff' }),
      'token was issued for another backend',
    ],
  ];
  it.each(rejected)('answers 401 invalid_token for a token %s', async (_name, make, description) => {
    const token = make();
    const { status, body, headers } = await call('/shop/v1.0/orders', { headers: { authorization: `Bearer ${token}` } });
    expect(status).toBe(401);
    expect(body).toEqual({ message: `Invalid token: ${description}`, status: 401 });
    expect(headers.get('www-authenticate')).toBe(`Bearer realm="shop", error="invalid_token", error_description="${description}"`);
    expect(JSON.stringify(body) + headers.get('www-authenticate')).not.toContain(token.slice(-20));
  });

  it('refuses a token that expires after the server verified it once (verified tokens are remembered, not their validity)', async () => {
    const token = signed({ sub: '1', aud: 'customer', iss: 'shop', exp: Math.floor(Date.now() / 1000) + 1 });
    expect((await call('/shop/v1.0/orders', { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    // The server runs in this process: its clock moves two seconds on, and only its clock (not its timers).
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + 2100);
      const { status, body } = await call('/shop/v1.0/orders', { headers: { authorization: `Bearer ${token}` } });
      expect(status).toBe(401);
      expect(body).toEqual({ message: 'Invalid token: token expired', status: 401 });
    } finally {
      vi.useRealTimers();
    }
  });

  it('treats Basic credentials on a Bearer backend as wrong credentials', async () => {
    const { status, headers } = await call('/shop/v1.0/orders', { headers: { authorization: basic('alice', 'alice-pass') } });
    expect(status).toBe(401);
    expect(headers.get('www-authenticate')).toMatch(/^Bearer realm="shop", error="invalid_token"/);
  });

  it('binds $uid to the token subject: a customer sees only their own orders', async () => {
    const alice = await shopToken('alice', 'alice-pass');
    // bob holds two roles: a shape A token carries both (shape B would carry the first row's only).
    const shapeA = await call('/shop/', { method: 'POST', ...form({ auth: 'bearer', userid: 'bob', password: 'bob-pass' }) });
    const bob = shapeA.body.token as string;
    const placed = await call('/shop/v1.0/orders', { method: 'POST', ...withAuth(`Bearer ${bob}`, form({ product_id: '2', quantity: '1' })) });
    expect(placed.status).toBe(201);
    const orderId = (placed.body.order as { insertId: number }).insertId;
    const aliceOrders = (await call('/shop/v1.0/orders', { headers: { authorization: `Bearer ${alice}` } })).body.orders as { order_id: number }[];
    const bobOrders = (await call('/shop/v1.0/orders', { headers: { authorization: `Bearer ${bob}` } })).body.orders as { order_id: number }[];
    expect(bobOrders.map((order) => order.order_id)).toContain(orderId);
    expect(aliceOrders.map((order) => order.order_id)).not.toContain(orderId);
  });

  it('ignores the Authorization header on a resource without auth', async () => {
    for (const authorization of ['Bearer garbage', basic('x', 'y'), 'Whatever']) {
      expect((await call('/shop/v1.0/products', { headers: { authorization } })).status).toBe(200);
    }
  });
});

describe('backend options (lab: absent_credentials=401, issuer, iat_unit=ms, lifetime, custom AuthQuery)', () => {
  it('answers 401 with a bare Bearer challenge when the header is absent', async () => {
    const { status, headers, body } = await call('/lab/v1.0/whoami');
    expect(status).toBe(401);
    expect(body).toEqual({ message: 'Credentials required', status: 401 });
    expect(headers.get('www-authenticate')).toBe('Bearer realm="lab"');
  });

  it('issues tokens with its issuer, milliseconds iat and its lifetime, through an aliased class name', async () => {
    const before = Date.now();
    const { status, body } = await call('/lab/v1.0/token', { method: 'POST', ...form({ user: UTF8_USER, pass: COLON_PASSWORD }) });
    expect(status).toBe(201);
    const { payload } = decodeJwt(body.token as string);
    expect(payload.iss).toBe('lab-issuer');
    expect(payload.iat).toBeGreaterThanOrEqual(before);
    expect(payload.exp).toBe(Math.floor((payload.iat as number) / 1000) + 60);
    const me = await call('/lab/v2.0/whoami', { headers: { authorization: `Bearer ${body.token as string}` } });
    expect(me.status).toBe(200);
    expect(me.body.me).toEqual([{ uid: payload.sub, version: 2 }]);
  });

  it('refuses a shop token: the issuer differs', async () => {
    const token = await shopToken('multi', 'multi-pass');
    const { status, headers } = await call('/lab/v1.0/whoami', { headers: { authorization: token } });
    expect(status).toBe(401);
    expect(headers.get('www-authenticate')).toContain('error_description="token issuer is not accepted"');
  });

  it('shape A uses the custom AuthQuery and puts every role in aud', async () => {
    const { status, body } = await call('/lab/', { method: 'POST', ...form({ auth: 'bearer', userid: 'multi', password: 'multi-pass' }) });
    expect(status).toBe(200);
    expect(decodeJwt(body.token as string).payload.aud).toEqual(['admin', 'customer', 'member']);
  });
});

describe('tokens (docs/internals/contract.md §5)', () => {
  it('shape B answers 201 {token} with the seed claims', async () => {
    const before = Math.floor(Date.now() / 1000);
    const { status, body } = await call('/shop/v1.0/token', { method: 'POST', ...form({ user: 'alice', pass: 'alice-pass' }) });
    expect(status).toBe(201);
    expect(Object.keys(body)).toEqual(['token']);
    const { header, payload } = decodeJwt(body.token as string);
    expect(header).toEqual({ alg: 'HS256', typ: 'JWT' });
    expect(payload).toEqual({
      sub: '1',
      aud: 'customer',
      iss: 'shop',
      backend: 'shop',
      iat: expect.any(Number),
      exp: expect.any(Number),
      jti: expect.any(String),
    });
    expect(payload.iat).toBeGreaterThanOrEqual(before);
    expect(payload.exp).toBe((payload.iat as number) + 3600);
    expect(payload.jti).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('shape B gives a new jti each time and accepts a JSON body', async () => {
    const first = await call('/shop/v1.0/token', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ user: 'alice', pass: 'alice-pass' }),
    });
    const second = await shopToken('alice', 'alice-pass');
    expect(first.status).toBe(201);
    expect(decodeJwt(first.body.token as string).payload.jti).not.toBe(decodeJwt(second).payload.jti);
  });

  it('shape B carries the role of the first row only, as the seed wrote it', async () => {
    const token = await shopToken('bob', 'bob-pass');
    expect(typeof decodeJwt(token).payload.aud).toBe('string');
  });

  it('shape B answers 401 Invalid credentials and 400 for a missing field', async () => {
    const wrong = await call('/shop/v1.0/token', { method: 'POST', ...form({ user: 'alice', pass: 'nope' }) });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toEqual({ message: 'Invalid credentials', status: 401 });
    const missing = await call('/shop/v1.0/token', { method: 'POST', ...form({ user: 'alice' }) });
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ message: "Missing parameter 'pass'", status: 400 });
  });

  it('shape A answers 200 {token, type} with and without the trailing slash', async () => {
    for (const path of ['/shop/', '/shop']) {
      const { status, body } = await call(path, { method: 'POST', ...form({ auth: 'bearer', userid: 'alice', password: 'alice-pass' }) });
      expect(status).toBe(200);
      expect(body.type).toBe('Bearer');
      expect(decodeJwt(body.token as string).payload).toMatchObject({ sub: '1', aud: 'customer', iss: 'shop' });
    }
  });

  it('shape A puts every role in aud, so one token opens every resource the user may call', async () => {
    const { body } = await call('/shop/', { method: 'POST', ...form({ auth: 'bearer', userid: 'bob', password: 'bob-pass' }) });
    const token = body.token as string;
    expect(decodeJwt(token).payload.aud).toEqual(expect.arrayContaining(['admin', 'customer']));
    expect((await call('/shop/v1.0/report', { headers: { authorization: token } })).status).toBe(200);
    expect((await call('/shop/v1.0/orders', { headers: { authorization: token } })).status).toBe(200);
  });

  it('shape A answers 401 for wrong credentials, 400 for another auth value or a missing field', async () => {
    const wrong = await call('/shop/', { method: 'POST', ...form({ auth: 'bearer', userid: 'alice', password: 'x' }) });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toEqual({ message: 'Invalid credentials', status: 401 });
    const basicAuth = await call('/shop/', { method: 'POST', ...form({ auth: 'basic', userid: 'alice', password: 'alice-pass' }) });
    expect(basicAuth.status).toBe(400);
    expect(basicAuth.body).toEqual({ message: "Parameter 'auth' must be 'bearer'", status: 400 });
    const missing = await call('/shop/', { method: 'POST', ...form({ auth: 'bearer', userid: 'alice' }) });
    expect(missing.body).toEqual({ message: "Missing parameter 'password'", status: 400 });
    const inQuery = await call('/shop/?auth=bearer&userid=alice&password=alice-pass', { method: 'POST' });
    expect(inQuery.status).toBe(400);
  });

  it('serves no shape A on a Basic backend', async () => {
    expect((await call('/staff/', { method: 'POST', ...form({ auth: 'bearer', userid: 'carol', password: 'carol-pass' }) })).status).toBe(404);
  });
});

describe('execution (docs/internals/contract.md §2, §3)', () => {
  it('takes parameters from the query string and the body; the body wins', async () => {
    const query = await call('/lab/v1.0/echo?a=1&b=two');
    expect(query.body.echo).toEqual([{ a: '1', b: 'two', lit$eral: '$notparam', dq: "it's $x" }]);
    const json = await call('/lab/v1.0/echo?a=query', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ a: 'body' }) });
    expect(json.body.posted).toEqual([{ a: 'body' }]);
    const formBody = await call('/lab/v1.0/echo?a=query', { method: 'POST', ...form({ a: 'form' }) });
    expect(formBody.body.posted).toEqual([{ a: 'form' }]);
  });

  it('binds values as parameters, never as SQL text', async () => {
    const attack = "x' union select user_name, pass_word from usr -- ";
    const { status, body } = await call(`/lab/v1.0/echo?a=${encodeURIComponent(attack)}&b=1`);
    expect(status).toBe(200);
    expect(body.echo).toEqual([expect.objectContaining({ a: attack })]);
  });

  it('reads earlier steps; a row that does not exist reads as null', async () => {
    const { status, body } = await call('/lab/v1.0/steps');
    expect(status).toBe(200);
    expect(body).toEqual({ second: [{ second_n: 8, missing: null }] });
  });

  it('answers a write step with affectedRows and insertId, and 409 for a duplicate key', async () => {
    const title = `note-${Date.now()}`;
    const headers = { authorization: basic('carol', 'carol-pass') };
    const first = await call('/staff/v1.0/notes', {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ title, body: 'hello' }),
    });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({ note: { affectedRows: 1, insertId: expect.any(Number) } });
    const again = await call('/staff/v1.0/notes', {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ title, body: 'again' }),
    });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ message: 'Conflict: a row with this key already exists', status: 409 });
  });

  it('answers 400 when a column rejects a value', async () => {
    const token = await shopToken('alice', 'alice-pass');
    // A whole number the parameter check accepts, but INT cannot hold once subtracted from the stock.
    const { status, body } = await call('/shop/v1.0/orders', { method: 'POST', ...withAuth(token, form({ product_id: '2', quantity: '3000000000' })) });
    expect(status).toBe(400);
    expect(body).toEqual({ message: 'A value was rejected by the database: check the parameters', status: 400 });
  });

  it('checks parameters against the columns they meet before any step runs ', async () => {
    const token = await shopToken('alice', 'alice-pass');
    const cases: [string, RequestInit, string][] = [
      ['/shop/v2.0/products?max_price=cheap', {}, "Parameter 'max_price' must be a decimal number"],
      [
        '/shop/v1.0/orders',
        { method: 'POST', ...withAuth(token, form({ product_id: 'abc', quantity: '1' })) },
        "Parameter 'product_id' must be a whole number, 0 or more",
      ],
      [
        '/shop/v1.0/orders',
        { method: 'POST', ...withAuth(token, form({ product_id: '-1', quantity: '1' })) },
        "Parameter 'product_id' must be a whole number, 0 or more",
      ],
      ['/shop/v1.0/orders', { method: 'POST', ...withAuth(token, form({ product_id: '1', quantity: '1.5' })) }, "Parameter 'quantity' must be a whole number"],
      [
        '/shop/v1.0/orders',
        { method: 'POST', headers: { authorization: token, 'content-type': 'application/json' }, body: JSON.stringify({ product_id: 1, quantity: null }) },
        "Parameter 'quantity' must not be null",
      ],
      [
        '/staff/v1.0/notes',
        {
          method: 'POST',
          headers: { authorization: basic('carol', 'carol-pass'), 'content-type': 'application/json' },
          body: JSON.stringify({ title: 'x'.repeat(101), body: 'b' }),
        },
        "Parameter 'title' must be at most 100 characters",
      ],
    ];
    for (const [path, init, message] of cases) {
      const { status, body } = await call(path, init);
      expect(body, path).toEqual({ message, status: 400 });
      expect(status).toBe(400);
    }
    // A JSON number and a string both do where the column is INT.
    const ok = await call('/shop/v1.0/orders', {
      method: 'POST',
      headers: { authorization: token, 'content-type': 'application/json' },
      body: JSON.stringify({ product_id: 2, quantity: '1' }),
    });
    expect(ok.status).toBe(201);
  });

  it('rolls back every step when a later step fails', async () => {
    const token = await shopToken('alice', 'alice-pass');
    const stockOf = async () =>
      ((await call('/shop/v1.0/products')).body.products as { product_id: number; stock: number }[]).find((p) => p.product_id === 3)!.stock;
    const before = await stockOf();
    // quantity -2 raises the stock (step 1 succeeds), then the order's check constraint refuses it (step 2 fails).
    const { status, body } = await call('/shop/v1.0/orders', { method: 'POST', ...withAuth(token, form({ product_id: '3', quantity: '-2' })) });
    expect(status).toBe(400);
    expect(body).toEqual({ message: 'A value was rejected by the database: check the parameters', status: 400 });
    expect(await stockOf()).toBe(before);
    // An order for more than the stock fails in step 1: nothing is written either.
    const tooMany = await call('/shop/v1.0/orders', { method: 'POST', ...withAuth(token, form({ product_id: '3', quantity: '1000' })) });
    expect(tooMany.status).toBe(400);
    expect(await stockOf()).toBe(before);
    // A successful order commits both steps.
    const ok = await call('/shop/v1.0/orders', { method: 'POST', ...withAuth(token, form({ product_id: '3', quantity: '1' })) });
    expect(ok.status).toBe(201);
    expect(ok.body.placed).toEqual([{ order_id: (ok.body.order as { insertId: number }).insertId, product_id: 3, quantity: 1 }]);
    expect(await stockOf()).toBe(before - 1);
  });

  it('answers 409 for a foreign-key violation', async () => {
    const token = await shopToken('alice', 'alice-pass');
    const { status, body } = await call('/shop/v1.0/orders', { method: 'POST', ...withAuth(token, form({ product_id: '999', quantity: '1' })) });
    expect(status).toBe(409);
    expect(body.status).toBe(409);
  });

  it('answers a database failure with 500, a request id, and nothing of the SQL', async () => {
    const { status, body, headers } = await call('/lab/v1.0/broken');
    expect(status).toBe(500);
    expect(body).toEqual({ message: 'Internal error', status: 500, requestId: headers.get('x-request-id') });
    expect(JSON.stringify(body)).not.toMatch(/no_such_table|secret_column/);
  });
});

describe('bad requests never give 500 and never crash the server', () => {
  const cases: [string, string, RequestInit][] = [
    ['malformed JSON', '/lab/v1.0/echo', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":' }],
    ['a JSON array body', '/lab/v1.0/echo', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '[1,2]' }],
    ['a JSON string body', '/lab/v1.0/echo', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '"a"' }],
    ['an object parameter', '/lab/v1.0/echo', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":{"b":1}}' }],
    ['an array parameter', '/lab/v1.0/echo', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":[1]}' }],
    ['a repeated query key', '/lab/v1.0/echo?a=1&a=2&b=3', {}],
    ['an unsupported body type', '/lab/v1.0/echo', { method: 'POST', headers: { 'content-type': 'text/xml' }, body: '<a/>' }],
    [
      'a body over the limit',
      '/lab/v1.0/echo',
      { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ a: 'x'.repeat(2 * 1024 * 1024) }) },
    ],
    ['a prototype key', '/lab/v1.0/echo', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"__proto__":{"a":1}}' }],
    ['non-UTF-8 Basic credentials', '/staff/v1.0/me', { headers: { authorization: 'Basic ' + Buffer.from([0xff, 0xfe, 0x3a, 0x41]).toString('base64') } }],
    ['a huge bearer token', '/shop/v1.0/orders', { headers: { authorization: 'Bearer ' + 'a'.repeat(6000) + '.b.c' } }],
  ];
  it.each(cases)('%s', async (_name, path, init) => {
    const { status, body } = await call(path, init);
    expect(status).toBeGreaterThanOrEqual(400);
    expect(status).toBeLessThan(500);
    expect(body).toEqual({ message: expect.any(String), status });
    expect((await call('/shop/v1.0/products')).status).toBe(200);
  });

  it('a body with a broken Content-Encoding is a 400, not a 500', async () => {
    for (const encoding of ['gzip', 'deflate', 'br']) {
      const { status, body } = await call('/lab/v1.0/echo', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-encoding': encoding },
        body: 'this is not compressed',
      });
      expect(status, encoding).toBe(400);
      expect(body).toEqual({ message: 'Malformed request body', status: 400 });
    }
  });

  it('shape A refuses JSON null credentials instead of looking up the user "null"', async () => {
    const { status, body } = await call('/shop/', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ auth: 'bearer', userid: null, password: null }),
    });
    expect(status).toBe(400);
    expect(body).toEqual({ message: "Parameter 'userid' must not be null", status: 400 });
  });
});
