import { mkdirSync } from 'node:fs';
import type mysql from 'mysql2/promise';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { consoleMiddleware } from '../../console/server.js';
import { type BackendModule, createLogger, createReloadableApp, type Database, listen, openDatabase, type RunningServer } from '../../runtime/index.js';
import { CHROMIUM_ARGS, ensureChromium } from '../../scripts/chromium.js';
import { connectTo } from '../../scripts/connection.js';
import { addUser } from '../../scripts/schema.js';
import { DEMO_WEBHOOK_ENV } from '../support/demo-webhook.js';
import { ownDatabase } from '../support/own-database.js';
import { basic, TEST_SECRET } from '../support/server.js';

/**
 * The console's users page on a tenant backend (issue 43 point 4), on the real server and MariaDB, by the API and
 * in headless Chromium: it shows each user's tenant and sets it, checked against the tenant's type; setting it
 * ends the user's tokens on the backend as a revocation does (the running server refuses a Basic login's
 * remembered verdict no more than before, but a token issued before, at once); a backend whose users' tenant
 * comes from a TenantQuery, with an AuthQuery of its own, says there is nothing to set. The backends are written
 * as the generator will write `<Tenant>` (test/support/tenant-project.ts): until it reads it, by hand.
 */
const ARTIFACTS = 'test/.artifacts';
let running: RunningServer;
let database: Database;
let connection: mysql.Connection;
let browser: Browser | undefined;
let url = '';

const BASE: Omit<BackendModule, 'name' | 'issuer'> = {
  authScheme: 'Basic',
  authQuery: {
    sql: 'select r.user_id, r.role_name, u.pass_word from usr_role r inner join usr u on r.user_id = u.user_id where u.user_name = ?',
    binds: ['user'],
    passwordColumn: 'pass_word',
  },
  defaultTables: true,
  uidType: 'integer',
  tokenLifetime: 3600,
  clockSkew: 0,
  rehashPlaintext: false,
  credentialCacheSeconds: 60,
  iatUnit: 's',
  consoleRole: 'xmlrest-operator',
  absentCredentialsStatus: 403,
  issuers: [],
  apiKeys: false,
  refreshLifetime: null,
  sessionLifetime: 2592000,
  resources: [],
};
/** Its users' tenant in usr.team_org, as `<Tenant column="org_id" type="integer" user_column="team_org"/>` makes it. */
const TEAMS: BackendModule = {
  ...BASE,
  // Bearer: its own tokens (shape A), which a change of the user's tenant must end.
  authScheme: 'Bearer',
  name: 'teams',
  issuer: 'teams',
  tenant: { column: 'org_id', type: 'integer', userQuery: { sql: 'select team_org as tenant from usr where user_id = ?' }, userColumn: 'team_org' },
};
/** An AuthQuery of its own (the same text, but the backend's tables as far as the console knows) and a TenantQuery. */
const MEMBERS: BackendModule = {
  ...BASE,
  name: 'members',
  issuer: 'members',
  defaultTables: false,
  tenant: { column: 'org_id', type: 'integer', userQuery: { sql: 'select org_id as tenant from member where user_id = ?' } },
};

let carl = 0;

