import { mkdirSync, readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleMiddleware } from '../../console/server.js';
import { backends as demo } from '../../generated/index.js';
import { createLogger, createReloadableApp, type Database, listen, openDatabase, type RunningServer } from '../../runtime/index.js';
import { CHROMIUM_ARGS, ensureChromium } from '../../scripts/chromium.js';
import { DEMO_WEBHOOK_ENV } from '../support/demo-webhook.js';
import { ownDatabase } from '../support/own-database.js';
import { TEST_SECRET } from '../support/server.js';

/**
 * The console shows which MCP tools a user sees on a backend with MCP on (docs/internals/contract.md §16, issue 45
 * point 5), by the API and in headless Chromium: exactly the tools tools/list answers that user's own credentials
 * (the SDK's client, over HTTP), for users of several roles, a grant and its revocation, and a disabled user;
 * nothing on a backend with MCP off. The demo's backends, staff's MCP turned off by hand.
 */
const ARTIFACTS = 'test/.artifacts';
let running: RunningServer;
let database: Database;
let browser: Browser | undefined;
let url = '';
const clients: Client[] = [];

beforeAll(async () => {
  const databaseUrl = await ownDatabase('console_mcp');
  database = openDatabase(databaseUrl);
  const backends = demo.map((backend) => (backend.name === 'staff' ? { ...backend, mcp: undefined } : backend));
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
    openapi: JSON.parse(readFileSync('generated/openapi.json', 'utf8')) as object,
  });
  running = await listen(server.app, 0);
  url = running.url;
}, 120_000);

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
  await browser?.close();
  await running?.close();
  await database?.end();
});

const basic = (user: string) => `Basic ${Buffer.from(`${user}:${user}-pass`).toString('base64')}`;

async function tokenOf(user: string): Promise<string> {
  const issued = await fetch(`${url}/shop/`, { method: 'POST', body: new URLSearchParams({ auth: 'bearer', userid: user, password: `${user}-pass` }) });
  expect(issued.status).toBe(200);
  return `Bearer ${((await issued.json()) as { token: string }).token}`;
}

/** A console call as bob, the operator of both consoles: by token on the shop, by Basic on staff. */
async function consoleCall(path: string, method = 'GET', body?: object, backend = 'shop'): Promise<Response> {
  const authorization = backend === 'shop' ? await tokenOf('bob') : basic('bob');
  const headers: Record<string, string> = { 'x-xmlrest-console': '1', authorization, ...(body === undefined ? {} : { 'content-type': 'application/json' }) };
  return fetch(`${url}/_console/api/b/${backend}/${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
}

async function idOf(user: string): Promise<number> {
  const found = (await (await consoleCall(`users?q=${user}`)).json()) as { users: { user_id: number; user_name: string }[] };
  return found.users.find((candidate) => candidate.user_name === user)!.user_id;
}

interface ShownTools {
  endpoint: string;
  tools: { name: string; readOnly: boolean; method: string; path: string }[];
}

async function shownTools(user: string, backend = 'shop'): Promise<ShownTools | null> {
  const response = await consoleCall(`users/${await idOf(user)}/access`, 'GET', undefined, backend);
  expect(response.status).toBe(200);
  return ((await response.json()) as { mcp: ShownTools | null }).mcp;
}

/** What tools/list answers these credentials, every page, through the SDK's own client. */
async function listed(authorization: string | undefined, backend = 'shop'): Promise<string[]> {
  const client = new Client({ name: 'console-mcp-test', version: '1.0.0' });
  const headers: Record<string, string> = authorization === undefined ? {} : { authorization };
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/${backend}/mcp`), { requestInit: { headers } }));
  clients.push(client);
  const names: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor });
    names.push(...page.tools.map((tool) => tool.name));
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return names.sort();
}

