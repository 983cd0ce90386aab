import { mkdirSync, readFileSync } from 'node:fs';
import { compileErrors, validate } from '@readme/openapi-parser';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyStore } from '../../console/keys.js';
import { backends } from '../../generated/index.js';
import type { Backend } from '../../generator/ir.js';
import { batchOperation } from '../../generator/openapi/safe-writes.js';
import { CHROMIUM_ARGS, ensureChromium } from '../../scripts/chromium.js';
import { basic, startServer, type TestServer } from '../support/server.js';

/** The generated OpenAPI 3.1 document: valid, served, and rendered for a person in a real browser. */
const document = JSON.parse(readFileSync('generated/openapi.json', 'utf8')) as Record<string, any>;
let server: TestServer;
let browser: Browser | undefined;

beforeAll(async () => {
  server = await startServer(backends, { basePath: '/api', openapi: document });
});
afterAll(async () => {
  await browser?.close();
  await server.close();
});

describe('generated/openapi.json', () => {
  it('is a valid OpenAPI 3.1 document, and so are the golden cases of the lab, typed rows, events (webhooks) and lists', async () => {
    for (const file of [
      'generated/openapi.json',
      'test/golden/lab/expected/openapi.json',
      'test/golden/typed/expected/openapi.json',
      'test/golden/events/expected/openapi.json',
      'test/golden/lists/expected/openapi.json',
    ]) {
      const result = await validate(JSON.parse(readFileSync(file, 'utf8')));
      expect(result.valid ? [] : compileErrors(result), file).toEqual([]);
      expect(result.warnings, file).toEqual([]);
    }
  });

  it('describes security, roles, parameter and row types', () => {
    const orders = document.paths['/shop/v1.0/orders'];
    expect(orders.get.security).toEqual([{ bearerAuth: [] }, { apiKeyAuth: [] }]);
    expect(orders.get['x-xmlrest-roles']).toEqual(['customer']);
    expect(orders.get.responses['200'].content['application/json'].schema.properties.orders.items.properties.created_on).toEqual({
      type: 'string',
      format: 'date-time',
      description: 'timestamp',
    });
    expect(orders.post.requestBody.content['application/json'].schema.properties.product_id).toMatchObject({ type: 'integer', minimum: 0 });
    expect(document.paths['/staff/v1.0/me'].get.security).toEqual([{ basicAuth: [] }]);
    expect(document.paths['/shop/v1.0/products'].get.security).toBeUndefined();
    expect(document.paths['/shop/']).toBeDefined();
    expect(Object.keys(document.components.securitySchemes)).toEqual(['apiKeyAuth', 'basicAuth', 'bearerAuth']);
  });

  it('documents a list: optional filters, the sort, limit and after, and next with the Link header', () => {
    const products = document.paths['/shop/v3.0/products'].get;
    const query = products.parameters.filter((parameter: { in?: string }) => parameter.in === 'query');
    const parameters = Object.fromEntries(query.map((parameter: { name: string }) => [parameter.name, parameter]));
    expect(Object.keys(parameters)).toEqual(['max_price', 'q', 'sort', 'limit', 'after']);
    // Beside them, If-None-Match (docs/internals/contract.md §15), a header every GET takes.
    expect(products.parameters.at(-1)).toEqual({ $ref: '#/components/parameters/IfNoneMatch' });
    expect(Object.values(parameters).every((parameter: any) => parameter.required === false)).toBe(true);
    expect(parameters.sort.schema.enum).toEqual(['name', '-name', 'price', '-price']);
    expect(parameters.limit.schema).toEqual({ type: 'integer', minimum: 1, maximum: 100, default: 20 });
    expect(parameters.after.schema.maxLength).toBeGreaterThan(100);
    const ok = products.responses['200'];
    expect(ok.content['application/json'].schema.required).toEqual(['products', 'next']);
    expect(ok.content['application/json'].schema.properties.next.type).toEqual(['string', 'null']);
    expect(ok.headers.Link.schema).toEqual({ type: 'string' });
    expect(products.responses['400']).toBeDefined();
  });

  it('is served at {base}/openapi.json with the base path as its server', async () => {
    const response = await fetch(`${server.url}/api/openapi.json`);
    expect(response.status).toBe(200);
    const served = (await response.json()) as Record<string, any>;
    expect(served.servers).toEqual([{ url: '/api' }]);
    expect(served.paths).toEqual(document.paths);
  });

  it('serves the reference page with a strict CSP, its assets, and nothing else from that folder', async () => {
    const page = await fetch(`${server.url}/api/_docs/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    // A page a browser renders gets helmet's whole set for HTML, beyond the API's headers.
    expect(page.headers.get('cross-origin-opener-policy')).toBe('same-origin');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    const asset = await fetch(`${server.url}/api/_docs/swagger-ui-bundle.js`);
    expect(asset.status).toBe(200);
    // The assets are the same for everyone: they say so, over the API answers' no-store.
    expect(asset.headers.get('cache-control')).toBe('public, max-age=3600');
    expect((await fetch(`${server.url}/api/_docs/package.json`)).status).toBe(404);
    expect((await fetch(`${server.url}/api/_docs/..%2F..%2Fpackage.json`)).status).toBe(404);
  });
});

describe('GET {base}/openapi.json?for=me: the caller’s own API (issue 30)', () => {
  /** The operations a document lists, as `METHOD path`, sorted. */
  const operations = (paths: Record<string, Record<string, unknown>>) =>
    Object.entries(paths)
      .flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`))
      .sort();
  const mine = async (headers: Record<string, string> = {}) => {
    const response = await fetch(`${server.url}/api/openapi.json?for=me`, { headers });
    return { status: response.status, challenge: response.headers.get('www-authenticate'), body: (await response.json()) as Record<string, any> };
  };
  const token = async (user: string) =>
    (
      (await (
        await fetch(`${server.url}/api/shop/`, { method: 'POST', body: new URLSearchParams({ auth: 'bearer', userid: user, password: `${user}-pass` }) })
      ).json()) as { token: string }
    ).token;
  const PUBLIC = [
    'GET /shop/v1.0/products',
    'GET /shop/v1.0/reviews',
    'GET /shop/v2.0/products',
    'GET /shop/v3.0/products',
    'POST /desk/',
    'POST /desk/v1.0/token',
    'POST /desk/v1.0/token/refresh',
    'POST /shop/',
    'POST /shop/v1.0/token',
    // shop takes batches (batch="on"): shown to whoever may call one of its routes, and its public ones admit anyone.
    'POST /shop/batch',
  ].sort();

  it('without credentials lists the public operations only, as a valid document', async () => {
    const { status, body } = await mine();
    expect(status).toBe(200);
    expect(operations(body.paths)).toEqual(PUBLIC);
    expect(body.servers).toEqual([{ url: '/api' }]);
    expect(body.tags.map((tag: { name: string }) => tag.name)).toEqual(['desk', 'shop']);
    const result = await validate(body as never);
    expect(result.valid ? [] : compileErrors(result)).toEqual([]);
  });

  it('with a Bearer token, an API key or Basic credentials lists what those credentials may call, and nothing more', async () => {
    const customer = [
      ...PUBLIC,
      'GET /shop/v1.0/account',
      'GET /shop/v1.0/orders',
      'POST /shop/v1.0/orders',
      'GET /shop/v1.0/order',
      'PUT /shop/v1.0/order',
      'POST /shop/v1.0/reviews',
      'GET /shop/v2.0/orders',
    ].sort();
    expect(operations((await mine({ authorization: `Bearer ${await token('alice')}` })).body.paths)).toEqual(customer);
    const admin = operations((await mine({ authorization: `Bearer ${await token('bob')}` })).body.paths);
    expect(admin).toEqual([...customer, 'DELETE /shop/v1.0/reviews', 'GET /shop/v1.0/report'].sort());
    const [alice] = await server.database.select<{ id: number }>("select user_id as id from usr where user_name = 'alice'", []);
    const key = await new KeyStore(server.database).create({
      backend: 'shop',
      userId: String(alice!.id),
      name: 'for=me',
      roles: ['customer'],
      expires: null,
      rate: null,
    });
    expect(operations((await mine({ 'x-api-key': key.key })).body.paths)).toEqual(customer);
    // One caller's document: kept by no shared cache, nor given for another's credentials.
    const headers = (await fetch(`${server.url}/api/openapi.json?for=me`, { headers: { 'x-api-key': key.key } })).headers;
    expect(headers.get('cache-control')).toBe('private, no-store');
    expect(headers.get('vary')).toBe('Authorization, X-API-Key');
    const staff = operations((await mine({ authorization: basic('carol', 'carol-pass') })).body.paths);
    expect(staff).toEqual([...PUBLIC, 'GET /staff/v1.0/board', 'GET /staff/v1.0/me', 'GET /staff/v1.0/notes', 'POST /staff/v1.0/notes'].sort());
    // The full document is as it was.
    expect(((await (await fetch(`${server.url}/api/openapi.json`)).json()) as Record<string, any>).paths).toEqual(document.paths);
  });

  it('answers wrong credentials as a call would: 401 with the challenge; any other for is a 400', async () => {
    const wrong = await mine({ authorization: basic('carol', 'not-her-password') });
    expect(wrong.status).toBe(401);
    // The first Basic backend's refusal, as its next call would get it: crm comes first of the Basic backends.
    expect(wrong.challenge).toBe('Basic realm="crm", charset="UTF-8"');
    const forged = await mine({ authorization: `Bearer ${'x'.repeat(20)}.${'y'.repeat(20)}.${'z'.repeat(20)}` });
    expect(forged.status).toBe(401);
    // The first Bearer backend's, by name (desk, then shop): a forged token names none.
    expect(forged.challenge).toMatch(/^Bearer realm="desk"/);
    const other = await fetch(`${server.url}/api/openapi.json?for=everyone`);
    expect(other.status).toBe(400);
    expect(await other.json()).toEqual({ message: "Parameter 'for' must be 'me'", status: 400 });
  });
});

describe('GET {base}/openapi.json?for=me with batches on (issue 44)', () => {
  it("lists a backend's batch to a caller who may call one of its resource routes, and to no one else", async () => {
    // shop has public routes, staff none: its batch is for callers staff's guard admits to one of its routes.
    const batched = backends.map((backend) =>
      backend.name === 'shop' || backend.name === 'staff' ? { ...backend, batch: { maxOperations: 10, timeoutMs: 10_000 } } : backend,
    );
    const withBatches = structuredClone(document);
    for (const backend of batched) {
      const batch = batchOperation(backend as unknown as Backend);
      if (batch) withBatches.paths[`/${backend.name}/batch`] = { post: batch };
    }
    const batchServer = await startServer(batched, { basePath: '/api', openapi: withBatches });
    try {
      const batchesOf = async (headers: Record<string, string>) => {
        const body = (await (await fetch(`${batchServer.url}/api/openapi.json?for=me`, { headers })).json()) as { paths: Record<string, unknown> };
        return Object.keys(body.paths).filter((path) => path.endsWith('/batch'));
      };
      expect(await batchesOf({})).toEqual(['/shop/batch']);
      expect(await batchesOf({ authorization: basic('carol', 'carol-pass') })).toEqual(['/shop/batch', '/staff/batch']);
    } finally {
      await batchServer.close();
    }
  });
});

describe('the API reference page in headless Chromium', () => {
  it('renders every operation, with a lock on exactly the protected ones', async () => {
    browser = await chromium.launch({ executablePath: ensureChromium(), args: CHROMIUM_ARGS });
    const page = await browser.newPage({ viewport: { width: 1280, height: 2400 } });
    const offsite: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith(server.url) && !request.url().startsWith('data:')) offsite.push(request.url());
    });
    await page.goto(`${server.url}/api/_docs/`);
    await page.waitForSelector('.opblock-summary', { timeout: 60_000 });
    const operations = await page.$$eval('.opblock', (blocks) =>
      blocks.map((block) => ({
        path: block.querySelector('.opblock-summary-path')?.getAttribute('data-path') ?? '',
        method: block.querySelector('.opblock-summary-method')?.textContent ?? '',
        locked: block.querySelector('.authorization__btn') !== null,
      })),
    );
    mkdirSync('test/.artifacts', { recursive: true });
    await page.screenshot({ path: 'test/.artifacts/openapi-reference.png', fullPage: true });
    const shown = (path: string, method: string) => operations.find((operation) => operation.path === path && operation.method === method);
    expect(shown('/shop/v1.0/orders', 'GET')?.locked).toBe(true);
    expect(shown('/shop/v1.0/report', 'GET')?.locked).toBe(true);
    expect(shown('/staff/v1.0/me', 'GET')?.locked).toBe(true);
    expect(shown('/shop/v1.0/products', 'GET')?.locked).toBe(false);
    expect(shown('/shop/v1.0/token', 'POST')?.locked).toBe(false);
    // Every operation, and every webhook (the desk backend's ticket.opened), which Swagger UI shows as one too.
    const webhooks = Object.values(document.webhooks ?? {}).reduce((n: number, item: any) => n + Object.keys(item).length, 0);
    expect(operations).toHaveLength(Object.values(document.paths).reduce((n: number, item: any) => n + Object.keys(item).length, 0) + webhooks);
    expect(offsite).toEqual([]);
  });
});