beforeAll(async () => {
  const databaseUrl = await ownDatabase('console_tenant');
  connection = await connectTo(databaseUrl);
  await connection.query('alter table usr add column team_org int unsigned null');
  // The members backend's own table of tenants, which its TenantQuery reads at each sign-in.
  await connection.query('create table member (user_id int unsigned not null primary key, org_id int unsigned not null)');
  await connection.query('insert into member (user_id, org_id) values (2, 1)');
  carl = await addUser(connection, 'carl-team', 'carl-pass-long', ['xmlrest-operator']);
  await connection.query("update usr set team_org = 4 where user_name = 'carl-team'");
  await addUser(connection, 'tina-team', 'tina-pass-long', []);
  database = openDatabase(databaseUrl);
  const backends = [MEMBERS, TEAMS];
  const adminConsole = consoleMiddleware({
    basePath: '',
    backends: () => backends,
    database,
    root: 'test/.tmp/console-tenant',
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
  await connection?.end();
});

/** bob, the demo's operator: by a token of teams' own (a Bearer backend), by Basic on members. */
let bobToken = '';
const operatorOn = (route: string) => (route.startsWith('b/teams/') ? bobToken : basic('bob', 'bob-pass'));

async function tokenOf(user: string, password: string): Promise<string> {
  const issued = await fetch(`${url}/teams/`, { method: 'POST', body: new URLSearchParams({ auth: 'bearer', userid: user, password }) });
  expect(issued.status).toBe(200);
  return `Bearer ${((await issued.json()) as { token: string }).token}`;
}

async function consoleCall(method: string, route: string, body?: unknown, authorization = operatorOn(route)) {
  const headers: Record<string, string> = { 'x-xmlrest-console': '1', authorization };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${url}/_console/api/${route}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as any };
}

async function tenantOf(name: string): Promise<string | null> {
  const [rows] = await connection.execute('select cast(team_org as char) as tenant from usr where user_name = ?', [name]);
  return (rows as { tenant: string | null }[])[0]!.tenant;
}

describe('console API: a user’s tenant', () => {
  beforeAll(async () => {
    bobToken = await tokenOf('bob', 'bob-pass');
  });

  it('lists users with their tenant, sets one of the type, and refuses one that is not', async () => {
    expect((await consoleCall('GET', 'b/teams/tenant')).body).toEqual({ tenant: { type: 'integer', column: 'org_id', settable: true } });
    const list = await consoleCall('GET', 'b/teams/users?q=carl-team');
    expect(list.body.users).toEqual([expect.objectContaining({ user_name: 'carl-team', tenant: '4' })]);
    for (const wrong of ['04', 'four', '', 7]) {
      const refused = await consoleCall('PUT', `b/teams/users/${carl}/tenant`, { tenant: wrong });
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ status: 400, message: expect.stringMatching(/tenant/) });
    }
    expect(await tenantOf('carl-team')).toBe('4');
    const set = await consoleCall('PUT', `b/teams/users/${carl}/tenant`, { tenant: '5' });
    expect(set).toMatchObject({ status: 200, body: { user_name: 'carl-team', tenant: '5' } });
    expect(await tenantOf('carl-team')).toBe('5');
    const cleared = await consoleCall('PUT', `b/teams/users/${carl}/tenant`, { tenant: null });
    expect(cleared.body).toMatchObject({ tenant: null });
    const [history] = await connection.query("select action, target, detail from xmlrest_console_audit where action = 'set tenant' order by id");
    expect(history).toEqual([
      { action: 'set tenant', target: 'carl-team', detail: '5' },
      { action: 'set tenant', target: 'carl-team', detail: 'none' },
    ]);
  });

  it('ends a token the user was issued before the change, at once on this server', async () => {
    // The test before ended carl's tokens up to its second (revocations are to the second): a token of a later one.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const token = await tokenOf('carl-team', 'carl-pass-long');
    expect((await consoleCall('GET', 'b/teams/me', undefined, token)).status).toBe(200);
    expect((await consoleCall('PUT', `b/teams/users/${carl}/tenant`, { tenant: '6' })).status).toBe(200);
    expect((await consoleCall('GET', 'b/teams/me', undefined, token)).status).toBe(401);
    const [revoked] = await connection.query("select count(*) as n from xmlrest_revoked_user where backend = 'teams' and sub = ?", [String(carl)]);
    expect(Number((revoked as { n: number }[])[0]!.n)).toBe(1);
    // Not on a backend that does not read the column.
    const [elsewhere] = await connection.query("select count(*) as n from xmlrest_revoked_user where backend = 'members' and sub = ?", [String(carl)]);
    expect(Number((elsewhere as { n: number }[])[0]!.n)).toBe(0);
  });

  it('has nothing to set on a backend whose tenant comes from a TenantQuery', async () => {
    expect((await consoleCall('GET', 'b/members/tenant')).body).toEqual({ tenant: { type: 'integer', column: 'org_id', settable: false } });
  });
});

describe('console in headless Chromium: a user’s tenant', () => {
  let page: Page;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    browser = await chromium.launch({ executablePath: ensureChromium(), args: CHROMIUM_ARGS });
  });
  beforeEach(async () => {
    page = await browser!.newPage({ viewport: { width: 1200, height: 800 } });
  });
  afterEach(async () => {
    await page.close();
  });

  async function signIn(backend: string): Promise<void> {
    await page.goto(`${url}/_console/`);
    await page.selectOption('#backend', backend);
    await page.fill('#user', 'bob');
    await page.fill('#password', 'bob-pass');
    await page.click('button[type=submit]');
    await page.click('nav button:has-text("Users")');
  }

  it('shows each user’s tenant and sets one', async () => {
    await connection.query("update usr set team_org = 3 where user_name = 'tina-team'");
    await signIn('teams');
    await page.fill('[aria-label="Find users"]', 'tina-team');
    await page.press('[aria-label="Find users"]', 'Enter');
    await page.waitForSelector('[data-testid="user-tina-team"]');
    expect(await page.textContent('[data-testid="tenant-tina-team"]')).toBe('3');
    await page.fill('[aria-label="Tenant of tina-team"]', '08');
    await page.click('[aria-label="Set the tenant of tina-team"]');
    await page.waitForSelector('.message.error');
    expect(await page.textContent('.message.error')).toContain('a tenant here is a whole number');
    await page.fill('[aria-label="Tenant of tina-team"]', '8');
    await page.click('[aria-label="Set the tenant of tina-team"]');
    await page.waitForSelector('[data-testid="tenant-tina-team"]:has-text("8")');
    expect(await page.textContent('.message.ok')).toContain('Moved tina-team to tenant 8; their tokens, sessions and API keys ended.');
    expect(await tenantOf('tina-team')).toBe('8');
    await page.screenshot({ path: `${ARTIFACTS}/console-tenant-set.png`, fullPage: true });
  });

  it('says there is nothing to set on a backend whose tenant comes from a TenantQuery', async () => {
    await signIn('members');
    await page.waitForSelector('[data-testid="tenant-queried"]');
    expect(await page.textContent('[data-testid="unmanaged"]')).toContain('own AuthQuery');
    expect(await page.textContent('[data-testid="tenant-queried"]')).toContain('there is nothing to set here');
    expect(await page.$('[aria-label^="Tenant of"]')).toBeNull();
  });
});