describe('console: the MCP tools a user sees', () => {
  it('are exactly what tools/list answers their own credentials, for each role of the demo', async () => {
    // alice (customer), bob (customer, admin, operator), carol (staff), dave (guest): each compared with tools/list.
    for (const user of ['alice', 'bob', 'carol', 'dave']) {
      const shown = await shownTools(user);
      expect(shown?.endpoint).toBe('/shop/mcp');
      expect(shown!.tools.map((tool) => tool.name).sort(), user).toEqual(await listed(await tokenOf(user)));
    }
    const alice = (await shownTools('alice'))!;
    expect(alice.tools).toContainEqual({ name: 'shop_orders_v1_0_get', title: expect.any(String), readOnly: true, method: 'GET', path: '/shop/v1.0/orders' });
    expect(alice.tools).toContainEqual(expect.objectContaining({ name: 'shop_orders_v1_0_post', readOnly: false, method: 'POST' }));
    expect(alice.tools.map((tool) => tool.name)).not.toContain('shop_report_v1_0_get');
    expect((await shownTools('bob'))!.tools.map((tool) => tool.name)).toContain('shop_report_v1_0_get');
    // A token request takes a password: no tool, for anyone.
    expect((await shownTools('bob'))!.tools.map((tool) => tool.name)).not.toContain('shop_token_v1_0_post');
  });

  it('follow a grant and its revocation, and a disabled user sees what a caller without credentials sees', async () => {
    const anonymous = await listed(undefined);
    // A user holding no role: the default tables' AuthQuery finds no row for them (401), so the public tools alone,
    // as to a caller without credentials.
    const made = await consoleCall('users', 'POST', { name: 'mcp-erin', password: 'mcp-erin-pass' });
    expect(made.status).toBe(201);
    const erin = ((await made.json()) as { user_id: number }).user_id;
    expect((await shownTools('mcp-erin'))!.tools.map((tool) => tool.name).sort()).toEqual(anonymous);
    expect((await consoleCall(`users/${erin}/roles/customer`, 'PUT', {})).status).toBe(200);
    const customer = (await shownTools('mcp-erin'))!.tools.map((tool) => tool.name).sort();
    expect(customer).toEqual(await listed(await tokenOf('mcp-erin')));
    expect(customer).toContain('shop_orders_v1_0_get');
    expect((await consoleCall(`users/${erin}/disable`, 'POST')).status).toBe(200);
    expect((await shownTools('mcp-erin'))!.tools.map((tool) => tool.name).sort()).toEqual(anonymous);
    expect((await consoleCall(`users/${erin}/enable`, 'POST')).status).toBe(200);
    expect((await consoleCall(`users/${erin}/roles/customer`, 'DELETE')).status).toBe(200);
    expect((await shownTools('mcp-erin'))!.tools.map((tool) => tool.name).sort()).toEqual(anonymous);
  });

  it('are none on a backend with MCP off', async () => {
    expect(await shownTools('carol', 'staff')).toBeNull();
  });

  it('shows them beside what the user can call, in headless Chromium', async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    browser = await chromium.launch({ executablePath: ensureChromium(), args: CHROMIUM_ARGS });
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(`${url}/_console/`);
    await page.selectOption('#backend', 'shop');
    await page.fill('#user', 'bob');
    await page.fill('#password', 'bob-pass');
    await page.click('button[type=submit]');
    await page.click('nav button:has-text("Effective access")');
    await page.fill('input[aria-label="User name"]', 'alice');
    await page.click('button:has-text("What can this user call?")');
    await page.waitForSelector('[data-testid=user-tools]');
    const tools = page.locator('[data-testid=user-tools]');
    expect(await tools.textContent()).toContain('Through MCP (POST /shop/mcp)');
    expect(await tools.locator('[data-testid="tool-shop_orders_v1_0_get"]').textContent()).toContain('read-only');
    expect(await tools.locator('[data-testid="tool-shop_orders_v1_0_post"]').textContent()).toContain('writes');
    expect(await tools.locator('[data-testid="tool-shop_report_v1_0_get"]').count()).toBe(0);
    expect(await tools.locator('li').count()).toBe((await shownTools('alice'))!.tools.length);
    await page.screenshot({ path: `${ARTIFACTS}/console-mcp.png`, fullPage: true });
    await page.close();
  });
});
