import { execFile, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import type mysql from 'mysql2/promise';
import { createConnection as mysqlConnection } from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { KeyStore } from '../../console/keys.js';
import { consoleMiddleware } from '../../console/server.js';
import { UserStore } from '../../console/store.js';
import { backends as demo } from '../../generated/index.js';
import { Revocations } from '../../runtime/auth/tokens/revocations.js';
import { endDueGrants } from '../../runtime/auth/users/grants.js';
import type { Logger } from '../../runtime/index.js';
import { createLogger, createReloadableApp, type Database, listen, openDatabase, type Queryable, type RunningServer } from '../../runtime/index.js';
import { grantEndsFinding } from '../../scripts/cli/doctor.js';
import { connectTo } from '../../scripts/connection.js';
import { socketUser } from '../../scripts/mariadb.js';
import { addUser, grantRole, grantsOf, queryableOf, revokeRole } from '../../scripts/schema.js';
import { type BuiltServer, startBuiltServer } from '../support/built-server.js';
import { DEMO_WEBHOOK_ENV } from '../support/demo-webhook.js';
import { basicHeader, formBody, send } from '../support/http.js';
import { ownDatabase } from '../support/own-database.js';
import { decodeJwt, TEST_SECRET } from '../support/server.js';

/**
 * Grants that end (issue 30, docs/internals/contract.md §8) on two built servers of the
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

function xmlrest(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return xmlrestOn(url, ...args);
}

async function xmlrestOn(database: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['scripts/xmlrest.mjs', ...args], { env: { ...process.env, DATABASE_URL: database } });
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
  it('caps the tokens issued while it lasts, then stops admitting on every server within 5 s of its end, as a revoke, and shows in the history', async () => {
    // Given for half an hour, so that a busy machine has all the time it needs for what must happen while it lasts;
    // then made to end in a moment (a grant that ends less than one poll after it is made: no server's timer knew of it).
    const granted = await xmlrest('role', 'grant', 'gina', 'admin', '--for', '30m');
    expect(granted.code).toBe(0);
    expect(granted.stdout).toMatch(/^gina holds admin until \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n/);
    const given = Number(await endOf('gina', 'admin'));
    expect(given - Date.now() / 1000).toBeGreaterThan(1700);
    await grantRole(connection, await idOf('hugo'), 'admin', given);

    // Shape A: one token holding both roles, expiring when the grant ends, not in an hour.
    const a = await send(`${servers[0]!.url}/shop/`, { method: 'POST', ...formBody({ auth: 'bearer', userid: 'gina', password: 'gina-pass-1' }) });
    const token = (a.json() as { token: string }).token;
    expect(decodeJwt(token).payload).toMatchObject({ aud: expect.arrayContaining(['admin', 'customer']) });
    expect(decodeJwt(token).payload.exp).toBe(given);
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

    // Made to end in a second or two (the nearer end revokes the tokens issued before, as a shortened grant does).
    const until = Math.floor(Date.now() / 1000) + 2;
    await grantRole(connection, await idOf('gina'), 'admin', until);
    await grantRole(connection, await idOf('hugo'), 'admin', until);
    while (Date.now() / 1000 < until) await sleep(50);
    const ended = Date.now();
    const basic = await everywhere(board, 403, ended);
    const keyed = await everywhere((server) => report(server, { 'x-api-key': key }), 401, ended);
    const bearer = await everywhere((server) => report(server, { authorization: `Bearer ${token}` }), 401, ended);
    for (const outcome of [basic, keyed, bearer]) expect(outcome.after, JSON.stringify(outcome)).toBeLessThan(5000);
    expect(basic.statuses).toEqual([403, 403]);
    expect(keyed.statuses).toEqual([401, 401]);
    expect(bearer.statuses).toEqual([401, 401]);
    // Exactly as a revoke: the row is deleted by a server's poll, and every token gina held is revoked, the customer ones too.
    while ((await endOf('gina', 'admin')) !== undefined && Date.now() - ended < 12_000) await sleep(100);
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
    const iso = (seconds: number) => new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');
    expect(entries).toContainEqual(expect.objectContaining({ action: 'grant role', target: 'gina', detail: `admin until ${iso(given)}` }));
    expect(entries).toContainEqual(expect.objectContaining({ action: 'grant ended', target: 'gina', detail: `admin until ${iso(until)}`, actor: 'xmlrest' }));
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
    // Token shape B too (its own SQL says nothing of ends; the server reads them, its polls having seen one that ends).
    for (const server of servers) {
      const shapeB = await send(`${server.url}/shop/v1.0/token`, { method: 'POST', ...formBody({ user: 'gina', pass: 'gina-pass-1' }) });
      expect(shapeB.status).toBe(201);
      expect(decodeJwt((shapeB.json() as { token: string }).token).payload.exp).toBe(Number(await endOf('gina', 'customer')));
    }
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
});

/**
 * On a database of its own, served by a server whose revocation poll never runs (so that nothing deletes an ended
 * grant): the server's doors leave an ended grant out by themselves; a grant no server can delete is said in the log
 * at every poll; ends are written in UTC whatever the session's zone; and on a role table of an earlier version
 * (no `expires_on`) the console, the command line and verify-access either work or say to run xmlrest db init.
 */
describe('a grant that ends, on a database no server deletes ended grants from', () => {
  let own: string;
  let ownConnection: mysql.Connection;
  let database: Database;
  let running: RunningServer;
  let lou: number;
  beforeAll(async () => {
    own = await ownDatabase('grants_own');
    ownConnection = await connectTo(own);
    lou = await addUser(ownConnection, 'lou', 'lou-pass-1', ['customer']);
    database = openDatabase(own);
    const app = createReloadableApp({
      backends: demo,
      webhookSecrets: DEMO_WEBHOOK_ENV,
      database,
      jwtSecret: TEST_SECRET,
      logger: createLogger('silent'),
      revocationPollMs: 0,
    });
    const adminConsole = consoleMiddleware({
      basePath: '',
      backends: () => demo,
      database,
      root: process.cwd(),
      regenerate: () => Promise.reject(new Error('not here')),
      assetsDir: 'dist/console-ui',
      server: () => app,
    });
    const served = createReloadableApp({
      backends: demo,
      webhookSecrets: DEMO_WEBHOOK_ENV,
      database,
      jwtSecret: TEST_SECRET,
      logger: createLogger('silent'),
      revocationPollMs: 0,
      middleware: [adminConsole],
      // As the built server serves it: verify-access compares it with the resources first.
      openapi: JSON.parse(readFileSync('generated/openapi.json', 'utf8')) as object,
    });
    running = await listen(served.app, 0, '127.0.0.1');
  }, 120_000);
  afterAll(async () => {
    await running?.close();
    await database?.end();
    await ownConnection?.end();
  });

  it('admits through no door once ended, though no server has deleted it: API keys, Basic, token requests', async () => {
    await ownConnection.query("insert into usr_role (role_name, user_id, expires_on) values ('admin', ?, now() - interval 1 second)", [lou]);
    const key = (
      await new KeyStore(queryableOf(ownConnection)).create({
        backend: 'shop',
        userId: String(lou),
        name: 'ended',
        roles: ['admin', 'customer'],
        expires: null,
        rate: null,
      })
    ).key;
    // The key lists admin, which lou held until a second ago: only customer is left to it.
    expect((await send(`${running.url}/shop/v1.0/report`, { headers: { 'x-api-key': key } })).status).toBe(403);
    expect((await send(`${running.url}/shop/v1.0/orders`, { headers: { 'x-api-key': key } })).status).toBe(200);
    const a = await send(`${running.url}/shop/`, { method: 'POST', ...formBody({ auth: 'bearer', userid: 'lou', password: 'lou-pass-1' }) });
    expect(decodeJwt((a.json() as { token: string }).token).payload.aud).toBe('customer');
    expect((await send(`${running.url}/staff/v1.0/board`, { headers: { authorization: basicHeader('lou', 'lou-pass-1') } })).status).toBe(403);
    // Nothing deleted it: the doors read its end themselves.
    const [[row]] = (await ownConnection.query("select count(*) as n from usr_role where user_id = ? and role_name = 'admin'", [lou])) as unknown as [
      [{ n: number }],
    ];
    expect(Number(row.n)).toBe(1);
  });

  it('says in the log, at every poll, that it cannot end a grant, rather than taking a failed delete for "nothing ends"', async () => {
    // The delete trigger records the end in the history: without its table every delete fails (1146).
    await ownConnection.query('rename table xmlrest_console_audit to xmlrest_console_audit_away');
    try {
      const warnings: string[] = [];
      const logger = { warn: (_details: unknown, message: string) => warnings.push(message) } as unknown as Logger;
      const revocations = new Revocations(database, logger, 0);
      await revocations.refresh();
      await revocations.refresh();
      expect(warnings.filter((message) => message.startsWith('cannot end grants'))).toHaveLength(2);
    } finally {
      await ownConnection.query('rename table xmlrest_console_audit_away to xmlrest_console_audit');
    }
    await endDueGrants(database);
    const [[row]] = (await ownConnection.query("select count(*) as n from usr_role where user_id = ? and role_name = 'admin'", [lou])) as unknown as [
      [{ n: number }],
    ];
    expect(Number(row.n)).toBe(0);
  });

  it('re-granted as a server deletes it, is held: one statement, so no deletion comes between a read and a write', async () => {
    await ownConnection.query("insert into usr_role (role_name, user_id, expires_on) values ('staff', ?, now() - interval 1 second)", [lou]);
    // Each statement of the grant meets a database where a server's poll has just deleted every ended grant.
    const plain = queryableOf(ownConnection);
    const polled: Queryable = {
      select: async (sql, values) => (await endDueGrants(plain), plain.select(sql, values)),
      write: async (sql, values) => (await endDueGrants(plain), plain.write(sql, values)),
    };
    const until = Math.floor(Date.now() / 1000) + 3600;
    expect(await new UserStore(polled).grant(lou, 'staff', until)).toBe('granted');
    expect(await new UserStore(plain).grant(lou, 'staff', until)).toBe('unchanged');
    expect(await new UserStore(plain).grant(lou, 'staff', until + 60)).toBe('changed');
    expect((await grantsOf(ownConnection, lou)).ends).toEqual({ staff: new Date((until + 60) * 1000).toISOString().replace('.000Z', 'Z') });
    await revokeRole(ownConnection, lou, 'staff');
  });

  it.skipIf(!inject('databaseSocket'))('writes an end in UTC whatever the session’s zone, in the autumn’s repeated hour too', async () => {
    const admin = await mysqlConnection({ socketPath: inject('databaseSocket') ?? '', user: socketUser(), database: 'mysql', multipleStatements: true });
    try {
      await admin.query(execFileSync('mariadb-tzinfo-to-sql', ['/usr/share/zoneinfo/Europe/Berlin', 'Europe/Berlin'], { encoding: 'utf8' }));
    } finally {
      await admin.end();
    }
    const berlin = await connectTo(own);
    try {
      await berlin.query("set time_zone = 'Europe/Berlin'");
      // 2025-10-26 00:30Z and 01:30Z are both 02:30 in Berlin: from_unixtime in that zone keeps only one of them.
      for (const [role, end] of [
        ['early', Date.UTC(2025, 9, 26, 0, 30) / 1000],
        ['late', Date.UTC(2025, 9, 26, 1, 30) / 1000],
      ] as const) {
        await grantRole(berlin, lou, role, end);
        const [[row]] = (await berlin.query('select unix_timestamp(expires_on) as ends from usr_role where user_id = ? and role_name = ?', [
          lou,
          role,
        ])) as unknown as [[{ ends: string }]];
        expect(Number(row.ends), role).toBe(end);
      }
      // The session keeps its zone.
      const [[zone]] = (await berlin.query('select @@session.time_zone as zone')) as unknown as [[{ zone: string }]];
      expect(zone.zone).toBe('Europe/Berlin');
    } finally {
      await berlin.query("delete from usr_role where role_name in ('early', 'late')");
      await berlin.end();
    }
  });

  it.skipIf(!inject('databaseSocket'))('is said of a server’s database user that may not delete from usr_role, by xmlrest doctor', async () => {
    const admin = await mysqlConnection({ socketPath: inject('databaseSocket') ?? '', user: socketUser() });
    const name = new URL(own).pathname.slice(1);
    try {
      await admin.query("create or replace user 'no_delete'@'127.0.0.1' identified by 'no-delete-pass'");
      await admin.query(`grant select, insert, update on \`${name}\`.* to 'no_delete'@'127.0.0.1'`);
      const limited = new URL(own);
      limited.username = 'no_delete';
      limited.password = 'no-delete-pass';
      const connection = await connectTo(limited.toString());
      try {
        const finding = await grantEndsFinding(connection);
        expect(finding.ok).toBe(false);
        expect(finding.what).toContain('may not delete from usr_role');
      } finally {
        await connection.end();
      }
      expect((await grantEndsFinding(ownConnection)).ok).toBe(true);
    } finally {
      await admin.query("drop user if exists 'no_delete'@'127.0.0.1'");
      await admin.end();
    }
  });

  it('on a role table made before grants could end: signs in, serves the console, grants for good, and says to run xmlrest db init for an end', async () => {
    // As an earlier version left it: no column, and triggers that did not know of one.
    await ownConnection.query('drop trigger if exists xmlrest_usr_role_update');
    await ownConnection.query('drop trigger if exists xmlrest_usr_role_delete');
    await ownConnection.query('alter table usr_role drop key usr_role_expires, drop column expires_on');
    // Logins fall back to the seed's query.
    const a = await send(`${running.url}/shop/`, { method: 'POST', ...formBody({ auth: 'bearer', userid: 'alice', password: 'alice-pass' }) });
    expect(a.status).toBe(200);
    expect((await send(`${running.url}/staff/v1.0/me`, { headers: { authorization: basicHeader('carol', 'carol-pass') } })).status).toBe(200);
    // An API key's lookup too.
    const key = (
      await new KeyStore(queryableOf(ownConnection)).create({
        backend: 'shop',
        userId: String(lou),
        name: 'old',
        roles: ['customer'],
        expires: null,
        rate: null,
      })
    ).key;
    expect((await send(`${running.url}/shop/v1.0/orders`, { headers: { 'x-api-key': key } })).status).toBe(200);
    // The console: its users, a user, who holds a role, a grant for good; a grant with an end is a 503 saying what to do.
    const bob = { authorization: basicHeader('bob', 'bob-pass'), 'x-xmlrest-console': '1', 'content-type': 'application/json' };
    expect((await send(`${running.url}/_console/api/b/staff/users`, { headers: bob })).status).toBe(200);
    expect((await send(`${running.url}/_console/api/b/staff/roles`, { headers: bob })).status).toBe(200);
    expect((await send(`${running.url}/_console/api/b/staff/roles/staff/users`, { headers: bob })).status).toBe(200);
    const grant = (body: object) =>
      send(`${running.url}/_console/api/b/staff/users/${lou}/roles/staff`, { method: 'PUT', headers: bob, body: JSON.stringify(body) });
    const forGood = await grant({});
    expect(forGood.status).toBe(200);
    expect(forGood.json()).toMatchObject({ roles: ['customer', 'staff'], ends: {} });
    const forAWhile = await grant({ for: '1h' });
    expect(forAWhile.status).toBe(503);
    expect((forAWhile.json() as { message: string }).message).toContain('run xmlrest db init');
    // explain's reading of the grants, and the command line's grant with an end.
    expect(await grantsOf(ownConnection, lou)).toEqual({ roles: ['customer', 'staff'], ends: {} });
    const cli = await xmlrestOn(own, 'role', 'grant', 'lou', 'admin', '--for', '1h');
    expect(cli.code).toBe(2);
    expect(cli.stderr).toContain('run xmlrest db init');
    // verify-access makes no user there: its users' roles must end.
    const verify = await xmlrestOn(own, 'verify-access', running.url);
    expect(verify.code).toBe(2);
    expect(verify.stderr).toContain('run xmlrest db init');
    const [made] = (await ownConnection.query("select user_name from usr where user_name like 'xmlrest-verify-%'")) as unknown as [object[]];
    expect(made).toEqual([]);

    const { stdout } = await run(process.execPath, ['scripts/xmlrest.mjs', 'db', 'init'], { env: { ...process.env, DATABASE_URL: own } });
    expect(stdout).toContain('created usr and usr_role');
    const [columns] = (await ownConnection.query(
      "select column_name from information_schema.columns where table_schema = database() and table_name = 'usr_role' and column_name = 'expires_on'",
    )) as unknown as [object[]];
    expect(columns).toHaveLength(1);
    // The running console gives ends at once.
    expect((await grant({ for: '1h' })).status).toBe(200);
  });
});
