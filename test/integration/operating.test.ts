import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BuiltServer, startBuiltServer } from '../support/built-server.js';
import { basicHeader, formBody, send } from '../support/http.js';

/**
 * Running it in production (docs/internals/contract.md §7): health and readiness on both ports, Prometheus metrics on
 * the admin port only, one JSON log line per request with the fields an operator needs and no secret, the
 * request id kept or made. Against the built server, as an operator runs it.
 */
let server: BuiltServer;
const PASSWORD = 'alice-pass';
let token = '';

beforeAll(async () => {
  server = await startBuiltServer({ env: { ADMIN_PORT: '0' } });
  token = (await send(`${server.url}/shop/v1.0/token`, { method: 'POST', ...formBody({ user: 'alice', pass: PASSWORD }) })).json() as never;
  token = (token as unknown as { token: string }).token;
});
afterAll(() => server.stop());

describe('health and readiness', () => {
  it('answers /healthz and /readyz on the main port and the admin port', async () => {
    for (const base of [server.url, server.adminUrl]) {
      const health = await send(`${base}/healthz`);
      expect([health.status, health.json()]).toEqual([200, { status: 'ok' }]);
      const ready = await send(`${base}/readyz`);
      expect([ready.status, ready.json()]).toEqual([200, { status: 'ready' }]);
    }
  });

  it('serves /metrics on the admin port only', async () => {
    expect((await send(`${server.url}/metrics`)).status).toBe(404);
    const metrics = await send(`${server.adminUrl}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.headers['content-type']).toMatch(/^text\/plain/);
  });
});

describe('metrics', () => {
  it('count requests by backend, resource, method and status, time them, count refusals by reason, and show the pool and the process', async () => {
    await send(`${server.url}/shop/v1.0/products`);
    await send(`${server.url}/shop/v1.0/orders`);
    await send(`${server.url}/shop/v1.0/report`, { headers: { authorization: `Bearer ${token}` } });
    await send(`${server.url}/staff/v1.0/me`, { headers: { authorization: basicHeader('carol', 'wrong-password') } });
    const text = (await send(`${server.adminUrl}/metrics`)).text;
    expect(text).toMatch(/^xmlrest_http_requests_total\{backend="shop",resource="products@1.0",method="GET",status="200"\} [1-9]/m);
    expect(text).toMatch(/^xmlrest_http_request_duration_seconds_bucket\{le="0.1",backend="shop",resource="products@1.0",method="GET"\} [1-9]/m);
    expect(text).toMatch(/^xmlrest_auth_failures_total\{reason="no_credentials"\} [1-9]/m);
    expect(text).toMatch(/^xmlrest_auth_failures_total\{reason="role_not_held"\} [1-9]/m);
    expect(text).toMatch(/^xmlrest_auth_failures_total\{reason="bad_password"\} [1-9]/m);
    expect(text).toMatch(/^xmlrest_db_pool_connections_in_use [0-9]/m);
    expect(text).toMatch(/^xmlrest_db_pool_connections_idle [0-9]/m);
    expect(text).toMatch(/^xmlrest_db_pool_requests_queued [0-9]/m);
    expect(text).toMatch(/^process_resident_memory_bytes [1-9]/m);
  });
});

describe('the request log', () => {
  const lineOf = (requestId: string) => server.logs.find((line) => line.msg === 'request' && line.requestId === requestId);

  it('writes one JSON line per request with its id, route, status, duration, user and refusal reason', async () => {
    const ok = await send(`${server.url}/shop/v1.0/orders`, { headers: { authorization: `Bearer ${token}`, 'x-request-id': 'trace-123.abc' } });
    expect(ok.headers['x-request-id']).toBe('trace-123.abc');
    const refused = await send(`${server.url}/shop/v1.0/orders`);
    const wrong = await send(`${server.url}/staff/v1.0/me`, { headers: { authorization: basicHeader('carol', 'not-her-password') } });
    await expect.poll(() => lineOf(String(wrong.headers['x-request-id']))).toBeDefined();
    expect(lineOf('trace-123.abc')).toMatchObject({
      level: 'info',
      method: 'GET',
      path: '/shop/v1.0/orders',
      status: 200,
      backend: 'shop',
      resource: 'orders@1.0',
      userId: '1',
      ms: expect.any(Number),
    });
    expect(lineOf(String(refused.headers['x-request-id']))).toMatchObject({ status: 403, reason: 'no_credentials' });
    expect(lineOf(String(wrong.headers['x-request-id']))).toMatchObject({ status: 401, reason: 'bad_password', backend: 'staff' });
  });

  it('makes a request id when the incoming one is malformed', async () => {
    const response = await send(`${server.url}/shop/v1.0/products`, { headers: { 'x-request-id': 'no spaces or ${} allowed' } });
    expect(response.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('never holds a password, a token or an Authorization value', async () => {
    const issued = await send(`${server.url}/shop/`, { method: 'POST', ...formBody({ auth: 'bearer', userid: 'bob', password: 'bob-pass' }) });
    const basic = await send(`${server.url}/staff/v1.0/me`, { headers: { authorization: basicHeader('carol', 'carol-pass') } });
    // Both requests' lines are in before anything is searched: a line still in the pipe would pass unread.
    for (const answer of [issued, basic]) await expect.poll(() => lineOf(String(answer.headers['x-request-id'])), { timeout: 10_000 }).toBeDefined();
    const everything = JSON.stringify(server.logs);
    for (const secret of [PASSWORD, 'bob-pass', 'carol-pass', token, basicHeader('carol', 'carol-pass').slice(6), token.split('.')[2]!]) {
      expect(everything).not.toContain(secret);
    }
  });
});
