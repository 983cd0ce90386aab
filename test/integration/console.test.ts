import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type mysql from 'mysql2/promise';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { consoleMiddleware } from '../../console/server.js';
import { createLogger, createReloadableApp, type Database, listen, openDatabase, type RunningServer } from '../../runtime/index.js';
import { CHROMIUM_ARGS, ensureChromium } from '../../scripts/chromium.js';
import { connectTo } from '../../scripts/connection.js';
import { ProjectHost } from '../../scripts/project-host.js';
import { addPlainTextUser, addUser } from '../../scripts/schema.js';
import { DEMO_WEBHOOK_ENV } from '../support/demo-webhook.js';
import { ownDatabase } from '../support/own-database.js';
import { basic, decodeJwt, TEST_SECRET } from '../support/server.js';

/**
 * The admin console over a copy of the demo resources (it rewrites
 * them), on the real server and MariaDB, driven by the API and by headless
 * Chromium. Screenshots go to test/.artifacts/console-*.png. The database is
 * this file's own: the console refuses edits while other servers (other
 * files') serve its database.
 */
const ROOT = 'test/.tmp/console';
const ARTIFACTS = 'test/.artifacts';
let running: RunningServer;
let database: Database;
let browser: Browser | undefined;
let url = '';
let adamId = 0;
let databaseUrl = '';

beforeAll(async () => {
  rmSync(ROOT, { recursive: true, force: true });
  mkdirSync(ROOT, { recursive: true });
  cpSync('resources', path.join(ROOT, 'resources'), { recursive: true });
  // A backend with its own AuthQuery: the console must not manage its users.
  cpSync('test/golden/lab/resources/lab', path.join(ROOT, 'resources/lab'), { recursive: true, filter: (file) => !file.endsWith('broken.xml') });
  mkdirSync(path.join(ROOT, 'generated'), { recursive: true });
  cpSync('generated/column-types.json', path.join(ROOT, 'generated/column-types.json'));

  databaseUrl = await ownDatabase('console');
  const connection = await connectTo(databaseUrl);
  // The lab backend's own AuthQuery compares $pass in SQL: its users' rows hold plain text.
  await addPlainTextUser(connection, 'olga-operator', 'olga-pass-1', ['operator']);
  // An admin of its own, whose tokens a test revokes (revocations live in the database all tests share).
  adamId = await addUser(connection, 'adam-admin', 'adam-pass-1', ['admin']);
  await addUser(connection, 'nina-nobody', 'nina-pass-1', []);
  await connection.end();

  database = openDatabase(databaseUrl);
  let host: ProjectHost | undefined;
  const adminConsole = consoleMiddleware({
    basePath: '',
    backends: () => host?.backends ?? [],
    database,
    root: ROOT,
    regenerate: () => host!.regenerate(),
    assetsDir: 'dist/console-ui',
    server: () => server,
  });
  const server = createReloadableApp({
    backends: [],
    middleware: [adminConsole],
    database,
    jwtSecret: TEST_SECRET,
    webhookSecrets: DEMO_WEBHOOK_ENV,
    logger: createLogger('silent'),
  });
  host = new ProjectHost({ root: ROOT, runtimeDir: '../../../runtime', databaseUrl: undefined, server, log: () => {} });
  expect((await host.regenerate()).ok).toBe(true);
  running = await listen(server.app, 0);
  url = running.url;
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await running?.close();
  await database?.end();
});

async function shapeA(backend: string, user: string, password: string): Promise<string> {
  const response = await fetch(`${url}/${backend}/`, { method: 'POST', body: new URLSearchParams({ auth: 'bearer', userid: user, password }) });
  expect(response.status).toBe(200);
  return `Bearer ${((await response.json()) as { token: string }).token}`;
}

const ADMIN = () => shapeA('shop', 'bob', 'bob-pass');

async function consoleCall(method: string, route: string, authorization?: string, body?: unknown) {
  const headers: Record<string, string> = { 'x-xmlrest-console': '1' };
  if (authorization) headers.authorization = authorization;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${url}/_console/api/${route}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as any };
}

