import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyStore } from '../../console/keys.js';
import { backends as demo } from '../../generated/index.js';
import { createLogger, createReloadableApp, listen, openDatabase } from '../../runtime/index.js';
import { connectTo } from '../../scripts/connection.js';
import { addUser, grantRole, queryableOf } from '../../scripts/schema.js';
import { type BuiltServer, startBuiltServer } from '../support/built-server.js';
import { basicHeader, formBody, send } from '../support/http.js';
import { ownDatabase } from '../support/own-database.js';
import { decodeJwt, TEST_SECRET } from '../support/server.js';

/**
 * Grants that end (issue 30, docs/contract.md §8) on two built servers of the
 * demo sharing one database of this file's own: `xmlrest role grant USER ROLE
 * --for | --until` and the console's grant; a token issued while a grant is
 * temporary expires no later than the grant, a key and Basic credentials stop
 * admitting the role on both servers within 5 s of its end, exactly as a
 * revoke (the grant's row is gone, its user's tokens revoked); both the grant
 * and its end are in the console's history; a grant made to end sooner
 * revokes the tokens issued before, one extended does not; `xmlrest db init`
 * gives a role table of an earlier version the column.
 */
const run = promisify(execFile);
let url: string;
let connection: mysql.Connection;
let servers: BuiltServer[] = [];

beforeAll(async () => {
  url = await ownDatabase('grants');
  connection = await connectTo(url);
  await addUser(connection, 'gina', 'gina-pass-1', ['customer']);
  await addUser(connection, 'hugo', 'hugo-pass-1', ['staff']);
  await addUser(connection, 'iris', 'iris-pass-1', []);
  servers = await Promise.all([startBuiltServer({ env: { DATABASE_URL: url } }), startBuiltServer({ env: { DATABASE_URL: url } })]);
}, 120_000);

afterAll(async () => {
  await Promise.all(servers.map((server) => server.stop()));
  await connection?.end();
});

