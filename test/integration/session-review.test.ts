import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { socketUser } from '../../scripts/mariadb.js';
import { addUser } from '../../scripts/schema.js';
import { type BuiltServer, startBuiltServer } from '../support/built-server.js';
import { formBody, send } from '../support/http.js';
import { ownDatabase } from '../support/own-database.js';
import { buildScratchProject } from '../support/scratch-project.js';
import { decodeJwt } from '../support/server.js';

/**
 * Issue 40, holes 1, 3, 7 and 8 (docs/internals/contract.md §10), attacked at the door of two built servers on a database
 * of this file's own: a refresh on a backend with its own AuthQuery asks its RolesQuery, so a user removed from
 * the backend's own table gets no new token; `xmlrest token revoke` ends exactly the backend's own principal;
 * live sessions are bounded per user and sign-ins counted; the poll reads what ended since its last read; the
 * refresh grace rotates once and voids the pair it replaces; the server that ends a session refuses it at once.
 */
const ROOT = path.resolve('test/.tmp/session-review');
const CREW_XML = `<Backend xmlns="urn:xmlrest:resource:1.0" auth_scheme="Bearer" refresh_lifetime="3600">
  <AuthQuery>select cast(c.crew_id as char) as sub, c.role as aud, c.pass_word from crew c where c.login = $user</AuthQuery>
  <RolesQuery>select c.role as aud from crew c where c.crew_id = $uid</RolesQuery>
</Backend>
`;
const CREW_ME_XML = `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0" auth="member">
  <Request method="GET"><Sql id="me">select login from crew where crew_id = $uid</Sql></Request>
</Resource>
`;
const ME_XML = `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0" auth="member">
  <Request method="GET"><Sql id="me">select user_name from usr where user_id = $uid</Sql></Request>
</Resource>
`;
/** Sign-ins a user may make in the login window on these servers (LOGIN_MAX_SESSIONS; 60 by default). */
const SIGN_INS = 6;
let databaseUrl: string;
let connection: mysql.Connection;
let servers: BuiltServer[] = [];

beforeAll(async () => {
  databaseUrl = await ownDatabase('session_review');
  connection = await mysql.createConnection({ uri: databaseUrl });
  await connection.query(
    'create table crew (crew_id int primary key, login varchar(64) not null unique, pass_word varchar(255) not null, role varchar(64) not null)',
  );
  await connection.query("insert into crew values (900001, 'crew-ada', 'crew-ada-pass', 'member'), (900002, 'crew-bob', 'crew-bob-pass', 'member')");
  for (const user of ['rev-ann', 'rev-ben', 'rev-cat', 'rev-dan', 'rev-eve', 'rev-fay', 'rev-gus']) await addUser(connection, user, `${user}-pass`, ['member']);
  // A member of the crew table whose id is rev-twin's in usr: another person with the same id.
  const twin = await addUser(connection, 'rev-twin', 'rev-twin-pass', ['member']);
  await connection.query("insert into crew values (?, 'crew-twin', 'crew-twin-pass', 'member')", [twin]);
  await buildScratchProject(ROOT, {
    databaseUrl,
    files: {
      'resources/crew/backend.xml': CREW_XML,
      'resources/crew/me.xml': CREW_ME_XML,
      'resources/ses/backend.xml': '<Backend xmlns="urn:xmlrest:resource:1.0" auth_scheme="Bearer" refresh_lifetime="3600" max_sessions="3"/>\n',
      'resources/ses/me.xml': ME_XML,
    },
  });
  const env = { DATABASE_URL: databaseUrl, LOGIN_MAX_SESSIONS: String(SIGN_INS) };
  servers = await Promise.all([startBuiltServer({ root: ROOT, env }), startBuiltServer({ root: ROOT, env })]);
}, 180_000);

afterAll(async () => {
  await Promise.all(servers.map((server) => server.stop()));
  await connection?.end();
  rmSync(ROOT, { recursive: true, force: true });
});

interface Pair {
  token: string;
  refresh_token: string;
}

async function signIn(user: string, backend = 'ses', server = servers[0]!): Promise<Pair> {
  const response = await signInAnswer(user, backend, server);
  expect(response.status, response.text).toBe(200);
  return response.json() as Pair;
}

const signInAnswer = (user: string, backend = 'ses', server = servers[0]!) =>
  send(`${server.url}/${backend}/`, { method: 'POST', ...formBody({ auth: 'bearer', userid: user, password: `${user}-pass` }) });

const refresh = (refreshToken: string, server = servers[1]!, backend = 'ses') =>
  send(`${server.url}/${backend}/v1.0/token/refresh`, { method: 'POST', ...formBody({ refresh_token: refreshToken }) });

const me = (token: string, server: BuiltServer, backend = 'ses') => send(`${server.url}/${backend}/v1.0/me`, { headers: { authorization: `Bearer ${token}` } });

