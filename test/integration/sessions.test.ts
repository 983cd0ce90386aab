import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectTo } from '../../scripts/connection.js';
import { addUser, grantRole } from '../../scripts/schema.js';
import { type BuiltServer, startBuiltServer } from '../support/built-server.js';
import { formBody, send } from '../support/http.js';
import { buildScratchProject } from '../support/scratch-project.js';
import { decodeJwt } from '../support/server.js';

/**
 * Sessions (docs/internals/contract.md §10, issue 29) at the door of two built servers
 * on one database: both token shapes answer a refresh token, access tokens
 * carry `sid`; a refresh rotates, a used-up token coming back after the 10 s
 * grace ends the whole session on every server within 5 s; logout, logout of
 * every session, a changed password; idle and absolute lifetimes.
 */
const ROOT = path.resolve('test/.tmp/sessions');
const TOKEN_XML = `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0">
  <Request method="POST" status="201">
    <Sql id="authQuery" output="false">
      select cast(u.user_id as char) as sub, r.role_name as aud, u.pass_word
      from usr_role r inner join usr u on r.user_id = u.user_id
      where u.user_name = $user
    </Sql>
    <Execute id="token" output="true" classname="xmlrest.auth.TokenGenerator">
      <Arg name="aud" value="$[authQuery][0].aud"/>
      <Arg name="sub" value="$[authQuery][0].sub"/>
      <Arg name="password" value="$pass"/>
      <Arg name="hash" value="$[authQuery][0].pass_word"/>
      <Arg name="user" value="$user"/>
    </Execute>
  </Request>
</Resource>
`;
const ME_XML = `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0" auth="member">
  <Request method="GET"><Sql id="me">select user_name from usr where user_id = $uid</Sql></Request>
</Resource>
`;
let connection: mysql.Connection;
let servers: BuiltServer[] = [];

