import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTo } from '../../scripts/connection.js';
import { addUser } from '../../scripts/schema.js';
import { type BuiltServer, startBuiltServer } from '../support/built-server.js';
import { basicHeader, formBody, send } from '../support/http.js';
import { ownDatabase } from '../support/own-database.js';
import { TEST_SECRET } from '../support/server.js';

/**
 * Where the console is served (CONSOLE: on, the default; off; admin, on the ADMIN_PORT listener only), and
 * who opens it by default (xmlrest-operator, which no application means anything by). The built server,
 * over HTTP; it edits nothing, so it runs from this checkout.
 */
let databaseUrl = '';
let connection: mysql.Connection;
const running: BuiltServer[] = [];

beforeAll(async () => {
  databaseUrl = await ownDatabase('exposure');
  connection = await connectTo(databaseUrl);
  await addUser(connection, 'app-admin', 'app-admin-pass', ['admin', 'staff']);
  await addUser(connection, 'operator', 'operator-pass', ['xmlrest-operator']);
}, 120_000);

afterAll(async () => {
  for (const server of running) await server.stop();
  await connection?.end();
});

async function serve(env: Record<string, string> = {}): Promise<BuiltServer> {
  const server = await startBuiltServer({ env: { DATABASE_URL: databaseUrl, ...env } });
  running.push(server);
  return server;
}
const status = async (url: string, headers: Record<string, string> = {}) => (await send(url, { headers })).status;

describe('CONSOLE', () => {
  it('serves the console on the main port by default', async () => {
    const server = await serve();
    expect(await status(`${server.url}/_console/`)).toBe(200);
    expect(await status(`${server.url}/_console/api/backends`)).toBe(200);
  });

  it('off: serves no console at all, and the API as ever', async () => {
    const server = await serve({ CONSOLE: 'off' });
    for (const path of ['/_console/', '/_console/api/backends', '/_console/api/b/staff/me']) {
      const response = await send(`${server.url}${path}`, { headers: { authorization: basicHeader('bob', 'bob-pass') } });
      expect(response.status, path).toBe(404);
      expect(response.json()).toEqual({ message: 'Not found', status: 404 });
    }
    expect(await status(`${server.url}/shop/v1.0/products`)).toBe(200);
  });

  it('admin: serves it on the ADMIN_PORT listener only, where operators sign in with either scheme', async () => {
    const server = await serve({ CONSOLE: 'admin', ADMIN_PORT: '0' });
    const admin = server.adminUrl!;
    expect(admin).toBeDefined();
    expect(await status(`${server.url}/_console/`)).toBe(404);
    expect(await status(`${server.url}/_console/api/backends`)).toBe(404);
    const page = await send(`${admin}/_console/`);
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(await status(`${admin}/_console/api/backends`)).toBe(200);
    // A Bearer backend's operator gets a token from the console itself: the API is not on this port.
    expect(await status(`${admin}/shop/v1.0/products`)).toBe(404);
    const token = await send(`${admin}/_console/api/token/shop`, { method: 'POST', ...formBody({ auth: 'bearer', userid: 'bob', password: 'bob-pass' }) });
    expect(token.status).toBe(200);
    const bearer = `Bearer ${(token.json() as { token: string }).token}`;
    expect(await status(`${admin}/_console/api/b/shop/me`, { authorization: bearer })).toBe(200);
    expect(await status(`${admin}/_console/api/b/staff/me`, { authorization: basicHeader('operator', 'operator-pass') })).toBe(200);
    const wrong = await send(`${admin}/_console/api/token/shop`, { method: 'POST', ...formBody({ auth: 'bearer', userid: 'bob', password: 'nope' }) });
    expect(wrong.status).toBe(401);
    expect(wrong.json()).toEqual({ message: 'Invalid credentials', status: 401 });
    // The listener's own answers stay.
    expect(await status(`${admin}/metrics`)).toBe(200);
    expect(await status(`${admin}/healthz`)).toBe(200);
  });

  it('admin without ADMIN_PORT, or a value it does not know, is a configuration error at start', async () => {
    await expect(serve({ CONSOLE: 'admin' })).rejects.toThrow(
      /CONSOLE=admin serves the console on the admin port, but ADMIN_PORT is not set: set ADMIN_PORT to the port of a listener only operators reach, or CONSOLE=off/,
    );
    await expect(serve({ CONSOLE: 'public' })).rejects.toThrow(/CONSOLE is on, off or admin \(the ADMIN_PORT listener only\), not public/);
  });

  it('says in the log when production serves the console on the public port', async () => {
    const production = await serve({ NODE_ENV: 'production' });
    expect(production.logs.some((line) => line.level === 'warn' && String(line.msg).startsWith('the admin console is served on the public port'))).toBe(true);
    const hidden = await serve({ NODE_ENV: 'production', CONSOLE: 'admin', ADMIN_PORT: '0' });
    expect(hidden.logs.some((line) => String(line.msg).startsWith('the admin console is served on the public port'))).toBe(false);
  });
});

describe('the default console role', () => {
  it('is xmlrest-operator, not the application role admin', async () => {
    const server = await serve();
    const backends = (await send(`${server.url}/_console/api/backends`)).json() as { backends: { name: string; consoleRole: string }[] };
    // staff names no console_role; shop names admin in its backend.xml.
    expect(backends.backends).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'staff', consoleRole: 'xmlrest-operator' }),
        expect.objectContaining({ name: 'shop', consoleRole: 'admin' }),
      ]),
    );
    // app-admin may call staff's admin-only POST /board, yet does not open staff's console.
    expect(await status(`${server.url}/_console/api/b/staff/me`, { authorization: basicHeader('app-admin', 'app-admin-pass') })).toBe(403);
    expect(await status(`${server.url}/_console/api/b/staff/me`, { authorization: basicHeader('operator', 'operator-pass') })).toBe(200);
    // The demo's bob holds both consoles' roles.
    expect(await status(`${server.url}/_console/api/b/staff/me`, { authorization: basicHeader('bob', 'bob-pass') })).toBe(200);
  });
});

describe('xmlrest doctor', () => {
  const doctor = (env: Record<string, string>) =>
    promisify(execFile)(process.execPath, ['scripts/xmlrest.mjs', 'doctor'], {
      env: { ...process.env, DATABASE_URL: databaseUrl, JWT_SECRET: TEST_SECRET, CONSOLE: '', ADMIN_PORT: '', ...env },
    });

  it('warns when production serves the console on the public port, and only then', async () => {
    const { stdout } = await doctor({ NODE_ENV: 'production' });
    expect(stdout).toMatch(
      /^WARN NODE_ENV=production serves the admin console on the public port \(PORT 3000, CONSOLE=on by default\): set CONSOLE=admin and ADMIN_PORT to a port only operators reach, or CONSOLE=off$/m,
    );
    expect(stdout.trim().split('\n').at(-1)).toBe('nothing to fix; 1 warning above');
    // Each run takes seconds (it generates to compare): one setup that is right.
    const quiet = await doctor({ NODE_ENV: 'production', CONSOLE: 'admin', ADMIN_PORT: '9100' });
    expect(quiet.stdout).not.toContain('WARN');
    expect(quiet.stdout.trim().split('\n').at(-1)).toBe('everything looks right');
  }, 120_000);
});
