import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import mysql from 'mysql2/promise';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_ARGS, ensureChromium } from '../../scripts/chromium.js';
import { connectTo } from '../../scripts/connection.js';
import { addUser } from '../../scripts/schema.js';
import { type BuiltServer, startBuiltServer } from '../support/built-server.js';
import { formBody, send } from '../support/http.js';
import { ownDatabase } from '../support/own-database.js';
import { productionInstall, removeInstall } from '../support/production-install.js';

/**
 * The console in production. A production install (the
 * project's files outside this checkout, `npm ci --omit=dev`: no tsx, no
 * TypeScript compiler, no vite) with the build made beforehand, started exactly as `npm start` does,
 * driven in headless Chromium: setting and clearing a resource's role works
 * as under `npm run dev`, a change the generator refuses shows the
 * generator's own words, and what was set survives a restart.
 */
let ROOT = '';
let server: BuiltServer;
let browser: Browser;
let page: Page;
let databaseUrl = '';

beforeAll(async () => {
  ROOT = productionInstall('production');

  // A database of its own: the console refuses edits while other servers (other files') serve its database.
  databaseUrl = await ownDatabase('production');
  const connection = await connectTo(databaseUrl);
  await addUser(connection, 'prod-viewer-1', 'prod-viewer-pw', ['prod-viewer']);
  await addUser(connection, 'prod-customer-1', 'prod-customer-pw', ['customer']);
  await connection.end();
  server = await startBuiltServer({ root: ROOT, entry: 'scripts/start.mjs', env: { DATABASE_URL: databaseUrl } });
  browser = await chromium.launch({ executablePath: ensureChromium(), args: CHROMIUM_ARGS });
  page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  removeInstall(ROOT);
});

async function token(user: string, password: string): Promise<string> {
  const response = await send(`${server.url}/shop/`, { method: 'POST', ...formBody({ auth: 'bearer', userid: user, password }) });
  expect(response.status).toBe(200);
  return `Bearer ${(response.json() as { token: string }).token}`;
}
const products = async (authorization?: string) => (await send(`${server.url}/shop/v1.0/products`, authorization ? { headers: { authorization } } : {})).status;

/**
 * How long a console change may take to regenerate and compile the module: a few seconds on a quiet machine,
 * half a minute and more on a busy one. A bound against a hang, not a speed test.
 */
const REGENERATED_WITHIN = 90_000;

describe('the console under npm start, in a production install', { timeout: 150_000 }, () => {
  it('sets a role on a resource from the browser, and the server enforces it at once', async () => {
    const viewer = await token('prod-viewer-1', 'prod-viewer-pw');
    const customer = await token('prod-customer-1', 'prod-customer-pw');
    expect(await products(customer)).toBe(200);
    await page.goto(`${server.url}/_console/`);
    await page.selectOption('#backend', 'shop');
    await page.fill('#user', 'bob');
    await page.fill('#password', 'bob-pass');
    await page.click('button[type=submit]');
    await page.waitForSelector('[data-testid="resource-products@1.0"]');
    await page.selectOption('[aria-label="Role to add to products@1.0"]', 'prod-viewer');
    await page.click('[data-testid="editor-products@1.0"] button:has-text("Add")');
    await page.click('[data-testid=impact] button:has-text("Confirm")');
    // The console answers once the module is regenerated, compiled and swapped in: from then on the server enforces it.
    await expect.poll(() => page.textContent('[data-testid=message]'), { timeout: REGENERATED_WITHIN }).toMatch(/enforces it now/);
    expect(await products(customer)).toBe(403);
    expect(await products(viewer)).toBe(200);
    expect(await products()).toBe(403);
    await expect.poll(() => page.textContent('[data-testid="resource-products@1.0"] [data-testid=auth-badge]')).toBe('prod-viewer');
    expect(readFileSync(path.join(ROOT, 'resources/shop/products.xml'), 'utf8')).toContain('auth="prod-viewer"');
    expect(readFileSync(path.join(ROOT, 'generated/shop/products.ts'), 'utf8')).toContain("const PRODUCTS_GET_ROLES = ['prod-viewer'] as const;");
  });

  it("shows the generator's own message when it refuses a change, and logs it at warn", async () => {
    const before = readFileSync(path.join(ROOT, 'resources/shop/orders.xml'), 'utf8');
    // orders reads $uid: without auth there is no user, which the generator refuses.
    await page.click('[data-testid="editor-orders@1.0"] button:has-text("Public")');
    await page.click('[data-testid=impact] button:has-text("Confirm")');
    await expect
      .poll(() => page.textContent('[data-testid=message]'), { timeout: REGENERATED_WITHIN })
      .toMatch(/resources\/shop\/orders\.xml:\d+:\d+: step "orders" uses \$uid/);
    await page.screenshot({ path: 'test/.artifacts/console-production-refused.png', fullPage: true });
    expect(readFileSync(path.join(ROOT, 'resources/shop/orders.xml'), 'utf8')).toBe(before);
    const refusal = () => server.logs.find((line) => line.level === 'warn' && line.msg === 'console change refused by the generator');
    // The log comes through a pipe: the page may show the answer before the line arrives.
    await expect.poll(refusal, { timeout: 10_000 }).toBeDefined();
    const warned = refusal();
    expect(warned).toMatchObject({
      source: 'resources/shop/orders.xml',
      errors: [expect.stringMatching(/^resources\/shop\/orders\.xml:\d+:\d+: /), expect.any(String)],
    });
    expect(
      await send(`${server.url}/shop/v1.0/orders`, { headers: { authorization: await token('prod-customer-1', 'prod-customer-pw') } }).then((r) => r.status),
    ).toBe(200);
  });

  it('keeps the change across a restart: the build holds the regenerated module, and npm start finds it current', async () => {
    await server.stop();
    server = await startBuiltServer({ root: ROOT, entry: 'scripts/start.mjs', env: { DATABASE_URL: databaseUrl } });
    expect(await products(await token('prod-customer-1', 'prod-customer-pw'))).toBe(403);
    expect(await products(await token('prod-viewer-1', 'prod-viewer-pw'))).toBe(200);
  });

  it('clears the role again', async () => {
    await page.goto(`${server.url}/_console/`);
    await page.selectOption('#backend', 'shop');
    await page.fill('#user', 'bob');
    await page.fill('#password', 'bob-pass');
    await page.click('button[type=submit]');
    await page.waitForSelector('[data-testid="resource-products@1.0"]');
    await page.click('[data-testid="editor-products@1.0"] button:has-text("Public")');
    await page.click('[data-testid=impact] button:has-text("Confirm")');
    await expect.poll(() => products(), { timeout: REGENERATED_WITHIN, interval: 50 }).toBe(200);
    mkdirSync('test/.artifacts', { recursive: true });
    await page.screenshot({ path: 'test/.artifacts/console-production.png', fullPage: true });
  });
});
