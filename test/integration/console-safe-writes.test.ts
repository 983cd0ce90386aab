import { mkdirSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleMiddleware } from '../../console/server.js';
import { backends as demo } from '../../generated/index.js';
import {
  type BackendModule,
  createLogger,
  createReloadableApp,
  type Database,
  listen,
  type Operation,
  openDatabase,
  type ResourceModule,
  type RunningServer,
} from '../../runtime/index.js';
import { CHROMIUM_ARGS, ensureChromium } from '../../scripts/chromium.js';
import { DEMO_WEBHOOK_ENV } from '../support/demo-webhook.js';
import { ownDatabase } from '../support/own-database.js';
import { TEST_SECRET } from '../support/server.js';

/**
 * The console's resources page shows what each method does of docs/internals/contract.md §15 (issue 44 point 5),
 * as its module says, by the API and in headless Chromium: a GET's ETag validator and max-age, a versioned write's
 * If-Match (required or optional, and its version column), a required Idempotency-Key, and the backend's batches.
 * The demo's shop, with those fields set by hand on its modules as the generator will write them.
 */
const ARTIFACTS = 'test/.artifacts';
let running: RunningServer;
let database: Database;
let browser: Browser | undefined;
let url = '';

/** The resource `name` of the backend, its methods changed as `changes` says. */
function changed(resource: ResourceModule, changes: Partial<Record<string, Partial<Operation>>>): ResourceModule {
  const operations = Object.fromEntries(
    Object.entries(resource.operations).map(([method, operation]) => [method, { ...operation!, ...(changes[method] ?? {}) }]),
  );
  return { ...resource, operations };
}

function shopWithSafeWrites(shop: BackendModule): BackendModule {
  return {
    ...shop,
    batch: { maxOperations: 25, timeoutMs: 10_000 },
    resources: shop.resources.map((resource) => {
      if (resource.name === 'orders' && resource.version === '1.0') return changed(resource, { GET: { validator: true }, POST: { idempotency: 'required' } });
      if (resource.name === 'products' && resource.version === '1.0') return changed(resource, { GET: { maxAge: 60 } });
      if (resource.name === 'reviews') return changed(resource, { DELETE: { version: { column: 'version', required: true } } });
      return resource;
    }),
  };
}

beforeAll(async () => {
  const databaseUrl = await ownDatabase('console_safe_writes');
  database = openDatabase(databaseUrl);
  const backends = demo.map((backend) => (backend.name === 'shop' ? shopWithSafeWrites(backend) : backend));
  const adminConsole = consoleMiddleware({
    basePath: '',
    backends: () => backends,
    database,
    root: '.',
    regenerate: () => Promise.resolve({ ok: false, ms: 0, errors: ['not here'] }),
    assetsDir: 'dist/console-ui',
    server: () => server,
  });
  const server = createReloadableApp({
    backends,
    middleware: [adminConsole],
    database,
    jwtSecret: TEST_SECRET,
    webhookSecrets: DEMO_WEBHOOK_ENV,
    logger: createLogger('silent'),
  });
  running = await listen(server.app, 0);
  url = running.url;
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await running?.close();
  await database?.end();
});

async function tokenOf(user: string): Promise<string> {
  const issued = await fetch(`${url}/shop/`, { method: 'POST', body: new URLSearchParams({ auth: 'bearer', userid: user, password: `${user}-pass` }) });
  expect(issued.status).toBe(200);
  return `Bearer ${((await issued.json()) as { token: string }).token}`;
}

describe('console: safe writes of a backend’s methods', () => {
  it('answers each method’s validator, version, key and max-age, and the backend’s batches, with its resources', async () => {
    const response = await fetch(`${url}/_console/api/b/shop/resources`, { headers: { 'x-xmlrest-console': '1', authorization: await tokenOf('bob') } });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { batch: unknown; resources: { name: string; version: string; safeWrites: unknown }[] };
    expect(body.batch).toEqual({ maxOperations: 25 });
    const of = (name: string, version = '1.0') => body.resources.find((resource) => resource.name === name && resource.version === version)!.safeWrites;
    expect(of('orders')).toEqual({ GET: { validator: true }, POST: { idempotency: 'required' } });
    expect(of('products')).toEqual({ GET: { maxAge: 60 } });
    // The demo's reviews read a <Validator> of their own (resources/shop/reviews.xml).
    expect(of('reviews')).toEqual({ GET: { validator: true }, DELETE: { version: { column: 'version', required: true } } });
    expect(of('account')).toEqual({});
    // A backend without batches says so.
    const staff = await fetch(`${url}/_console/api/b/staff/resources`, {
      headers: { 'x-xmlrest-console': '1', authorization: `Basic ${Buffer.from('bob:bob-pass').toString('base64')}` },
    });
    expect(((await staff.json()) as { batch: unknown }).batch).toBeNull();
  });

  it('shows them on the resources page in headless Chromium', async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    browser = await chromium.launch({ executablePath: ensureChromium(), args: CHROMIUM_ARGS });
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(`${url}/_console/`);
    await page.selectOption('#backend', 'shop');
    await page.fill('#user', 'bob');
    await page.fill('#password', 'bob-pass');
    await page.click('button[type=submit]');
    await page.click('nav button:has-text("Resources")');
    await page.waitForSelector('[data-testid="resource-orders@1.0"]');
    expect(await page.textContent('[data-testid="batch-note"]')).toContain('Batches on (at most 25 operations)');
    const orders = page.locator('[data-testid="resource-orders@1.0"]');
    expect(await orders.locator('[data-testid="safe-writes-GET"]').textContent()).toContain('ETag validator');
    expect(await orders.locator('[data-testid="safe-writes-POST"]').textContent()).toContain('Idempotency-Key required');
    const reviews = page.locator('[data-testid="resource-reviews@1.0"]');
    expect(await reviews.locator('[data-testid="safe-writes-DELETE"]').textContent()).toContain('If-Match required (version column version)');
    expect(await page.locator('[data-testid="resource-products@1.0"] [data-testid="safe-writes-GET"]').textContent()).toContain('max-age');
    expect(await page.locator('[data-testid="resource-account@1.0"] [data-testid^="safe-writes-"]').count()).toBe(0);
    await page.screenshot({ path: `${ARTIFACTS}/console-safe-writes.png`, fullPage: true });
    await page.close();
  });
});