/** Polls both servers until the token gets `status` on both, or 10 s pass; the statuses last seen. */
async function everywhere(token: string, status: number, backend = 'ses'): Promise<number[]> {
  let statuses: number[] = [];
  for (let waited = 0; waited <= 10_000; waited += 250) {
    statuses = await Promise.all(servers.map(async (server) => (await me(token, server, backend)).status));
    if (statuses.every((answer) => answer === status)) return statuses;
    await sleep(250);
  }
  return statuses;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `xmlrest token revoke ...` in the project, as an operator runs it. */
function revoke(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) =>
    execFile(
      process.execPath,
      [path.join(ROOT, 'scripts/xmlrest.mjs'), 'token', 'revoke', ...args],
      { cwd: ROOT, env: { ...process.env, DATABASE_URL: databaseUrl } },
      (error, stdout, stderr) => resolve({ code: error ? Number((error as { code?: number }).code) : 0, stdout, stderr }),
    ),
  );
}

describe('hole 1: a session on a backend with its own AuthQuery', () => {
  it('refreshes only for a user the backend admits now, with the roles held now; a user removed gets 401 and the session ends everywhere', async () => {
    const pair = await signIn('crew-ada', 'crew');
    expect((await me(pair.token, servers[1]!, 'crew')).status).toBe(200);
    // A role taken away in the backend's own table: the next pair carries the role held now.
    await connection.query("update crew set role = 'guest' where login = 'crew-ada'");
    const demoted = await refresh(pair.refresh_token, servers[1]!, 'crew');
    expect(demoted.status).toBe(201);
    const second = demoted.json() as Pair;
    expect(decodeJwt(second.token).payload.aud).toBe('guest');
    expect((await me(second.token, servers[0]!, 'crew')).status).toBe(403);
    // The user removed from the backend's own table: the refresh token buys nothing, and the session is over.
    await connection.query("update crew set role = 'member' where login = 'crew-ada'");
    const third = (await refresh(second.refresh_token, servers[0]!, 'crew')).json() as Pair;
    expect((await me(third.token, servers[1]!, 'crew')).status).toBe(200);
    await connection.query("delete from crew where login = 'crew-ada'");
    const gone = await refresh(third.refresh_token, servers[1]!, 'crew');
    expect(gone.status).toBe(401);
    expect(gone.json()).toEqual({ message: 'Invalid refresh token', status: 401 });
    expect(await everywhere(third.token, 401, 'crew')).toEqual([401, 401]);
  });

  it('xmlrest token revoke takes the backend’s own user id, and refuses a name of usr there (another person with the same id)', async () => {
    const twin = await signIn('crew-twin', 'crew');
    const bob = await signIn('crew-bob', 'crew');
    // rev-twin of usr has crew-twin's id: revoking "rev-twin" on crew would stop crew-twin, who is someone else.
    const byName = await revoke('--backend', 'crew', '--user', 'rev-twin');
    expect(byName.code).toBe(2);
    expect(byName.stderr).toContain('backend crew has its own AuthQuery');
    const still = await refresh(twin.refresh_token, servers[0]!, 'crew');
    expect(still.status).toBe(201);
    const kept = still.json() as Pair;
    // By the backend's own id: exactly that principal's tokens and sessions end, on every server.
    const [[{ id }]] = (await connection.query("select crew_id as id from crew where login = 'crew-twin'")) as unknown as [[{ id: number }]];
    const byId = await revoke('--backend', 'crew', '--user-id', String(id));
    expect(byId.code, byId.stderr).toBe(0);
    expect(byId.stdout).toContain('ended 1 session(s)');
    expect((await refresh(kept.refresh_token, servers[1]!, 'crew')).status).toBe(401);
    expect(await everywhere(kept.token, 401, 'crew')).toEqual([401, 401]);
    expect((await me(bob.token, servers[1]!, 'crew')).status).toBe(200);
    expect((await refresh(bob.refresh_token, servers[1]!, 'crew')).status).toBe(201);
    expect((await revoke('--backend', 'crew', '--user-id', '07')).code).toBe(2);
  }, 60_000);
});

describe('a revocation on every backend of the default user tables (the review of issue 40)', () => {
  it('leaves the same id of a backend with its own AuthQuery alone: its user is another person', async () => {
    // Past the second of the earlier revocation of crew-twin by id, which refuses tokens issued up to it.
    await sleep(1100);
    const crew = await signIn('crew-twin', 'crew');
    const usr = await signIn('rev-twin');
    // usr's rev-twin changes password: the default tables' trigger revokes that id on `*`, every such backend.
    await connection.query("update usr set pass_word = 'rev-twin-changed' where user_name = 'rev-twin'");
    expect(await everywhere(usr.token, 401)).toEqual([401, 401]);
    // Both servers have read that revocation by now; crew's user of the same id is not usr's.
    for (const server of servers) expect((await me(crew.token, server, 'crew')).status).toBe(200);
    expect((await refresh(crew.refresh_token, servers[1]!, 'crew')).status).toBe(201);
  }, 60_000);
});