async function xmlrest(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['scripts/xmlrest.mjs', ...args], { env: { ...process.env, DATABASE_URL: url } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const idOf = async (name: string) =>
  ((await connection.query('select user_id as id from usr where user_name = ?', [name])) as unknown as [[{ id: number }]])[0][0].id;
const endOf = async (name: string, role: string) =>
  (
    (await connection.query(
      'select unix_timestamp(r.expires_on) as ends from usr_role r join usr u on u.user_id = r.user_id where u.user_name = ? and r.role_name = ?',
      [name, role],
    )) as unknown as [{ ends: string | number | null }[]]
  )[0][0]?.ends;

/** Polls both servers until `call` answers `status` on both, or 12 s pass; the ms it took after `from`, and the statuses. */
async function everywhere(call: (server: BuiltServer) => Promise<number>, status: number, from: number): Promise<{ after: number; statuses: number[] }> {
  let statuses: number[] = [];
  while (Date.now() - from < 12_000) {
    statuses = await Promise.all(servers.map(call));
    if (statuses.every((answer) => answer === status)) return { after: Date.now() - from, statuses };
    await sleep(100);
  }
  return { after: Date.now() - from, statuses };
}

describe('a grant that ends', () => {
  it('caps the tokens issued while it lasts, then stops admitting on every server within 5 s, as a revoke, and shows in the history', async () => {
    const granted = await xmlrest('role', 'grant', 'gina', 'admin', '--for', '10s');
    expect(granted.code).toBe(0);
    expect(granted.stdout).toMatch(/^gina holds admin until \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n/);
    const until = Number(await endOf('gina', 'admin'));
    await grantRole(connection, await idOf('hugo'), 'admin', until);
    // A busy machine may take seconds to start the command: what follows needs the grant to last a little longer.
    expect(until - Date.now() / 1000).toBeGreaterThan(2);

    // Shape A: one token holding both roles, expiring when the grant ends, not in an hour.
    const a = await send(`${servers[0]!.url}/shop/`, { method: 'POST', ...formBody({ auth: 'bearer', userid: 'gina', password: 'gina-pass-1' }) });
    const token = (a.json() as { token: string }).token;
    expect(decodeJwt(token).payload).toMatchObject({ aud: expect.arrayContaining(['admin', 'customer']) });
    expect(decodeJwt(token).payload.exp).toBe(until);
    // An API key of the role, and Basic credentials: both admitted while the grant lasts, on both servers.
    const key = (
      await new KeyStore(queryableOf(connection)).create({
        backend: 'shop',
        userId: String(await idOf('gina')),
        name: 'grant',
        roles: ['admin'],
        expires: null,
        rate: null,
      })
    ).key;
    const report = (server: BuiltServer, headers: Record<string, string>) =>
      send(`${server.url}/shop/v1.0/report`, { headers }).then((answer) => answer.status);
    const board = (server: BuiltServer) =>
      send(`${server.url}/staff/v1.0/board`, { method: 'POST', headers: { authorization: basicHeader('hugo', 'hugo-pass-1') } }).then(
        (answer) => answer.status,
      );
    for (const server of servers) {
      expect(await report(server, { authorization: `Bearer ${token}` })).toBe(200);
      expect(await report(server, { 'x-api-key': key })).toBe(200);
      // Admitted: the POST then misses its parameter (400), and writes nothing.
      expect(await board(server)).toBe(400);
    }

    while (Date.now() / 1000 < until) await sleep(50);
    const ended = Date.now();
    const basic = await everywhere(board, 403, ended);
    const keyed = await everywhere((server) => report(server, { 'x-api-key': key }), 401, ended);
    const bearer = await everywhere((server) => report(server, { authorization: `Bearer ${token}` }), 401, ended);
    for (const outcome of [basic, keyed, bearer]) {
      expect(outcome.statuses).toEqual(expect.arrayContaining([expect.any(Number)]));
      expect(outcome.after, JSON.stringify(outcome)).toBeLessThan(5000);
    }
    expect(basic.statuses).toEqual([403, 403]);
    expect(keyed.statuses).toEqual([401, 401]);
    expect(bearer.statuses).toEqual([401, 401]);
    // Exactly as a revoke: the row is gone, and so is every token gina held, the customer ones too.
    expect(await endOf('gina', 'admin')).toBeUndefined();
    const [[revoked]] = (await connection.query("select count(*) as n from xmlrest_revoked_user where backend = '*' and sub = ?", [
      String(await idOf('gina')),
    ])) as unknown as [[{ n: number }]];
    expect(Number(revoked.n)).toBe(1);
    const again = await send(`${servers[1]!.url}/shop/`, { method: 'POST', ...formBody({ auth: 'bearer', userid: 'gina', password: 'gina-pass-1' }) });
    expect(decodeJwt((again.json() as { token: string }).token).payload.aud).toBe('customer');

    // The history of every console of the default tables: the grant with its end, and the end itself.
    const bob = `Basic ${Buffer.from('bob:bob-pass').toString('base64')}`;
    const history = await send(`${servers[0]!.url}/_console/api/b/staff/history`, { headers: { authorization: bob } });
    expect(history.status).toBe(200);
    const entries = (history.json() as { entries: { actor: string; action: string; target: string; detail: string }[] }).entries;
    const iso = new Date(until * 1000).toISOString().replace('.000Z', 'Z');
    expect(entries).toContainEqual(expect.objectContaining({ action: 'grant role', target: 'gina', detail: `admin until ${iso}` }));
    expect(entries).toContainEqual(expect.objectContaining({ action: 'grant ended', target: 'gina', detail: `admin until ${iso}`, actor: 'xmlrest' }));
    expect(entries.find((entry) => entry.action === 'grant role')?.actor).toMatch(/^xmlrest command \(/);
  }, 60_000);

  it('made to end sooner revokes the tokens issued before; extended, or made permanent, revokes nothing', async () => {
    const signIn = async () =>
      (
        (await send(`${servers[0]!.url}/shop/`, { method: 'POST', ...formBody({ auth: 'bearer', userid: 'gina', password: 'gina-pass-1' }) })).json() as {
          token: string;
        }
      ).token;
    const revokedBefore = async () =>
      (
        (await connection.query("select unix_timestamp(revoked_before) as at from xmlrest_revoked_user where backend = '*' and sub = ?", [
          String(await idOf('gina')),
        ])) as unknown as [{ at: string }[]]
      )[0][0]?.at;
    await sleep(1100); // a token of the same second as a revocation is refused with it
    const lasting = await signIn();
    expect(decodeJwt(lasting.split(' ')[0]!).payload.exp).toBeGreaterThan(Date.now() / 1000 + 3000);
    const orders = (server: BuiltServer, token: string) =>
      send(`${server.url}/shop/v1.0/orders`, { headers: { authorization: `Bearer ${token}` } }).then((answer) => answer.status);
    expect(await orders(servers[1]!, lasting)).toBe(200);
    const before = await revokedBefore();
    const shortened = await xmlrest('role', 'grant', 'gina', 'customer', '--until', new Date(Date.now() + 3_600_000).toISOString());
    expect(shortened.stdout).toContain('gina holds customer until');
    // The hour-long token would outlive the new end: revoked, on both servers within a poll.
    expect((await everywhere((server) => orders(server, lasting), 401, Date.now())).statuses).toEqual([401, 401]);
    await sleep(1100);
    const capped = await signIn();
    expect(decodeJwt(capped).payload.exp).toBe(Number(await endOf('gina', 'customer')));
    const revokedAtShortening = await revokedBefore();
    expect(revokedAtShortening).not.toBe(before);
    await grantRole(connection, await idOf('gina'), 'customer', Math.floor(Date.now() / 1000) + 7200);
    expect((await xmlrest('role', 'grant', 'gina', 'customer')).stdout).toBe('gina holds customer for good (its end removed)\n');
    expect((await xmlrest('role', 'grant', 'gina', 'customer')).stdout).toBe('gina holds customer already\n');
    expect(await endOf('gina', 'customer')).toBeNull();
    expect(await revokedBefore()).toBe(revokedAtShortening);
    expect(await orders(servers[0]!, capped)).toBe(200);
  }, 60_000);

  it('is given on the console too, for a while or until a time; a past or unreadable end is refused', async () => {
    const bob = { authorization: `Basic ${Buffer.from('bob:bob-pass').toString('base64')}`, 'x-xmlrest-console': '1', 'content-type': 'application/json' };
    const iris = await idOf('iris');
    const grant = (body: object) =>
      send(`${servers[0]!.url}/_console/api/b/staff/users/${iris}/roles/staff`, { method: 'PUT', headers: bob, body: JSON.stringify(body) });
    const given = await grant({ for: '1h' });
    expect(given.status).toBe(200);
    const ends = (given.json() as { ends: Record<string, string> }).ends.staff!;
    expect(Math.abs(new Date(ends).getTime() - Date.now() - 3_600_000)).toBeLessThan(5000);
    expect((await grant({ until: '2020-01-01T00:00Z' })).json()).toEqual({ message: 'until is in the past: 2020-01-01T00:00Z', status: 400 });
    expect((await grant({ for: 'soon' })).status).toBe(400);
    expect((await grant({ for: '1h', until: '2030-01-01T00:00Z' })).status).toBe(400);
    expect((await grant({})).json()).toMatchObject({ roles: ['staff'], ends: {} });
  });

  it('gets its column from xmlrest db init on a role table made before grants could end', async () => {
    const older = await ownDatabase('grants_upgrade');
    const before = await connectTo(older);
    try {
      await before.query('drop trigger if exists xmlrest_usr_role_update');
      await before.query('alter table usr_role drop key usr_role_expires, drop column expires_on');
      // Until then a server on it signs users in as before: no grant of that table can end.
      const database = openDatabase(older);
      const app = createReloadableApp({ backends: demo, database, jwtSecret: TEST_SECRET, logger: createLogger('silent') });
      const running = await listen(app.app, 0, '127.0.0.1');
      try {
        const a = await send(`${running.url}/shop/`, { method: 'POST', ...formBody({ auth: 'bearer', userid: 'alice', password: 'alice-pass' }) });
        expect(a.status).toBe(200);
        expect((await send(`${running.url}/staff/v1.0/me`, { headers: { authorization: basicHeader('carol', 'carol-pass') } })).status).toBe(200);
      } finally {
        app.close();
        await running.close();
        await database.end();
      }
      const { stdout } = await run(process.execPath, ['scripts/xmlrest.mjs', 'db', 'init'], { env: { ...process.env, DATABASE_URL: older } });
      expect(stdout).toContain('created usr and usr_role');
      const [columns] = (await before.query(
        "select column_name from information_schema.columns where table_schema = database() and table_name = 'usr_role' and column_name = 'expires_on'",
      )) as unknown as [object[]];
      expect(columns).toHaveLength(1);
    } finally {
      await before.end();
    }
  });
});