describe('console API', () => {
  const endpoints: [string, string, unknown?][] = [
    ['GET', 'b/shop/me'],
    ['GET', 'b/shop/resources'],
    ['PUT', 'b/shop/resources/products/1.0/auth', { auth: 'x', etag: 'x' }],
    ['GET', 'b/shop/roles'],
    ['POST', 'b/shop/roles', { name: 'x' }],
    ['GET', 'b/shop/roles/customer/users'],
    ['GET', 'b/shop/users'],
    ['POST', 'b/shop/users', { name: 'x', password: 'xxxxxxxx' }],
    ['PUT', 'b/shop/users/1/roles/admin'],
    ['DELETE', 'b/shop/users/2/roles/admin'],
    ['GET', 'b/shop/users/1/access'],
    ['GET', 'b/shop/resources/orders/1.0/access'],
    ['POST', 'b/shop/users/1/revoke-tokens'],
    ['GET', 'b/staff/users'],
  ];

  it.each(endpoints)('%s %s refuses an unauthenticated call and a non-admin call, and changes nothing', async (method, route, body) => {
    const before = readFileSync(path.join(ROOT, 'resources/shop/products.xml'), 'utf8');
    const anonymous = await consoleCall(method, route, undefined, body);
    expect(anonymous.status).toBe(403);
    expect(anonymous.body).toEqual({ message: 'Forbidden access to resource', status: 403 });
    const customer = route.startsWith('b/staff') ? basic('carol', 'carol-pass') : await shapeA('shop', 'alice', 'alice-pass');
    const refused = await consoleCall(method, route, customer, body);
    expect(refused.status).toBe(403);
    const wrong = await consoleCall(method, route, route.startsWith('b/staff') ? basic('carol', 'nope') : 'Bearer nope.nope.nope', body);
    expect(wrong.status).toBe(401);
    expect(readFileSync(path.join(ROOT, 'resources/shop/products.xml'), 'utf8')).toBe(before);
  });

  it('lists backends without credentials, and nothing else', async () => {
    const { status, body } = await consoleCall('GET', 'backends');
    expect(status).toBe(200);
    expect(body.backends).toEqual(
      expect.arrayContaining([
        { name: 'shop', authScheme: 'Bearer', consoleRole: 'admin' },
        { name: 'staff', authScheme: 'Basic', consoleRole: 'xmlrest-operator' },
      ]),
    );
  });

  it('serves its page with the headers of a page a browser renders, and its API with those of an API', async () => {
    const page = await fetch(`${url}/_console/`);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(page.headers.get('cross-origin-opener-policy')).toBe('same-origin');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    const api = await fetch(`${url}/_console/api/backends`);
    expect(api.headers.get('content-security-policy')).toBe("default-src 'none'; frame-ancestors 'none'");
    expect(api.headers.get('cross-origin-opener-policy')).toBeNull();
  });

  it('refuses a concurrent edit instead of overwriting it, and writes atomically', async () => {
    const admin = await ADMIN();
    const { body } = await consoleCall('GET', 'b/shop/resources', admin);
    const report = body.resources.find((resource: { name: string }) => resource.name === 'report');
    const file = path.join(ROOT, 'resources/shop/report.xml');
    writeFileSync(file, readFileSync(file, 'utf8') + '<!-- edited by hand meanwhile -->\n');
    const refused = await consoleCall('PUT', 'b/shop/resources/report/1.0/auth', admin, { auth: 'customer', etag: report.etag });
    expect(refused.status).toBe(409);
    expect(refused.body.message).toBe('resources/shop/report.xml changed since the page loaded it: reload and try again');
    expect(readFileSync(file, 'utf8')).toContain('auth="admin"');
  });

  it('refuses changes without the console header (no cross-site form can send it), and never challenges the browser', async () => {
    const admin = await ADMIN();
    const forged = await fetch(`${url}/_console/api/b/shop/users/1/revoke-tokens`, { method: 'POST', headers: { authorization: admin } });
    expect(forged.status).toBe(403);
    expect(await forged.json()).toEqual({ message: 'Console changes need the X-XMLRest-Console header', status: 403 });
    const wrong = await fetch(`${url}/_console/api/b/staff/me`, { headers: { authorization: basic('carol', 'wrong') } });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toBeNull();
  });

  it('refuses a token that was revoked, as the API does', async () => {
    const adam = await shapeA('shop', 'adam-admin', 'adam-pass-1');
    expect((await consoleCall('GET', 'b/shop/me', adam)).status).toBe(200);
    // adam revokes his own tokens: the one he used stops opening the console at once.
    expect((await consoleCall('POST', `b/shop/users/${adamId}/revoke-tokens`, adam)).status).toBe(200);
    const refused = await consoleCall('GET', 'b/shop/me', adam);
    expect(refused.status).toBe(401);
    expect(refused.body.message).toBe('Invalid token: token revoked');
    // A new token, issued after the revocation second, works again: the server (in this process) is a second on.
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + 1100);
      expect((await consoleCall('GET', 'b/shop/me', await shapeA('shop', 'adam-admin', 'adam-pass-1'))).status).toBe(200);
    } finally {
      vi.useRealTimers();
    }
  });

  it('refuses a role name that is not one', async () => {
    const admin = await ADMIN();
    const { body } = await consoleCall('GET', 'b/shop/resources', admin);
    const etag = body.resources.find((resource: { name: string }) => resource.name === 'products').etag;
    const refused = await consoleCall('PUT', 'b/shop/resources/products/1.0/auth', admin, { auth: 'a" onload="x', etag });
    expect(refused.status).toBe(400);
  });

  it('says what it cannot manage on a backend with its own AuthQuery', async () => {
    const operator = await shapeA('lab', 'olga-operator', 'olga-pass-1');
    expect((await consoleCall('GET', 'b/lab/me', operator)).body.manageable).toBe(false);
    const users = await consoleCall('GET', 'b/lab/users', operator);
    expect(users.status).toBe(409);
    expect(users.body.message).toContain('its own AuthQuery');
    expect((await consoleCall('GET', 'b/lab/resources', operator)).status).toBe(200);
  });

  it('cannot tell, on a backend with its own AuthQuery, whether a user may call a route without their password; with it, answers from the query (docs/internals/contract.md §8)', async () => {
    const operator = await shapeA('lab', 'olga-operator', 'olga-pass-1');
    const whoami = encodeURIComponent('/lab/v1.0/whoami');
    const unknown = await consoleCall('GET', `b/lab/explain?user=olga-operator&method=GET&path=${whoami}`, operator);
    expect(unknown.body).toMatchObject({ allowed: null, holds: null, needs: ['member'] });
    expect(unknown.body.reason).toContain('its own AuthQuery');
    // A public route needs no roles: that much it can tell.
    expect((await consoleCall('GET', `b/lab/explain?user=olga-operator&method=GET&path=${encodeURIComponent('/lab/v1.0/echo')}`, operator)).body).toMatchObject(
      {
        allowed: true,
        needs: 'public',
      },
    );
    const told = await consoleCall('POST', 'b/lab/explain', operator, {
      user: 'olga-operator',
      method: 'GET',
      path: '/lab/v1.0/whoami',
      password: 'olga-pass-1',
    });
    expect(told.body).toMatchObject({ allowed: false, holds: ['operator'], reason: 'olga-operator holds none of member' });
    const wrong = await consoleCall('POST', 'b/lab/explain', operator, { user: 'olga-operator', method: 'GET', path: '/lab/v1.0/whoami', password: 'not-it' });
    expect(wrong.body).toMatchObject({ allowed: false, holds: null });
    expect(wrong.body.reason).toContain('the server would refuse these credentials (401)');
    expect((await consoleCall('POST', 'b/lab/explain', operator, { user: 'olga-operator', method: 'GET', path: '/lab/v1.0/whoami' })).status).toBe(400);
  });

  it('pages users by id, and finds them by name prefix', async () => {
    const admin = await ADMIN();
    const first = await consoleCall('GET', 'b/shop/users', admin);
    expect(first.body.users[0]).toMatchObject({ user_id: 1, user_name: 'alice', roles: ['customer'] });
    const found = await consoleCall('GET', 'b/shop/users?q=car', admin);
    expect(found.body.users.map((user: { user_name: string }) => user.user_name)).toEqual(['carol']);
    const literal = await consoleCall('GET', `b/shop/users?q=${encodeURIComponent('%')}`, admin);
    expect(literal.body.users).toEqual([]);
  });
});

/** Whether a user's password opens a shop token now (shape A): 200, or 401. */
async function signsIn(user: string, password: string): Promise<number> {
  return (await fetch(`${url}/shop/`, { method: 'POST', body: new URLSearchParams({ auth: 'bearer', userid: user, password }) })).status;
}