describe('hole 3: sessions with a bound', () => {
  it('a user holds at most max_sessions live sessions: a new one ends the oldest, refused at once here and everywhere within 5 s', async () => {
    const oldest = await signIn('rev-ann');
    const others = [await signIn('rev-ann'), await signIn('rev-ann')];
    expect((await me(oldest.token, servers[0]!)).status).toBe(200);
    const newest = await signIn('rev-ann');
    expect((await me(oldest.token, servers[0]!)).status).toBe(401);
    expect(await everywhere(oldest.token, 401)).toEqual([401, 401]);
    expect((await refresh(oldest.refresh_token)).status).toBe(401);
    for (const pair of [...others, newest]) expect((await me(pair.token, servers[1]!)).status).toBe(200);
  });

  it('sign-ins are counted per user: past LOGIN_MAX_SESSIONS in the window, 429 with Retry-After; another user is not held', async () => {
    for (let i = 0; i < SIGN_INS; i++) await signIn('rev-ben');
    const over = await signInAnswer('rev-ben');
    expect(over.status).toBe(429);
    expect(over.json()).toEqual({ message: 'Too many sign-ins for this user: try again later', status: 429 });
    expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
    expect((await signInAnswer('rev-cat')).status).toBe(200);
  });

  it('the revocation poll reads the sessions ended since its last read, not every ended session whose tokens may still come', async () => {
    // Counting rows read per table needs MariaDB's user statistics, which only an administrator turns on.
    const socket = inject('databaseSocket');
    if (socket === null) return;
    const admin = await mysql.createConnection({ socketPath: socket, user: socketUser() });
    try {
      await admin.query('set global userstat = 1');
      // 20,000 sessions ended now (as by a user's logout scope=all of many), whose tokens may come for another hour.
      await connection.query(
        `insert into xmlrest_session (sid, backend, user_id, roles, current_hash, expires_on, ended_on, ended_why, tokens_until)
         select concat('bulk', lpad(seq, 18, '0')), 'ses', '424242', 'member', unhex(sha2(concat('bulk', seq), 256)),
           now() + interval 1 day, now(), 'logout_all', now() + interval 1 hour
         from seq_1_to_20000`,
      );
      // Read by the polls of the next 15 s (each reads back 10 s before its last read); none after.
      await sleep(17_000);
      const schema = new URL(databaseUrl).pathname.slice(1);
      const rowsRead = async () => {
        const [rows] = (await admin.query(
          "select rows_read from information_schema.table_statistics where table_schema = ? and table_name = 'xmlrest_session'",
          [schema],
        )) as unknown as [{ rows_read: number | string }[]];
        return Number(rows[0]?.rows_read ?? 0);
      };
      const before = await rowsRead();
      // Two polls of each server at least.
      await sleep(11_000);
      const read = (await rowsRead()) - before;
      // Every ended session read again at each poll would be 80,000 rows and more.
      expect(read).toBeLessThan(20_000);
    } finally {
      await connection.query("delete from xmlrest_session where sid like 'bulk%'");
      await admin.end();
    }
  }, 60_000);
});

describe('hole 7: the refresh grace', () => {
  it('rotates once: the pair it voids is refused at once, and the used-up token coming back again ends the session', async () => {
    const first = await signIn('rev-dan');
    const second = (await refresh(first.refresh_token)).json() as Pair;
    expect((await me(second.token, servers[1]!)).status).toBe(200);
    // The client lost the answer and tries again within 10 s: a new pair, and the lost one is void, its access token too.
    const retried = await refresh(first.refresh_token);
    expect(retried.status).toBe(201);
    const third = retried.json() as Pair;
    expect((await me(second.token, servers[1]!)).status).toBe(401);
    expect((await me(third.token, servers[1]!)).status).toBe(200);
    // Once: the same used-up token again, still within the grace, is a second holder's.
    expect((await refresh(first.refresh_token)).status).toBe(401);
    expect(await everywhere(second.token, 401)).toEqual([401, 401]);
    expect(await everywhere(third.token, 401)).toEqual([401, 401]);
    expect((await refresh(third.refresh_token)).status).toBe(401);
  }, 30_000);

  it('the pair the grace voids buys nothing: its refresh token coming back ends the session', async () => {
    const first = await signIn('rev-cat');
    const second = (await refresh(first.refresh_token)).json() as Pair;
    const retried = await refresh(first.refresh_token, servers[0]!);
    expect(retried.status).toBe(201);
    const third = retried.json() as Pair;
    expect((await refresh(second.refresh_token)).status).toBe(401);
    expect(await everywhere(third.token, 401)).toEqual([401, 401]);
    expect((await refresh(third.refresh_token)).status).toBe(401);
  }, 30_000);

  it('two grace rotations at once: at most one pair, and no refresh token that reuse detection never sees', async () => {
    const first = await signIn('rev-eve');
    const second = (await refresh(first.refresh_token)).json() as Pair;
    const answers = await Promise.all(servers.map((server) => refresh(first.refresh_token, server)));
    const bought = answers.filter((answer) => answer.status === 201).map((answer) => answer.json() as Pair);
    expect(bought.length).toBeLessThanOrEqual(1);
    // The pair the lost answer held is used up: presented again (whoever holds it), it ends the session.
    expect((await refresh(second.refresh_token)).status).toBe(401);
    for (const pair of bought) {
      expect((await refresh(pair.refresh_token)).status).toBe(401);
      expect(await everywhere(pair.token, 401)).toEqual([401, 401]);
    }
  }, 30_000);
});