beforeAll(async () => {
  connection = await connectTo(inject('databaseUrl'));
  for (const user of ['ses-ann', 'ses-ben', 'ses-cat', 'ses-dan']) await addUser(connection, user, `${user}-pass`, ['member']);
  // A member for 6 s only: a grant that ends (runtime/auth/users/grants.ts), granted once the servers are up.
  await addUser(connection, 'ses-eve', 'ses-eve-pass', []);
  await buildScratchProject(ROOT, {
    databaseUrl: inject('databaseUrl'),
    files: {
      'resources/ses/backend.xml': '<Backend xmlns="urn:xmlrest:resource:1.0" auth_scheme="Bearer" refresh_lifetime="3600"/>\n',
      'resources/ses/token.xml': TOKEN_XML,
      'resources/ses/me.xml': ME_XML,
      'resources/brief/backend.xml': '<Backend xmlns="urn:xmlrest:resource:1.0" auth_scheme="Bearer" refresh_lifetime="10" session_lifetime="15"/>\n',
      'resources/brief/me.xml': ME_XML,
    },
  });
  servers = await Promise.all([startBuiltServer({ root: ROOT }), startBuiltServer({ root: ROOT })]);
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

async function signIn(user: string, backend = 'ses'): Promise<Pair> {
  const response = await send(`${servers[0]!.url}/${backend}/`, { method: 'POST', ...formBody({ auth: 'bearer', userid: user, password: `${user}-pass` }) });
  expect(response.status).toBe(200);
  return response.json() as Pair;
}

const refresh = (refreshToken: string, server = servers[1]!, backend = 'ses') =>
  send(`${server.url}/${backend}/v1.0/token/refresh`, { method: 'POST', ...formBody({ refresh_token: refreshToken }) });

const me = (token: string, server: BuiltServer, backend = 'ses') => send(`${server.url}/${backend}/v1.0/me`, { headers: { authorization: `Bearer ${token}` } });

/** Polls both servers until the token gets `status` on both, or 10 s pass; the statuses last seen. */
async function everywhere(token: string, status: number, backend = 'ses'): Promise<number[]> {
  let statuses: number[] = [];
  for (let waited = 0; waited <= 10_000; waited += 250) {
    statuses = await Promise.all(servers.map(async (server) => (await me(token, server, backend)).status));
    if (statuses.every((answer) => answer === status)) return statuses;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return statuses;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a session', () => {
  it('begins at either token request: a refresh token beside the token, and sid in the token', async () => {
    const a = await signIn('ses-ann');
    expect(a.refresh_token).toMatch(/^xrr_[0-9A-Za-z]{54}$/);
    expect(decodeJwt(a.token).payload.sid).toMatch(/^[A-Za-z0-9_-]{22}$/);
    const b = await send(`${servers[1]!.url}/ses/v1.0/token`, { method: 'POST', ...formBody({ user: 'ses-ann', pass: 'ses-ann-pass' }) });
    expect(b.status).toBe(201);
    const body = b.json() as Pair;
    expect(Object.keys(body).sort()).toEqual(['refresh_token', 'token']);
    expect(decodeJwt(body.token).payload.sid).not.toBe(decodeJwt(a.token).payload.sid);
    // Only the hash is stored.
    const [rows] = (await connection.query('select * from xmlrest_session where sid = ?', [decodeJwt(a.token).payload.sid])) as unknown as [object[]];
    expect(JSON.stringify(rows)).not.toContain(a.refresh_token.slice(4, 30));
  });

  it('rotates: a new pair for the refresh token, which is used up; from the body only', async () => {
    const first = await signIn('ses-ann');
    const answer = await refresh(first.refresh_token);
    expect(answer.status).toBe(201);
    const second = answer.json() as Pair & { type: string };
    expect(second.type).toBe('Bearer');
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(decodeJwt(second.token).payload.sid).toBe(decodeJwt(first.token).payload.sid);
    expect((await me(second.token, servers[0]!)).status).toBe(200);
    expect((await send(`${servers[0]!.url}/ses/v1.0/token/refresh?refresh_token=${second.refresh_token}`, { method: 'POST' })).status).toBe(400);
    expect((await refresh('xrr_not-a-token')).status).toBe(401);
  });

  it('a used-up token rotates again within the 10 s grace; after it, its use ends the whole session everywhere', async () => {
    const first = await signIn('ses-ben');
    const second = (await refresh(first.refresh_token)).json() as Pair;
    // The client lost the answer and tries again: a new pair; the one it lost is used up too.
    const retried = await refresh(first.refresh_token, servers[0]!);
    expect(retried.status).toBe(201);
    const third = retried.json() as Pair;
    expect(await everywhere(third.token, 200)).toEqual([200, 200]);
    await sleep(11_000);
    // The pair the lost answer held comes back later (whoever holds it, the owner or a thief): the session ends.
    const reused = await refresh(second.refresh_token);
    expect(reused.status).toBe(401);
    expect(reused.json()).toEqual({ message: 'Invalid refresh token', status: 401 });
    // Its newest tokens with it, on both servers within 5 s; the first token too.
    expect(await everywhere(third.token, 401)).toEqual([401, 401]);
    expect((await refresh(third.refresh_token)).status).toBe(401);
    expect((await refresh(first.refresh_token)).status).toBe(401);
    // Another session of the same user is untouched.
    const other = await signIn('ses-ben');
    expect((await me(other.token, servers[1]!)).status).toBe(200);
  }, 60_000);

  it('a used-up token coming back after the grace ends the session, the first use of its successor never mind', async () => {
    const first = await signIn('ses-ben');
    const second = (await refresh(first.refresh_token)).json() as Pair;
    await sleep(11_000);
    expect((await refresh(first.refresh_token)).status).toBe(401);
    expect(await everywhere(second.token, 401)).toEqual([401, 401]);
    expect((await refresh(second.refresh_token)).status).toBe(401);
  }, 60_000);

  it('ends at logout on every server; scope=all ends every session of the user', async () => {
    const one = await signIn('ses-cat');
    const two = await signIn('ses-cat');
    const logout = (token: string, fields: Record<string, string> = {}) =>
      send(`${servers[0]!.url}/ses/v1.0/logout`, {
        method: 'POST',
        ...formBody(fields),
        headers: { ...formBody(fields).headers, authorization: `Bearer ${token}` },
      });
    const out = await logout(one.token);
    expect(out.status).toBe(200);
    expect(out.json()).toEqual({ ended: 1 });
    expect(await everywhere(one.token, 401)).toEqual([401, 401]);
    expect((await refresh(one.refresh_token)).status).toBe(401);
    expect((await me(two.token, servers[1]!)).status).toBe(200);
    const three = await signIn('ses-cat');
    expect((await logout(three.token, { scope: 'all' })).json()).toEqual({ ended: 2 });
    expect(await everywhere(two.token, 401)).toEqual([401, 401]);
    expect((await refresh(two.refresh_token)).status).toBe(401);
    expect((await logout(three.token, { scope: 'some' })).status).toBe(401);
  });

  it('ends when the password changes, even by SQL', async () => {
    const pair = await signIn('ses-dan');
    expect((await me(pair.token, servers[1]!)).status).toBe(200);
    await connection.query("update usr set pass_word = 'plain-new-password' where user_name = 'ses-dan'");
    expect(await everywhere(pair.token, 401)).toEqual([401, 401]);
    expect((await refresh(pair.refresh_token)).status).toBe(401);
  });

  it('ends idle past refresh_lifetime, and at session_lifetime however often refreshed; tokens never outlive it', async () => {
    const idle = await signIn('ses-ann', 'brief');
    let kept = await signIn('ses-ann', 'brief');
    const ends = decodeJwt(kept.token).payload.exp as number;
    expect(ends).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 16);
    for (let i = 0; i < 2; i++) {
      await sleep(6000);
      const answer = await refresh(kept.refresh_token, servers[i % 2]!, 'brief');
      expect(answer.status).toBe(201);
      kept = answer.json() as Pair;
      expect(decodeJwt(kept.token).payload.exp as number).toBeLessThanOrEqual(ends);
    }
    // 12 s without a refresh: idle past 10 s.
    expect((await refresh(idle.refresh_token, servers[0]!, 'brief')).status).toBe(401);
    await sleep(4000);
    // 16 s after it began: past the session's 15 s, refreshed or not.
    expect((await refresh(kept.refresh_token, servers[1]!, 'brief')).status).toBe(401);
  }, 60_000);

  it('carrying a grant that ends, ends with it: its tokens expire by then, and its refresh token is refused after', async () => {
    const [[{ id }]] = (await connection.query("select user_id as id from usr where user_name = 'ses-eve'")) as unknown as [[{ id: number }]];
    // Signing in and refreshing must both happen while the grant lasts: a busy machine that was slower than that gets
    // a longer grant (extending a grant revokes nothing), rather than a failure.
    let until = 0;
    let pair: Pair | undefined;
    let refreshed: Awaited<ReturnType<typeof refresh>> | undefined;
    for (const seconds of [6, 12]) {
      until = Math.floor(Date.now() / 1000) + seconds;
      await grantRole(connection, id, 'member', until);
      pair = await signIn('ses-eve');
      refreshed = await refresh(pair.refresh_token);
      if (Date.now() / 1000 < until - 1) break;
    }
    if (pair === undefined || refreshed === undefined) throw new Error('no attempt was made');
    expect(decodeJwt(pair.token).payload.exp).toBeLessThanOrEqual(until);
    const [[session]] = (await connection.query('select unix_timestamp(expires_on) as ends from xmlrest_session where sid = ?', [
      decodeJwt(pair.token).payload.sid,
    ])) as unknown as [[{ ends: number | string }]];
    expect(Number(session.ends)).toBeLessThanOrEqual(until);
    expect(refreshed.status).toBe(201);
    expect(decodeJwt((refreshed.json() as Pair).token).payload.exp).toBeLessThanOrEqual(until);
    // The grant ends: the session's refresh token buys nothing more, and signing in again finds no role to hold.
    while (Date.now() / 1000 < until + 1) await sleep(250);
    expect((await refresh((refreshed.json() as Pair).refresh_token)).status).toBe(401);
    expect(
      (await send(`${servers[0]!.url}/ses/`, { method: 'POST', ...formBody({ auth: 'bearer', userid: 'ses-eve', password: 'ses-eve-pass' }) })).status,
    ).toBe(401);
  }, 30_000);
});

describe('xmlrest verify-access (issue 30)', () => {
  it('agrees with this project’s access.lock on a backend with sessions, through both token shapes, and leaves no user behind', async () => {
    const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
      execFile(
        process.execPath,
        [path.join(ROOT, 'scripts/xmlrest.mjs'), 'verify-access', servers[0]!.url, '--json'],
        { cwd: ROOT, env: { ...process.env, DATABASE_URL: inject('databaseUrl') } },
        (error, out, err) => resolve({ code: error ? Number((error as { code?: number }).code) : 0, stdout: out, stderr: err }),
      ),
    );
    expect(code, stderr).toBe(0);
    const verdict = JSON.parse(stdout) as { disagreements: unknown[]; checks: Record<string, unknown>[] };
    expect(verdict.disagreements).toEqual([]);
    expect(verdict.checks).toContainEqual(expect.objectContaining({ backend: 'ses', credentials: 'Bearer (shape B)', role: 'member', got: 'admitted' }));
    const [left] = (await connection.query("select user_name from usr where user_name like 'xmlrest-verify-%'")) as unknown as [object[]];
    expect(left).toEqual([]);
  }, 60_000);
});