describe('console API: access rules, users and roles, history (docs/internals/contract.md §8)', () => {
  let connection: mysql.Connection;
  beforeAll(async () => {
    connection = await connectTo(databaseUrl);
  });
  afterAll(() => connection.end());
  const idOf = async (name: string) =>
    (await consoleCall('GET', `b/shop/users?q=${encodeURIComponent(name)}`, await ADMIN())).body.users[0]?.user_id as number | undefined;
  const etagOf = async (name: string) =>
    (await consoleCall('GET', 'b/shop/resources', await ADMIN())).body.resources.find(
      (resource: { name: string; version: string }) => resource.name === name && resource.version === '1.0',
    ).etag;

  it('says, before a role change is saved, which users gain access and which lose it', async () => {
    await addUser(connection, 'imp-reader', 'imp-reader-pass', ['imp-reading']);
    const admin = await ADMIN();
    // report: admin -> imp-reading
    const swap = await consoleCall('GET', 'b/shop/resources/report/1.0/impact?auth=imp-reading', admin);
    expect(swap.status).toBe(200);
    expect(swap.body.methods).toEqual(['GET']);
    expect(swap.body.gain).toEqual({ count: 1, users: ['imp-reader'], anonymous: false });
    expect(swap.body.lose.users).toContain('bob');
    expect(swap.body.lose.count).toBeGreaterThanOrEqual(2);
    expect(swap.body.lose.users).not.toContain('alice');
    // Adding a role to the list loses nobody.
    const widen = await consoleCall('GET', `b/shop/resources/report/1.0/impact?auth=${encodeURIComponent('admin imp-reading')}`, admin);
    expect(widen.body.lose).toEqual({ count: 0, users: [], anonymous: false });
    expect(widen.body.gain.users).toEqual(['imp-reader']);
    // Making it public (no auth at all): everyone not an admin gains, callers without credentials too.
    const open = await consoleCall('GET', 'b/shop/resources/report/1.0/impact', admin);
    expect(open.body.gain.anonymous).toBe(true);
    expect(open.body.gain.users).toContain('alice');
    expect(open.body.lose.count).toBe(0);
    // "*" admits whoever holds any role: nina, who holds none, gains nothing.
    const anyone = await consoleCall('GET', 'b/shop/resources/report/1.0/impact?auth=*', admin);
    expect(anyone.body.gain.users).toContain('alice');
    expect(anyone.body.gain.users).not.toContain('nina-nobody');
    // Nothing was written.
    expect(readFileSync(path.join(ROOT, 'resources/shop/report.xml'), 'utf8')).toContain('auth="admin"');
  });

  it('sets several roles or * on a resource, enforced at once and written to access.lock', async () => {
    await addUser(connection, 'multi-a', 'multi-a-pass', ['multi-role-a']);
    const admin = await ADMIN();
    const lock = () => readFileSync(path.join(ROOT, 'access.lock'), 'utf8');
    const holder = await shapeA('shop', 'multi-a', 'multi-a-pass');
    const report = async (authorization: string) => (await fetch(`${url}/shop/v1.0/report`, { headers: { authorization } })).status;
    expect(await report(holder)).toBe(403);
    try {
      const set = await consoleCall('PUT', 'b/shop/resources/report/1.0/auth', admin, { auth: 'multi-role-a admin', etag: await etagOf('report') });
      expect(set.status).toBe(200);
      expect(set.body.auth).toBe('multi-role-a admin');
      expect(readFileSync(path.join(ROOT, 'resources/shop/report.xml'), 'utf8')).toContain('auth="multi-role-a admin"');
      expect(lock()).toContain('shop /shop/v1.0/report GET admin multi-role-a\n');
      expect(await report(holder)).toBe(200);
      expect(await report(admin)).toBe(200);
      const star = await consoleCall('PUT', 'b/shop/resources/report/1.0/auth', admin, { auth: '*', etag: await etagOf('report') });
      expect(star.status).toBe(200);
      expect(lock()).toContain('shop /shop/v1.0/report GET *\n');
      expect(await report(await shapeA('shop', 'alice', 'alice-pass'))).toBe(200);
      expect((await fetch(`${url}/shop/v1.0/report`)).status).toBe(403);
      const mixed = await consoleCall('PUT', 'b/shop/resources/report/1.0/auth', admin, { auth: '* admin', etag: await etagOf('report') });
      expect(mixed.status).toBe(400);
    } finally {
      expect((await consoleCall('PUT', 'b/shop/resources/report/1.0/auth', admin, { auth: 'admin', etag: await etagOf('report') })).status).toBe(200);
    }
    expect(lock()).toContain('shop /shop/v1.0/report GET admin\n');
    expect(await report(holder)).toBe(403);
  });

  it('refuses an auth with no role name in it, on a resource and on a method: such a list is a mistake, never public', async () => {
    const admin = await ADMIN();
    const report = path.join(ROOT, 'resources/shop/report.xml');
    const reviews = path.join(ROOT, 'resources/shop/reviews.xml');
    const before = { report: readFileSync(report, 'utf8'), reviews: readFileSync(reviews, 'utf8') };
    for (const auth of [' ', '', '\t\n ']) {
      const refused = await consoleCall('PUT', 'b/shop/resources/report/1.0/auth', admin, { auth, etag: await etagOf('report') });
      expect(refused).toEqual({ status: 400, body: { message: 'auth holds no role name', status: 400 } });
      expect((await consoleCall('GET', `b/shop/resources/report/1.0/impact?auth=${encodeURIComponent(auth)}`, admin)).body.message).toBe(
        'auth holds no role name',
      );
    }
    // On a method, exactly "" is a public method (docs/internals/contract.md §8); white space alone is no role name there either.
    const method = await consoleCall('PUT', 'b/shop/resources/reviews/1.0/auth', admin, { method: 'DELETE', auth: ' ', etag: await etagOf('reviews') });
    expect(method).toEqual({ status: 400, body: { message: 'auth holds no role name', status: 400 } });
    // Public is said explicitly (null), never by leaving auth out.
    const missing = await consoleCall('PUT', 'b/shop/resources/report/1.0/auth', admin, { etag: await etagOf('report') });
    expect(missing.status).toBe(400);
    expect({ report: readFileSync(report, 'utf8'), reviews: readFileSync(reviews, 'utf8') }).toEqual(before);
    expect((await fetch(`${url}/shop/v1.0/report`)).status).toBe(403);
    expect((await fetch(`${url}/shop/v1.0/report`, { headers: { authorization: await shapeA('shop', 'alice', 'alice-pass') } })).status).toBe(403);
  });

  it('sets and clears a method’s own rule: previewed, enforced at once, in access.lock and the history', async () => {
    const admin = await ADMIN();
    const file = path.join(ROOT, 'resources/shop/report.xml');
    const original = readFileSync(file, 'utf8');
    const lock = () => readFileSync(path.join(ROOT, 'access.lock'), 'utf8');
    try {
      // The preview of a method's change is that method's: making GET public opens it to callers without credentials.
      const preview = await consoleCall('GET', 'b/shop/resources/report/1.0/impact?method=GET&auth=', admin);
      expect(preview.status).toBe(200);
      expect(preview.body.methods).toEqual(['GET']);
      expect(preview.body.gain).toMatchObject({ anonymous: true });
      expect(preview.body.gain.users).toContain('alice');
      const set = await consoleCall('PUT', 'b/shop/resources/report/1.0/auth', admin, { method: 'get', auth: '', etag: await etagOf('report') });
      expect(set.status).toBe(200);
      expect(set.body).toMatchObject({ method: 'GET', auth: '' });
      expect(readFileSync(file, 'utf8')).toBe(original.replace('<Request method="GET" owner="shared">', '<Request method="GET" auth="" owner="shared">'));
      expect(lock()).toContain('shop /shop/v1.0/report GET public\n');
      expect((await fetch(`${url}/shop/v1.0/report`)).status).toBe(200);
      const listed = (await consoleCall('GET', 'b/shop/resources', admin)).body.resources.find((resource: { name: string }) => resource.name === 'report');
      expect(listed).toMatchObject({ auth: 'admin', requestAuth: { GET: '' }, access: { GET: 'public' } });
      // A list on the method replaces the resource's for it; a resource change no longer reaches that method.
      expect((await consoleCall('GET', 'b/shop/resources/report/1.0/impact?auth=customer', admin)).body.methods).toEqual([]);
      const list = await consoleCall('PUT', 'b/shop/resources/report/1.0/auth', admin, {
        method: 'GET',
        auth: 'customer  admin',
        etag: await etagOf('report'),
      });
      expect(list.body.auth).toBe('customer admin');
      expect(lock()).toContain('shop /shop/v1.0/report GET admin customer\n');
      expect((await fetch(`${url}/shop/v1.0/report`, { headers: { authorization: await shapeA('shop', 'alice', 'alice-pass') } })).status).toBe(200);
      // Removing the method's own rule: it inherits the resource's again.
      const inherit = await consoleCall('PUT', 'b/shop/resources/report/1.0/auth', admin, { method: 'GET', auth: null, etag: await etagOf('report') });
      expect(inherit.status).toBe(200);
      expect(readFileSync(file, 'utf8')).toBe(original);
      expect(lock()).toContain('shop /shop/v1.0/report GET admin\n');
      expect((await fetch(`${url}/shop/v1.0/report`)).status).toBe(403);
      const history = (await consoleCall('GET', 'b/shop/history', admin)).body.entries
        .filter((entry: { target: string }) => entry.target === 'report v1.0 GET')
        .map((entry: { action: string; detail: string }) => `${entry.action}: ${entry.detail}`);
      expect(history.slice(0, 3)).toEqual([
        'clear method auth: customer admin -> inherit',
        'set method auth: public -> customer admin',
        'set method auth: inherit -> public',
      ]);
      // A method the resource does not have, or no method at all.
      expect(
        (await consoleCall('PUT', 'b/shop/resources/report/1.0/auth', admin, { method: 'DELETE', auth: 'admin', etag: await etagOf('report') })).status,
      ).toBe(404);
      expect(
        (await consoleCall('PUT', 'b/shop/resources/report/1.0/auth', admin, { method: 'FETCH', auth: 'admin', etag: await etagOf('report') })).status,
      ).toBe(400);
    } finally {
      if (readFileSync(file, 'utf8') !== original) {
        writeFileSync(file, original);
        await consoleCall('PUT', 'b/shop/resources/report/1.0/auth', admin, { auth: 'admin', etag: await etagOf('report') });
      }
    }
  });

  it('answers a duplicate role or user with a clear message', async () => {
    const admin = await ADMIN();
    expect((await consoleCall('POST', 'b/shop/roles', admin, { name: 'dup-role' })).status).toBe(201);
    const again = await consoleCall('POST', 'b/shop/roles', admin, { name: 'dup-role' });
    expect(again).toEqual({ status: 409, body: { message: 'The role dup-role exists already', status: 409 } });
    // A role that users hold exists too, though nobody created it on the console.
    expect((await consoleCall('POST', 'b/shop/roles', admin, { name: 'customer' })).body.message).toBe('The role customer exists already');
    const user = await consoleCall('POST', 'b/shop/users', admin, { name: 'alice', password: 'long-enough-1' });
    expect(user).toEqual({ status: 409, body: { message: 'A user named alice exists already', status: 409 } });
  });

  it('deletes a role with its grants, ending its holders’ access, but never the console role', async () => {
    const admin = await ADMIN();
    // A role of shop's: created on its console (console/scope.ts).
    expect((await consoleCall('POST', 'b/shop/roles', admin, { name: 'doomed-role' })).status).toBe(201);
    await addUser(connection, 'doomed-holder', 'doomed-pass-1', ['doomed-role', 'guest']);
    const token = await shapeA('shop', 'doomed-holder', 'doomed-pass-1');
    expect((await fetch(`${url}/shop/v1.0/account`, { headers: { authorization: token } })).status).toBe(200);
    const deleted = await consoleCall('DELETE', 'b/shop/roles/doomed-role', admin);
    expect(deleted).toEqual({ status: 200, body: { deleted: 'doomed-role', grants: 1, stillNamedBy: [] } });
    const id = await idOf('doomed-holder');
    expect((await consoleCall('GET', `b/shop/users/${id}/access`, admin)).body.user.roles).toEqual(['guest']);
    // Its holders' tokens end at once on this server (the triggers revoke them everywhere within a poll).
    expect((await fetch(`${url}/shop/v1.0/account`, { headers: { authorization: token } })).status).toBe(401);
    const own = await consoleCall('DELETE', 'b/shop/roles/admin', admin);
    expect(own.status).toBe(409);
    expect(own.body.message).toBe('The role admin opens this console: it cannot be deleted here');
  });

  it('disables and enables a user: a disabled one cannot sign in, and its tokens end', async () => {
    await addUser(connection, 'sleeper', 'sleeper-pass-1', ['customer']);
    const admin = await ADMIN();
    const id = await idOf('sleeper');
    const token = await shapeA('shop', 'sleeper', 'sleeper-pass-1');
    const disabled = await consoleCall('POST', `b/shop/users/${id}/disable`, admin);
    expect(disabled.status).toBe(200);
    expect(disabled.body).toMatchObject({ user_name: 'sleeper', disabled: true, roles: ['customer'] });
    expect(await signsIn('sleeper', 'sleeper-pass-1')).toBe(401);
    expect((await fetch(`${url}/shop/v1.0/orders`, { headers: { authorization: token } })).status).toBe(401);
    const enabled = await consoleCall('POST', `b/shop/users/${id}/enable`, admin);
    expect(enabled.body).toMatchObject({ disabled: false });
    expect(await signsIn('sleeper', 'sleeper-pass-1')).toBe(200);
    const self = await consoleCall('POST', 'b/shop/users/2/disable', admin);
    expect(self).toEqual({ status: 409, body: { message: 'You cannot disable yourself', status: 409 } });
  });

  it('resets a password: the old one stops working, the new one works', async () => {
    await addUser(connection, 'forgetful', 'forgetful-old-1', ['customer']);
    const admin = await ADMIN();
    const id = await idOf('forgetful');
    expect((await consoleCall('PUT', `b/shop/users/${id}/password`, admin, { password: 'short' })).status).toBe(400);
    expect((await consoleCall('PUT', `b/shop/users/${id}/password`, admin, { password: 'forgetful-new-1' })).status).toBe(200);
    expect(await signsIn('forgetful', 'forgetful-old-1')).toBe(401);
    expect(await signsIn('forgetful', 'forgetful-new-1')).toBe(200);
  });

  it('removes a user, but never the operator', async () => {
    await addUser(connection, 'leaving-for-good', 'leaving-pass-1', ['customer']);
    const admin = await ADMIN();
    const id = await idOf('leaving-for-good');
    expect(await consoleCall('DELETE', `b/shop/users/${id}`, admin)).toEqual({ status: 200, body: { removed: id } });
    expect((await consoleCall('GET', `b/shop/users/${id}/access`, admin)).status).toBe(404);
    expect(await signsIn('leaving-for-good', 'leaving-pass-1')).toBe(401);
    expect(await consoleCall('DELETE', 'b/shop/users/2', admin)).toEqual({ status: 409, body: { message: 'You cannot remove yourself', status: 409 } });
  });

  it('explains why a user may or may not call a route, by user name', async () => {
    const admin = await ADMIN();
    const allowed = await consoleCall('GET', `b/shop/explain?user=bob&method=GET&path=${encodeURIComponent('/shop/v1.0/report')}`, admin);
    expect(allowed.body).toMatchObject({ allowed: true, backend: 'shop', needs: ['admin'], reason: 'bob holds admin' });
    const denied = await consoleCall('GET', `b/shop/explain?user=alice&method=delete&path=${encodeURIComponent('/shop/v1.0/reviews')}`, admin);
    expect(denied.body).toMatchObject({ allowed: false, needs: ['admin'], reason: 'alice holds none of admin' });
    expect(denied.body.holds).toContain('customer');
    const open = await consoleCall('GET', `b/shop/explain?user=alice&method=GET&path=${encodeURIComponent('/shop/v1.0/reviews')}`, admin);
    expect(open.body).toMatchObject({ allowed: true, needs: 'public' });
    const nobody = await consoleCall('GET', `b/shop/explain?user=no-such-user&method=GET&path=${encodeURIComponent('/shop/v1.0/report')}`, admin);
    expect(nobody.body).toMatchObject({ allowed: false, reason: 'there is no user no-such-user' });
    expect((await consoleCall('GET', 'b/shop/explain?user=bob&method=GET&path=/shop/v1.0/nothing', admin)).status).toBe(404);
  });

  it('writes every change to the history: who, what, when and from where', async () => {
    const admin = await ADMIN();
    expect((await consoleCall('POST', 'b/shop/roles', admin, { name: 'audited-role' })).status).toBe(201);
    const { status, body } = await consoleCall('GET', 'b/shop/history', admin);
    expect(status).toBe(200);
    const entry = body.entries.find((candidate: { target: string }) => candidate.target === 'audited-role');
    expect(entry).toMatchObject({ backend: 'shop', actor: 'bob (2) by token', action: 'create role', address: expect.stringMatching(/127\.0\.0\.1/) });
    expect(Date.now() - new Date(entry.at).getTime()).toBeLessThan(60_000);
    // The newest first.
    expect(body.entries[0].id).toBeGreaterThanOrEqual(entry.id);
  });
});

