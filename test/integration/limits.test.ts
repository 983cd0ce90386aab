import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends as demo } from '../../generated/index.js';
import { backends as lab } from '../golden/lab/expected/index.js';
import { startServer, type TestServer } from '../support/server.js';

/** Limits that answer 4xx or 503, never a hang or a crash; security headers; CORS off unless configured. */
let strict: TestServer;
let plain: TestServer;

beforeAll(async () => {
  strict = await startServer([...demo, ...lab], { corsOrigins: ['https://app.example'], maxParams: 5, statementTimeoutMs: 300, maxHeaderBytes: 4096 });
  plain = await startServer([...demo, ...lab]);
});
afterAll(async () => {
  await strict.close();
  await plain.close();
});

describe('limits', () => {
  it('answers 503 with Retry-After when a statement runs past the time limit, and the server goes on', async () => {
    const started = Date.now();
    const response = await fetch(`${strict.url}/lab/v1.0/slow?seconds=3`);
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('1');
    expect(await response.json()).toEqual({ message: 'Service unavailable', status: 503, requestId: response.headers.get('x-request-id') });
    expect(Date.now() - started).toBeLessThan(2500);
    expect((await fetch(`${strict.url}/lab/v1.0/slow?seconds=0`)).status).toBe(200);
  });

  it('refuses more parameters than configured', async () => {
    const query = Array.from({ length: 6 }, (_, i) => `p${i}=1`).join('&');
    const response = await fetch(`${strict.url}/lab/v1.0/echo?a=1&b=2&${query}`);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ message: 'Too many parameters: at most 5', status: 400 });
    const body = await fetch(`${strict.url}/lab/v1.0/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`p${i}`, i]))),
    });
    expect(body.status).toBe(400);
    // A form body is counted while it is read: 90,000 fields (within the 1 MB limit) cost no more than six.
    for (const fields of [6, 90_000]) {
      const form = await fetch(`${strict.url}/lab/v1.0/echo`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: Array.from({ length: fields }, (_, i) => `p${i}=1`).join('&'),
      });
      expect(form.status).toBe(400);
      expect(await form.json()).toEqual({ message: 'Too many parameters: at most 5', status: 400 });
    }
    const door = await fetch(`${strict.url}/shop/`, {
      method: 'POST',
      body: new URLSearchParams({
        auth: 'bearer',
        userid: 'alice',
        password: 'alice-pass',
        ...Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`f${i}`, '1'])),
      }),
    });
    expect(await door.json()).toEqual({ message: 'Too many parameters: at most 10', status: 400 });
    // The token door reads its body only, and still counts the query string's fields (at most 10 there).
    const token = await fetch(`${strict.url}/shop/?${Array.from({ length: 11 }, (_, i) => `q${i}=1`).join('&')}`, {
      method: 'POST',
      body: new URLSearchParams({ auth: 'bearer', userid: 'alice', password: 'alice-pass' }),
    });
    expect(token.status).toBe(400);
    expect(await token.json()).toEqual({ message: 'Too many parameters: at most 10', status: 400 });
  });

  it('reads a form body as it reads the query string: a name with brackets or dots is a name of its own', async () => {
    // qs, the form parser's default, made `a` an object of these three fields, which no parameter can be.
    const response = await fetch(`${plain.url}/lab/v1.0/echo`, { method: 'POST', body: new URLSearchParams('a=x+%E2%9C%93&a[b]=y&a.c=z&__proto__=w') });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ posted: [{ a: 'x ✓' }] });
    // A name given twice is still no single value.
    const twice = await fetch(`${plain.url}/lab/v1.0/echo`, { method: 'POST', body: new URLSearchParams('a=x&a=y') });
    expect(twice.status).toBe(400);
  });

  it('answers 431 to an oversized header block, then serves the next request', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const call = request(`${strict.url}/shop/v1.0/products`, { headers: { 'x-filler': 'x'.repeat(8000) } }, (response) => resolve(response.statusCode ?? 0));
      call.on('error', reject);
      call.end();
    });
    expect(status).toBe(431);
    expect((await fetch(`${strict.url}/shop/v1.0/products`)).status).toBe(200);
  });
});

describe('headers', () => {
  it('sends the security headers an API needs on every response, errors included', async () => {
    for (const path of ['/shop/v1.0/products', '/nothing', '/shop/v1.0/orders', '/healthz']) {
      const response = await fetch(plain.url + path);
      expect(response.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(response.headers.get('x-frame-options'), path).toBe('DENY');
      // Rows and tokens are stored by no cache (OWASP's REST list; RFC 6749 §5.1 for tokens); a GET's 200 may be
      // kept but not used unchecked: no-cache, with its ETag (docs/internals/contract.md §15).
      expect(response.headers.get('cache-control'), path).toBe(path === '/shop/v1.0/products' ? 'no-cache' : 'no-store');
      // Never over plain HTTP (RFC 6797 §7.2); transport.test.ts sees it over HTTPS.
      expect(response.headers.get('strict-transport-security'), path).toBeNull();
      // A JSON answer loads nothing and is framed nowhere.
      expect(response.headers.get('content-security-policy'), path).toBe("default-src 'none'; frame-ancestors 'none'");
    }
    // A token, of either shape, is never kept by a cache.
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    for (const [path, body] of [
      ['/shop/v1.0/token', 'user=bob&pass=bob-pass'],
      ['/shop/', 'auth=bearer&userid=bob&password=bob-pass'],
    ] as const) {
      const response = await fetch(plain.url + path, { method: 'POST', headers: form, body });
      expect(typeof ((await response.json()) as { token?: unknown }).token, path).toBe('string');
      expect(response.headers.get('cache-control'), path).toBe('no-store');
    }
  });

  it('leaves CORS off unless configured, and then allows only the configured origins', async () => {
    const origin = { origin: 'https://app.example' };
    expect((await fetch(`${plain.url}/shop/v1.0/products`, { headers: origin })).headers.get('access-control-allow-origin')).toBeNull();
    expect((await fetch(`${strict.url}/shop/v1.0/products`, { headers: origin })).headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(
      (await fetch(`${strict.url}/shop/v1.0/products`, { headers: { origin: 'https://evil.example' } })).headers.get('access-control-allow-origin'),
    ).toBeNull();
    const preflight = await fetch(`${strict.url}/shop/v1.0/orders`, {
      method: 'OPTIONS',
      headers: { ...origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-headers')).toBe('Authorization,Content-Type,X-API-Key,If-None-Match,If-Match,Idempotency-Key');
    // A page revalidates a GET itself: it reads the ETag (docs/internals/contract.md §15).
    const allowed = await fetch(`${strict.url}/shop/v1.0/products`, { headers: origin });
    expect(allowed.headers.get('access-control-expose-headers')).toBe('X-Request-Id,WWW-Authenticate,ETag,Idempotent-Replayed,Retry-After');
    expect(allowed.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
  });
});
