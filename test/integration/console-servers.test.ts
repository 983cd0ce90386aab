import { readFileSync } from 'node:fs';
import path from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_ARGS, ensureChromium } from '../../scripts/chromium.js';
import { type BuiltServer, startBuiltServer } from '../support/built-server.js';
import { formBody, send } from '../support/http.js';
import { ownDatabase } from '../support/own-database.js';
import { copyBuiltProject } from '../support/project-copy.js';

/**
 * A console edit of a resource's `auth` rewrites the files of the server that took it, and reloads that
 * server only. With several servers on one database the others would keep the old rule, so the console
 * refuses the edit on every one of them, saying why; alone again (the other stopped, or killed and aged out),
 * it edits again. Built servers over HTTP, on a database of this file's own (other files' servers would
 * count as servers beside these).
 */
const ROOT = path.resolve('test/.tmp/console-servers');
const FILE = path.join(ROOT, 'resources/shop/products.xml');
let databaseUrl = '';
let first: BuiltServer;
const others: BuiltServer[] = [];
let browser: Browser | undefined;

beforeAll(async () => {
  copyBuiltProject(ROOT);
  databaseUrl = await ownDatabase('servers');
  first = await start();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  for (const server of [first, ...others]) await server?.stop();
});

const start = async () => {
  const server = await startBuiltServer({ root: ROOT, env: { DATABASE_URL: databaseUrl } });
  if (first) others.push(server);
  return server;
};

async function admin(server: BuiltServer): Promise<string> {
  const response = await send(`${server.url}/shop/`, { method: 'POST', ...formBody({ auth: 'bearer', userid: 'bob', password: 'bob-pass' }) });
  expect(response.status).toBe(200);
  return `Bearer ${(response.json() as { token: string }).token}`;
}

/** Sets the `auth` of shop's products through `server`'s console, as its page would. */
async function setAuth(server: BuiltServer, auth: string | null): Promise<{ status: number; message?: string }> {
  const authorization = await admin(server);
  const headers = { authorization, 'x-xmlrest-console': '1', 'content-type': 'application/json' };
  const listed = await send(`${server.url}/_console/api/b/shop/resources`, { headers });
  const etag = (listed.json() as { resources: { name: string; version: string; etag: string }[] }).resources.find(
    (resource) => resource.name === 'products' && resource.version === '1.0',
  )!.etag;
  const response = await send(`${server.url}/_console/api/b/shop/resources/products/1.0/auth`, {
    method: 'PUT',
    headers,
    body: JSON.stringify({ auth, etag }),
  });
  return { status: response.status, message: (response.json() as { message?: string }).message };
}

const WHY =
  /^Several servers serve this database \(this one and 1 more: .+ pid \d+\): a console edit would change this server's resource files only, and the others would keep the old rule until they restart\. Change resources\/ in the repository and deploy$/;

describe('console edits with several servers on one database', () => {
  it('works with one server', async () => {
    expect(await setAuth(first, 'servers-viewer')).toMatchObject({ status: 200 });
    expect(readFileSync(FILE, 'utf8')).toContain('auth="servers-viewer"');
    expect(await setAuth(first, null)).toMatchObject({ status: 200 });
  }, 60_000);

  it('is refused on both while a second server serves the database, and the page says why', async () => {
    const second = await start();
    const before = readFileSync(FILE, 'utf8');
    for (const server of [first, second]) {
      const refused = await setAuth(server, 'servers-viewer');
      expect(refused.status).toBe(409);
      expect(refused.message).toMatch(WHY);
    }
    expect(readFileSync(FILE, 'utf8')).toBe(before);
    expect((await send(`${first.url}/shop/v1.0/products`)).status).toBe(200);

    browser = await chromium.launch({ executablePath: ensureChromium(), args: CHROMIUM_ARGS });
    const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
    await page.goto(`${first.url}/_console/`);
    await page.selectOption('#backend', 'shop');
    await page.fill('#user', 'bob');
    await page.fill('#password', 'bob-pass');
    await page.click('button[type=submit]');
    await page.waitForSelector('[data-testid="resource-products@1.0"]');
    await page.selectOption('[aria-label="Role to add to products@1.0"]', 'customer');
    await page.click('[data-testid="editor-products@1.0"] button:has-text("Add")');
    await page.click('[data-testid=impact] button:has-text("Confirm")');
    await expect
      .poll(() => page.textContent('[data-testid=message]'), { timeout: 30_000 })
      .toMatch(/Several servers serve this database .*Change resources\/ in the repository and deploy/);
    await page.screenshot({ path: 'test/.artifacts/console-several-servers.png', fullPage: true });
    await page.close();
    expect(readFileSync(FILE, 'utf8')).toBe(before);
  }, 90_000);

  it('works again as soon as the second server stops gracefully (SIGTERM removes its row)', async () => {
    expect(await others.at(-1)!.stop('SIGTERM')).toBe(0);
    expect(await setAuth(first, 'servers-viewer')).toMatchObject({ status: 200 });
    expect(await setAuth(first, null)).toMatchObject({ status: 200 });
  }, 60_000);

  it('works again once a killed server has aged out', async () => {
    const killed = await start();
    expect((await setAuth(first, 'servers-viewer')).status).toBe(409);
    await killed.stop('SIGKILL');
    // Its row stays until it is older than 15 s: refused just after the kill, then allowed.
    expect((await setAuth(first, 'servers-viewer')).status).toBe(409);
    await expect.poll(async () => (await setAuth(first, 'servers-viewer')).status, { timeout: 40_000, interval: 1000 }).toBe(200);
    expect(await setAuth(first, null)).toMatchObject({ status: 200 });
  }, 90_000);
});