/**
 * The console in headless Chromium. Each test signs in on a page of its own and sets up what it needs (its own
 * users and roles), and puts back any resource it changes, so that no test depends on another having run.
 */
describe('console in headless Chromium', () => {
  let page: Page;
  let connection: mysql.Connection;
  /** The roles a user row shows as chips (the grant list beside them names every role). */
  const chips = (user: string) => page.$$eval(`[data-testid="user-${user}"] .chip`, (nodes) => nodes.map((node) => node.firstChild?.textContent ?? ''));
  const shot = (name: string) => page.screenshot({ path: `${ARTIFACTS}/console-${name}.png`, fullPage: true });
  const call = async (route: string, authorization?: string) => (await fetch(`${url}${route}`, { headers: authorization ? { authorization } : {} })).status;
  const PRODUCTS = () => readFileSync('resources/shop/products.xml', 'utf8');

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    browser = await chromium.launch({ executablePath: ensureChromium(), args: CHROMIUM_ARGS });
    connection = await connectTo(databaseUrl);
  });
  beforeEach(async () => {
    page = await browser!.newPage({ viewport: { width: 1200, height: 800 } });
  });
  afterEach(async () => {
    await page.close();
    // A test that changed products.xml puts it back; a failed one leaves it here for the next test to find.
    if (readFileSync(path.join(ROOT, 'resources/shop/products.xml'), 'utf8') !== PRODUCTS()) await setRole('products', null);
  });
  afterAll(async () => {
    await connection.end();
  });

  async function signIn(user = 'bob', password = 'bob-pass', backend = 'shop'): Promise<void> {
    await page.goto(`${url}/_console/`);
    await page.selectOption('#backend', backend);
    await page.fill('#user', user);
    await page.fill('#password', password);
    await page.click('button[type=submit]');
  }
  /** Sets a resource's role through the API, as a page would. */
  async function setRole(resource: string, role: string | null): Promise<void> {
    const admin = await ADMIN();
    const { body } = await consoleCall('GET', 'b/shop/resources', admin);
    const etag = body.resources.find((candidate: { name: string; version: string }) => candidate.name === resource && candidate.version === '1.0').etag;
    expect((await consoleCall('PUT', `b/shop/resources/${resource}/1.0/auth`, admin, { auth: role, etag })).status).toBe(200);
  }
  /** Finds a user on the Users screen by name (the first page holds only 50). */
  async function showUser(name: string): Promise<void> {
    await page.click('nav button:has-text("Users")');
    await page.fill('[aria-label="Find users"]', name);
    await page.press('[aria-label="Find users"]', 'Enter');
    await page.waitForSelector(`[data-testid="user-${name}"]`);
  }

  it('refuses a user without the console role, with a clear message', async () => {
    const offsite: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith(url)) offsite.push(request.url());
    });
    await signIn('alice', 'alice-pass');
    await expect.poll(() => page.textContent('[data-testid=message]')).toBe('alice does not hold the console role "admin" on shop.');
    await shot('refused');
    expect(await page.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }) + document.cookie)).toBe('{}{}');
    expect(offsite).toEqual([]);
  });

  it('signs in an admin and shows every resource with an auth badge on the protected ones', async () => {
    await signIn();
    await page.waitForSelector('[data-testid=resources] tbody tr');
    expect(await page.textContent('[data-testid=who]')).toBe('bob on shop');
    expect(await page.textContent('[data-testid="resource-orders@1.0"] [data-testid=auth-badge]')).toBe('customer');
    expect(await page.textContent('[data-testid="resource-report@1.0"] [data-testid=auth-badge]')).toBe('admin');
    expect(await page.$('[data-testid="resource-products@1.0"] [data-testid=auth-badge]')).toBeNull();
    await page.fill('[aria-label="Filter resources"]', 'report');
    expect(await page.$$eval('[data-testid=resources] tbody tr', (rows) => rows.length)).toBe(1);
    await page.fill('[aria-label="Filter resources"]', '');
    await shot('resources');
    expect(await page.evaluate(() => JSON.stringify({ ...localStorage }) + document.cookie)).toBe('{}');
  });

  it('creates a role and grants it to a user', async () => {
    await addUser(connection, 'ui-grantee', 'ui-grantee-pass', ['guest']);
    await signIn();
    await page.click('nav button:has-text("Roles")');
    await page.fill('[aria-label="New role name"]', 'ui-auditor');
    await page.click('button:has-text("Create role")');
    await page.waitForSelector('[data-testid=role-ui-auditor]');
    await shot('roles');
    await showUser('ui-grantee');
    await page.selectOption('[aria-label="Role to grant ui-grantee"]', 'ui-auditor');
    await page.click('[data-testid="user-ui-grantee"] button:has-text("Grant")');
    await expect.poll(() => chips('ui-grantee')).toEqual(['guest', 'ui-auditor']);
    await shot('users');
  });

  it('sets the role on a resource, and the running server enforces it at once: 403 without it, 200 with it', async () => {
    await addUser(connection, 'ui-viewer', 'ui-viewer-pass', ['ui-viewing', 'guest']);
    const alice = await shapeA('shop', 'alice', 'alice-pass');
    const viewer = await shapeA('shop', 'ui-viewer', 'ui-viewer-pass');
    expect(await call('/shop/v1.0/products', alice)).toBe(200);
    await signIn();
    await page.waitForSelector('[data-testid="resource-products@1.0"]');
    await page.selectOption('[aria-label="Role to add to products@1.0"]', 'ui-viewing');
    await page.click('[data-testid="editor-products@1.0"] button:has-text("Add")');
    // Before it is saved, the page says who would gain access and who would lose it.
    await expect
      .poll(() => page.textContent('[data-testid=impact]'))
      .toMatch(
        // products is public: everyone may call it now, so nobody gains, and every user but ui-viewer loses it.
        /Setting products v1\.0 to ui-viewing: nobody would gain access; \d+ users \(alice, bob.*\) and callers without credentials would lose it\./,
      );
    await shot('impact');
    const clicked = Date.now();
    await page.click('[data-testid=impact] button:has-text("Confirm")');
    await expect.poll(() => call('/shop/v1.0/products', alice), { timeout: 60_000, interval: 20 }).toBe(403);
    writeFileSync(`${ARTIFACTS}/console-enforcement-ms.txt`, `${Date.now() - clicked}\n`);
    expect(await call('/shop/v1.0/products', viewer)).toBe(200);
    expect(await call('/shop/v1.0/products')).toBe(403);
    await expect.poll(() => page.textContent('[data-testid="resource-products@1.0"] [data-testid=auth-badge]')).toBe('ui-viewing');
    expect(await page.textContent('[data-testid=message]')).toContain('Set products v1.0 to ui-viewing');
    expect(readFileSync(path.join(ROOT, 'resources/shop/products.xml'), 'utf8')).toBe(PRODUCTS().replace('v="1.0"', 'v="1.0" auth="ui-viewing"'));
    expect(readFileSync(path.join(ROOT, 'generated/shop/products.ts'), 'utf8')).toContain("const PRODUCTS_GET_ROLES = ['ui-viewing'] as const;");
    // Written by rename from a sibling file: none is left behind.
    expect(readdirSync(path.join(ROOT, 'resources/shop')).filter((name) => name.includes('.tmp'))).toEqual([]);
    await shot('role-set');
  });

  it('edits a rule as a list and a method’s own rule, its action cells lined up with their rows (docs/internals/contract.md §8)', async () => {
    await addUser(connection, 'ui-list-a-holder', 'ui-list-a-pass', ['ui-list-a']);
    await addUser(connection, 'ui-list-b-holder', 'ui-list-b-pass', ['ui-list-b']);
    const report = path.join(ROOT, 'resources/shop/report.xml');
    const original = readFileSync(report, 'utf8');
    const badge = () => page.textContent('[data-testid="resource-report@1.0"] [data-testid=auth-badge]');
    const confirm = async (impact: RegExp) => {
      await expect.poll(() => page.textContent('[data-testid=impact]')).toMatch(impact);
      await page.click('[data-testid=impact] button:has-text("Confirm")');
      await page.waitForSelector('[data-testid=impact]', { state: 'detached' });
    };
    const add = async (role: string, label = 'report@1.0') => {
      await page.selectOption(`[aria-label="Role to add to ${label}"]`, role);
      await page.click(`[data-testid="editor-${label}"] button:has-text("Add")`);
    };
    try {
      await signIn();
      await page.waitForSelector('[data-testid="resource-report@1.0"]');
      // Add two roles to the list, one at a time: each keeps those already there.
      await add('ui-list-a');
      await confirm(/^Setting report v1\.0 to admin or ui-list-a: 1 user \(ui-list-a-holder\) would gain access; nobody would lose it\./);
      await expect.poll(badge).toBe('admin ui-list-a');
      await add('ui-list-b');
      await confirm(/^Setting report v1\.0 to admin or ui-list-a or ui-list-b: /);
      await expect.poll(badge).toBe('admin ui-list-a ui-list-b');
      // Remove one: the others stay.
      await page.click('[aria-label="Remove ui-list-a from report@1.0"]');
      await confirm(/^Setting report v1\.0 to admin or ui-list-b: nobody would gain access; 1 user \(ui-list-a-holder\) would lose it\./);
      await expect.poll(badge).toBe('admin ui-list-b');
      expect(readFileSync(report, 'utf8')).toBe(original.replace('auth="admin"', 'auth="admin ui-list-b"'));
      expect(await call('/shop/v1.0/report', await shapeA('shop', 'ui-list-b-holder', 'ui-list-b-pass'))).toBe(200);
      expect(await call('/shop/v1.0/report', await shapeA('shop', 'ui-list-a-holder', 'ui-list-a-pass'))).toBe(403);
      expect(await page.isDisabled('[aria-label="Remove admin from report@1.0"]')).toBe(false);

      // A rule of GET's own, which replaces the resource's for that method: public, then back to the resource's.
      await page.selectOption('[aria-label="Rule of report@1.0"]', 'GET');
      await page.waitForSelector('[data-testid="editor-report@1.0 GET"]');
      expect(await page.textContent('[data-testid="editor-report@1.0 GET"]')).toContain('the resource’s rule');
      await page.click('[data-testid="editor-report@1.0 GET"] button:has-text("Public")');
      await confirm(/^Setting report v1\.0 GET to public: .*callers without credentials would gain access; nobody would lose it\./);
      await expect.poll(() => page.textContent('[data-testid="resource-report@1.0"] [data-testid=method-access-GET]')).toBe('GET: public');
      expect(readFileSync(report, 'utf8')).toContain('<Request method="GET" auth="" owner="shared">');
      expect(await call('/shop/v1.0/report')).toBe(200);
      // The resource's list is as it was: GET's own rule overrides it.
      expect(await badge()).toBe('admin ui-list-b');
      await page.selectOption('[aria-label="Rule of report@1.0"]', 'GET');
      await add('ui-list-a', 'report@1.0 GET');
      await confirm(/^Setting report v1\.0 GET to ui-list-a: nobody would gain access; \d+ users .* and callers without credentials would lose it\./);
      await expect.poll(() => page.textContent('[data-testid="resource-report@1.0"] [data-testid=method-access-GET]')).toBe('GET: ui-list-a');

      // Every action cell (the users' too) spans its row exactly: top and bottom on the row's.
      await page.screenshot({ path: 'test/.tmp/console-rules.png', fullPage: true });
      const misaligned = async () =>
        page.$$eval('table tbody tr', (rows) =>
          rows.flatMap((row) => {
            const box = row.getBoundingClientRect();
            return [...row.children]
              .map((cell) => cell.getBoundingClientRect())
              .filter((cell) => Math.abs(cell.top - box.top) > 0.5 || Math.abs(cell.bottom - box.bottom) > 0.5)
              .map((cell) => `${row.getAttribute('data-testid')}: cell ${cell.top}-${cell.bottom}, row ${box.top}-${box.bottom}`);
          }),
        );
      expect(await page.$$eval('table tbody tr', (rows) => rows.length)).toBeGreaterThan(5);
      expect(await misaligned()).toEqual([]);
      await showUser('ui-list-a-holder');
      await page.screenshot({ path: 'test/.tmp/console-users.png', fullPage: true });
      expect(await misaligned()).toEqual([]);
    } finally {
      if (readFileSync(report, 'utf8') !== original) {
        writeFileSync(report, original);
        await setRole('report', 'admin');
      }
    }
    expect(await call('/shop/v1.0/report')).toBe(403);
  });

  it('shows effective access both ways', async () => {
    await addUser(connection, 'ui-reader', 'ui-reader-pass', ['ui-reading']);
    await setRole('products', 'ui-reading');
    await signIn();
    await page.click('nav button:has-text("Effective access")');
    await page.fill('[aria-label="User name"]', 'ui-reader');
    await page.click('button:has-text("What can this user call?")');
    await expect.poll(() => page.textContent('[data-testid=user-access]')).toContain('/shop/v1.0/products');
    expect(await page.textContent('[data-testid=user-access]')).toContain('through ui-reading');
    expect(await page.textContent('[data-testid=user-access]')).not.toContain('/shop/v1.0/report');
    await page.selectOption('[aria-label=Resource]', 'products@1.0');
    await expect.poll(() => page.textContent('[data-testid=resource-access]')).toContain('ui-reader');
    await shot('access');
  });

  it('makes an API key for a user, shows it once, and revokes it (docs/internals/contract.md §10)', async () => {
    await signIn();
    await page.click('nav button:has-text("Keys")');
    await page.fill('[aria-label="Key user"]', 'alice');
    await page.click('button:has-text("Show keys")');
    await page.waitForSelector('[data-testid=key-list]');
    await page.fill('[aria-label="Key name"]', 'ui export');
    await page.check('[aria-label="Key role customer"]');
    await page.fill('[aria-label="Key rate"]', '1000/h');
    await page.click('button:has-text("Create key")');
    await page.waitForSelector('[data-testid=new-key-text]');
    const key = (await page.textContent('[data-testid=new-key-text]'))!;
    expect(key).toMatch(/^xr_[0-9A-Za-z]{54}$/);
    const row = page.locator('[data-testid=key-row]', { hasText: 'ui export' });
    expect(await row.textContent()).toContain(`${key.slice(0, 8)}...`);
    expect(await row.textContent()).not.toContain(key.slice(8));
    await shot('keys');
    const orders = () => fetch(`${url}/shop/v1.0/orders`, { headers: { 'X-API-Key': key } }).then((response) => response.status);
    expect(await orders()).toBe(200);
    await row.locator('button:has-text("Revoke")').click();
    await expect.poll(() => page.textContent('[data-testid=message]')).toContain('every server refuses it within 5 s');
    expect(await row.textContent()).toContain('revoked');
    await expect.poll(orders, { timeout: 10_000 }).toBe(401);
    // A page reload shows the list again, never the key.
    await page.click('button:has-text("Show keys")');
    await page.waitForSelector('[data-testid=key-list]');
    expect(await page.$('[data-testid=new-key-text]')).toBeNull();
  });

  it('deletes a role with its grants, after a confirmation', async () => {
    expect((await consoleCall('POST', 'b/shop/roles', await ADMIN(), { name: 'ui-doomed-role' })).status).toBe(201);
    await addUser(connection, 'ui-doomed', 'ui-doomed-pass', ['ui-doomed-role', 'guest']);
    await signIn();
    await page.click('nav button:has-text("Roles")');
    await page.click('[aria-label="Delete role ui-doomed-role"]');
    await expect.poll(() => page.textContent('[data-testid=confirm-delete-role]')).toContain('Delete the role ui-doomed-role? 1 user hold it');
    await shot('delete-role');
    await page.click('[data-testid=confirm-delete-role] button:has-text("Delete ui-doomed-role")');
    await expect.poll(() => page.textContent('[data-testid=message]')).toBe('Deleted role ui-doomed-role and its 1 grant.');
    await expect.poll(() => page.$('[data-testid=role-ui-doomed-role]')).toBeNull();
    await showUser('ui-doomed');
    await expect.poll(() => chips('ui-doomed')).toEqual(['guest']);
  });

  it('disables and enables a user, resets its password, and removes it after a confirmation', async () => {
    await addUser(connection, 'ui-target', 'ui-target-pass', ['guest']);
    await signIn();
    await showUser('ui-target');
    await page.click('[aria-label="Disable ui-target"]');
    await page.waitForSelector('[data-testid="user-ui-target"] [data-testid=disabled-badge]');
    expect(await signsIn('ui-target', 'ui-target-pass')).toBe(401);
    await shot('user-disabled');
    await page.click('[aria-label="Enable ui-target"]');
    await expect.poll(() => page.$('[data-testid="user-ui-target"] [data-testid=disabled-badge]')).toBeNull();
    expect(await signsIn('ui-target', 'ui-target-pass')).toBe(200);

    await page.click('[aria-label="Reset the password of ui-target"]');
    await page.fill('[aria-label="New password"]', 'ui-target-new-pass');
    await page.click('[data-testid=reset-password] button:has-text("Set password")');
    await expect.poll(() => page.textContent('[data-testid=message]')).toBe('Reset the password of ui-target; their tokens ended.');
    expect(await signsIn('ui-target', 'ui-target-pass')).toBe(401);
    expect(await signsIn('ui-target', 'ui-target-new-pass')).toBe(200);

    await page.click('[aria-label="Remove ui-target"]');
    await expect.poll(() => page.textContent('[data-testid=confirm-remove-user]')).toContain('Remove ui-target?');
    await page.click('[data-testid=confirm-remove-user] button:has-text("Remove ui-target")');
    await expect.poll(() => page.textContent('[data-testid=message]')).toBe('Removed ui-target.');
    await expect.poll(() => page.$('[data-testid="user-ui-target"]')).toBeNull();
    expect(await signsIn('ui-target', 'ui-target-new-pass')).toBe(401);
  });

  it('explains why a user may not call a route, and shows the history of changes', async () => {
    await signIn();
    await page.click('nav button:has-text("Effective access")');
    await page.fill('[aria-label="Explain user"]', 'alice');
    await page.selectOption('[aria-label="Explain method"]', 'DELETE');
    await page.fill('[aria-label="Explain path"]', '/shop/v1.0/reviews');
    await page.click('button:has-text("Explain")');
    await expect.poll(() => page.textContent('[data-testid=explanation]')).toContain('Denied: DELETE /shop/v1.0/reviews on shop.');
    expect(await page.textContent('[data-testid=explanation]')).toContain('The route needs the role admin');
    await shot('explain');
    // The user of an identity provider's token (docs/internals/contract.md §9), from its claims: shop accepts no provider.
    await page.fill('[aria-label="Explain claims"]', JSON.stringify({ iss: 'https://sso.example.com', aud: 'shop-api', sub: 'x', roles: ['admin'] }));
    await page.fill('[aria-label="Explain claims path"]', '/shop/v1.0/report');
    await page.click('form:has([aria-label="Explain claims"]) button');
    await expect.poll(() => page.textContent('[data-testid=claims-explanation]')).toContain('Denied: GET /shop/v1.0/report on shop.');
    expect(await page.textContent('[data-testid=claims-explanation]')).toContain('backend shop accepts no token of the issuer https://sso.example.com');
    // Its own token's claims: the roles are its aud.
    await page.fill('[aria-label="Explain claims"]', JSON.stringify({ iss: 'shop', aud: ['customer', 'admin'], sub: '2' }));
    await page.click('form:has([aria-label="Explain claims"]) button');
    await expect.poll(() => page.textContent('[data-testid=claims-explanation]')).toContain('Allowed: GET /shop/v1.0/report on shop.');
    await shot('explain-claims');
    // Changes made on the console so far are in the history, the newest first, with who made them.
    await setRole('products', 'ui-history');
    await setRole('products', null);
    await page.click('nav button:has-text("History")');
    await page.waitForSelector('[data-testid=history-entry]');
    const rows = await page.$$eval('[data-testid=history-entry]', (nodes) => nodes.map((node) => node.textContent ?? ''));
    // Other test files share the database (and its audit table): read only this test's two entries.
    expect(
      rows
        .filter((row) => row.includes('ui-history'))
        .map((row) => row.replace(/^[0-9-]+ [0-9:]+/, '').replace(/::ffff:127\.0\.0\.1|127\.0\.0\.1|::1/, 'ADDRESS')),
    ).toEqual(['bob (2) by tokenclear authproducts v1.0ui-history -> publicADDRESS', 'bob (2) by tokenset authproducts v1.0public -> ui-historyADDRESS']);
    await shot('history');
  });

  it('grants a role until a time: its end shown beside it, and in the history (issue 30)', async () => {
    await addUser(connection, 'ui-temporary', 'ui-temporary-pass', ['guest']);
    await signIn();
    await showUser('ui-temporary');
    await page.selectOption('[aria-label="Role to grant ui-temporary"]', 'customer');
    await page.fill('[aria-label="Grant to ui-temporary until"]', '8h');
    await page.click('[data-testid="user-ui-temporary"] button:has-text("Grant")');
    await expect.poll(() => chips('ui-temporary')).toEqual(['customer', 'guest']);
    const end = await page.textContent('[data-testid="grant-ui-temporary-customer"] .muted');
    const shown = new Date(`${end!.replace('until ', '').replace(' ', 'T').replace('Z', ':00Z')}`).getTime();
    expect(Math.abs(shown - Date.now() - 8 * 3_600_000)).toBeLessThan(120_000);
    const token = await shapeA('shop', 'ui-temporary', 'ui-temporary-pass');
    expect((decodeJwt(token.slice(7)).payload.exp as number) * 1000).toBeLessThanOrEqual(Date.now() + 8 * 3_600_000 + 5000);
    await shot('grant-until');
    await page.click('nav button:has-text("History")');
    await page.waitForSelector('[data-testid=history-entry]');
    const rows = await page.$$eval('[data-testid=history-entry]', (nodes) => nodes.map((node) => node.textContent ?? ''));
    expect(rows.find((row) => row.includes('ui-temporary'))).toMatch(/bob \(2\) by tokengrant roleui-temporarycustomer until \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/);
  });

  it('cannot tell without the password on a backend with its own AuthQuery, and tells with it', async () => {
    await signIn('olga-operator', 'olga-pass-1', 'lab');
    await page.click('nav button:has-text("Effective access")');
    await page.fill('[aria-label="Explain user"]', 'olga-operator');
    await page.fill('[aria-label="Explain path"]', '/lab/v1.0/whoami');
    await page.click('form:has([aria-label="Explain user"]) button');
    await expect.poll(() => page.textContent('[data-testid=explanation]')).toContain('Cannot tell: GET /lab/v1.0/whoami on lab.');
    expect(await page.textContent('[data-testid=explanation]')).toContain('its own AuthQuery');
    await page.fill('[aria-label="Explain password"]', 'olga-pass-1');
    await page.click('form:has([aria-label="Explain user"]) button');
    await expect.poll(() => page.textContent('[data-testid=explanation]')).toContain('Denied: GET /lab/v1.0/whoami on lab.');
    expect(await page.textContent('[data-testid=explanation]')).toContain('olga-operator holds operator');
    await shot('explain-own-auth-query');
  });

  it('clears the role and revokes the grant', async () => {
    // Created on shop's console, the role stays shop's to revoke once no resource names it.
    expect((await consoleCall('POST', 'b/shop/roles', await ADMIN(), { name: 'ui-leaving' })).status).toBe(201);
    await addUser(connection, 'ui-leaver', 'ui-leaver-pass', ['ui-leaving', 'guest']);
    await setRole('products', 'ui-leaving');
    const alice = await shapeA('shop', 'alice', 'alice-pass');
    expect(await call('/shop/v1.0/products', alice)).toBe(403);
    await signIn();
    await page.waitForSelector('[data-testid="resource-products@1.0"]');
    await page.click('[data-testid="editor-products@1.0"] button:has-text("Public")');
    await page.click('[data-testid=impact] button:has-text("Confirm")');
    await expect.poll(() => call('/shop/v1.0/products', alice), { timeout: 60_000, interval: 20 }).toBe(200);
    expect(await call('/shop/v1.0/products')).toBe(200);
    expect(readFileSync(path.join(ROOT, 'resources/shop/products.xml'), 'utf8')).toBe(PRODUCTS());
    await showUser('ui-leaver');
    await page.click('[aria-label="Revoke ui-leaving from ui-leaver"]');
    await expect.poll(() => chips('ui-leaver')).toEqual(['guest']);
    const leaver = await shapeA('shop', 'ui-leaver', 'ui-leaver-pass');
    expect(decodeJwt(leaver.slice(7)).payload.aud).toBe('guest');
    await shot('revoked');
  });
});