describe('hole 6: a made-up refresh token', () => {
  const base62 = (length: number) =>
    Array.from({ length }, () => '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'[Math.floor(Math.random() * 62)]).join('');

  it('of the current form is refused without a query: the deployment alone makes its tag', async () => {
    const pair = await signIn('rev-ann');
    expect(pair.refresh_token).toMatch(/^xrr_[0-9A-Za-z]{54}$/);
    // With the sessions' table out of reach, a refresh that reached the database would fail (500: a table missing).
    await connection.query('rename table xmlrest_session to xmlrest_session_hidden');
    try {
      const statuses = await Promise.all(Array.from({ length: 40 }, async () => (await refresh(`xrr_${base62(54)}`, servers[0]!)).status));
      expect(statuses.every((status) => status === 401)).toBe(true);
      // Its own token, tag and all, does reach it.
      expect((await refresh(pair.refresh_token, servers[0]!)).status).toBe(500);
    } finally {
      await connection.query('rename table xmlrest_session_hidden to xmlrest_session');
    }
    expect((await refresh(pair.refresh_token, servers[0]!)).status).toBe(201);
  }, 60_000);

  it('of the form made before tags is looked up only within the failed-login limits of its address', async () => {
    // LOGIN_MAX_FAILURES_PER_ADDRESS is 50: each one not found counts, then the address gets 429 without a query.
    // On servers[1], whose counts are its own (memory), and which the last test stops.
    const statuses: number[] = [];
    for (let i = 0; i < 60; i++) statuses.push((await refresh(`xrr_${base62(43)}`, servers[1]!)).status);
    expect(statuses.filter((status) => status === 401).length).toBeLessThanOrEqual(50);
    expect(statuses.slice(-5)).toEqual([429, 429, 429, 429, 429]);
  }, 60_000);
});

describe('hole 8: logout', () => {
  it('the server that ends a session refuses its tokens from that moment, even while its revocation read is under way', async () => {
    // Every ended session the poll reads makes its read long: 100,000 of them (their tokens may come for an hour).
    await connection.query(
      `insert into xmlrest_session (sid, backend, user_id, roles, current_hash, expires_on, ended_on, ended_why, tokens_until)
       select concat('slow', lpad(seq, 18, '0')), 'ses', '424243', 'member', unhex(sha2(concat('slow', seq), 256)),
         now() + interval 1 day, now() - interval 1 minute, 'logout_all', now() + interval 1 hour
       from seq_1_to_100000`,
    );
    const schema = new URL(databaseUrl).pathname.slice(1);
    // The read seen under way must be this server's own: the other one stops (this is the file's last test).
    await servers[1]!.stop();
    try {
      for (const user of ['rev-fay', 'rev-gus', 'rev-fay', 'rev-gus', 'rev-fay']) {
        const pair = await signIn(user);
        expect((await me(pair.token, servers[0]!)).status).toBe(200);
        // Logout while a read of the ended sessions is under way, when the server has one (within a poll).
        for (let waited = 0; waited < 6000; waited += 5) {
          const [reading] = (await connection.query(
            "select id from information_schema.processlist where db = ? and info like 'select backend, sid%from xmlrest_session%'",
            [schema],
          )) as unknown as [object[]];
          if (reading.length > 0) break;
          await sleep(5);
        }
        const out = await send(`${servers[0]!.url}/ses/v1.0/logout`, { method: 'POST', headers: { authorization: `Bearer ${pair.token}` } });
        expect(out.json()).toEqual({ ended: 1 });
        expect((await me(pair.token, servers[0]!)).status).toBe(401);
      }
    } finally {
      await connection.query("delete from xmlrest_session where sid like 'slow%'");
    }
  }, 90_000);
});
