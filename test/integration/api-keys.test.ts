import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { crc32 } from 'node:zlib';
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

import { base62 } from '../../runtime/auth/keys/api-key.js';
import { connectTo } from '../../scripts/connection.js';
import { addUser, grantRole, revokeRole } from '../../scripts/schema.js';
import { type BuiltServer, startBuiltServer } from '../support/built-server.js';
import { basicHeader, send } from '../support/http.js';
import { buildScratchProject } from '../support/scratch-project.js';

/**
 * API keys (docs/internals/contract.md §10, issue 29) at the door of two built servers
 * on one database: made by `xmlrest key create` and shown once, stored as
 * their SHA-256 only, sent as X-API-Key or as a Bearer credential, on a
 * Bearer and a Basic backend; a key admits only the roles it lists that its
 * user still holds; revoked, expired, a disabled user: refused on both
 * servers within 5 s; a mistyped key refused before any query; its own rate.
 */
const ROOT = path.resolve('test/.tmp/api-keys');
const run = promisify(execFile);
let connection: mysql.Connection;
let servers: BuiltServer[] = [];
let owner = 0;

beforeAll(async () => {
  connection = await connectTo(inject('databaseUrl'));
  owner = await addUser(connection, 'key-owner', 'key-owner-pass', ['exporter', 'admin', 'staff']);
  await addUser(connection, 'key-nobody', 'key-nobody-pass', ['exporter']);
  await buildScratchProject(ROOT, {
    databaseUrl: inject('databaseUrl'),
    files: {
      'resources/ak/backend.xml': '<Backend xmlns="urn:xmlrest:resource:1.0" auth_scheme="Bearer" api_keys="on"/>\n',
      'resources/ak/export.xml': `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0" auth="exporter">
  <Request method="GET"><Sql id="me">select user_name from usr where user_id = $uid</Sql></Request>
</Resource>
`,
      'resources/ak/admin.xml': `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0" auth="admin">
  <Request method="GET"><Sql id="area">select 'admin' as area</Sql></Request>
</Resource>
`,
      'resources/ak/limited.xml': `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0" auth="exporter" rate_limit="1000/h">
  <Request method="GET"><Sql id="ok">select 1 as ok</Sql></Request>
</Resource>
`,
      'resources/akb/backend.xml': '<Backend xmlns="urn:xmlrest:resource:1.0" auth_scheme="Basic" api_keys="on"/>\n',
      'resources/akb/notes.xml': `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0" auth="staff">
  <Request method="GET"><Sql id="me">select user_name from usr where user_id = $uid</Sql></Request>
</Resource>
`,
      'resources/plain/backend.xml': '<Backend xmlns="urn:xmlrest:resource:1.0" auth_scheme="Bearer" issuer="plain"/>\n',
      'resources/plain/export.xml': `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0" auth="exporter">
  <Request method="GET"><Sql id="ok">select 1 as ok</Sql></Request>
</Resource>
`,
    },
  });
  servers = await Promise.all([startBuiltServer({ root: ROOT }), startBuiltServer({ root: ROOT })]);
}, 180_000);

afterAll(async () => {
  await Promise.all(servers.map((server) => server.stop()));
  await connection?.end();
  rmSync(ROOT, { recursive: true, force: true });
});

async function xmlrest(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'scripts/cli/xmlrest.ts', ...args], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: inject('databaseUrl') },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

async function create(...args: string[]): Promise<string> {
  const made = await xmlrest('key', 'create', ...args);
  expect(made.code, made.stderr).toBe(0);
  return made.stdout.trim();
}

const call = (server: BuiltServer, route: string, headers: Record<string, string>) => send(`${server.url}${route}`, { headers });

/** Polls both servers until `route` answers `status` to the key, or 10 s pass. */
async function everywhere(route: string, key: string, status: number): Promise<number[]> {
  let statuses: number[] = [];
  for (let waited = 0; waited <= 10_000; waited += 250) {
    statuses = await Promise.all(servers.map(async (server) => (await call(server, route, { 'x-api-key': key })).status));
    if (statuses.every((answer) => answer === status)) return statuses;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return statuses;
}

describe('xmlrest key create', () => {
  it('shows the key once, in the documented form, and stores only its SHA-256 and first 8 characters', async () => {
    const made = await xmlrest('key', 'create', '--backend', 'ak', '--user', 'key-owner', '--name', 'nightly export', '--role', 'exporter');
    expect(made.code).toBe(0);
    const key = made.stdout.trim();
    expect(key).toMatch(/^xr_[0-9A-Za-z]{54}$/);
    expect(made.stderr).toContain('store it now, it is not shown again');
    const [rows] = (await connection.query('select * from xmlrest_api_key where prefix = ?', [key.slice(0, 8)])) as unknown as [Record<string, unknown>[]];
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows[0])).not.toContain(key.slice(8, 30));
    expect(Buffer.from(rows[0]!.key_hash as Buffer).equals(createHash('sha256').update(key).digest())).toBe(true);
    const listed = await xmlrest('key', 'list', '--backend', 'ak', '--user', 'key-owner');
    expect(listed.stdout).toContain(`${key.slice(0, 8)}...`);
    expect(listed.stdout).not.toContain(key.slice(8, 30));
  });

  it('refuses a role the user does not hold, an unknown user, a backend without keys, a bad rate or expiry', async () => {
    const refused = async (...args: string[]) => {
      const answer = await xmlrest('key', 'create', ...args);
      expect(answer.code, args.join(' ')).toBe(2);
      return answer.stderr;
    };
    expect(await refused('--backend', 'ak', '--user', 'key-nobody', '--name', 'x', '--role', 'admin')).toContain('the user does not hold admin');
    expect(await refused('--backend', 'ak', '--user', 'nobody-at-all', '--name', 'x', '--role', 'exporter')).toContain('no such user');
    expect(await refused('--backend', 'plain', '--user', 'key-owner', '--name', 'x', '--role', 'exporter')).toContain('takes no API keys');
    expect(await refused('--backend', 'ak', '--user', 'key-owner', '--name', 'x', '--role', 'exporter', '--rate', '5/d')).toContain('a rate is');
    expect(await refused('--backend', 'ak', '--user', 'key-owner', '--name', 'x', '--role', 'exporter', '--expires', 'soon')).toContain('--expires');
  });
});

describe('a key at the door', () => {
  it('admits as X-API-Key and as a Bearer credential, on a Bearer and a Basic backend, as its user', async () => {
    const key = await create('--backend', 'ak', '--user', 'key-owner', '--name', 'both ways', '--role', 'exporter');
    for (const headers of [{ 'x-api-key': key }, { authorization: `Bearer ${key}` }] as Record<string, string>[]) {
      const answer = await call(servers[0]!, '/ak/v1.0/export', headers);
      expect(answer.status).toBe(200);
      expect(answer.json()).toEqual({ me: [{ user_name: 'key-owner' }] });
    }
    const basic = await create('--backend', 'akb', '--user', 'key-owner', '--name', 'desk', '--role', 'staff');
    expect((await call(servers[1]!, '/akb/v1.0/notes', { 'x-api-key': basic })).status).toBe(200);
    expect((await call(servers[1]!, '/akb/v1.0/notes', { authorization: `Bearer ${basic}` })).status).toBe(200);
    // Basic credentials still work beside keys.
    expect((await call(servers[1]!, '/akb/v1.0/notes', { authorization: basicHeader('key-owner', 'key-owner-pass') })).status).toBe(200);
    // A key of one backend opens no other.
    expect((await call(servers[0]!, '/akb/v1.0/notes', { 'x-api-key': key })).status).toBe(401);
    // A backend without api_keys takes none.
    expect((await call(servers[0]!, '/plain/v1.0/export', { authorization: `Bearer ${key}` })).status).toBe(401);
  });

  it('admits only the roles it lists, of those its user still holds', async () => {
    const key = await create('--backend', 'ak', '--user', 'key-owner', '--name', 'exports only', '--role', 'exporter');
    // The user holds admin; the key does not list it.
    expect((await call(servers[0]!, '/ak/v1.0/admin', { 'x-api-key': key })).status).toBe(403);
    const both = await create('--backend', 'ak', '--user', 'key-owner', '--name', 'both roles', '--role', 'exporter', '--role', 'admin');
    const adminOnly = await create('--backend', 'ak', '--user', 'key-owner', '--name', 'admin only', '--role', 'admin');
    expect((await call(servers[0]!, '/ak/v1.0/admin', { 'x-api-key': both })).status).toBe(200);
    await revokeRole(connection, owner, 'admin');
    try {
      expect(await everywhere('/ak/v1.0/admin', both, 403)).toEqual([403, 403]);
      expect((await call(servers[0]!, '/ak/v1.0/export', { 'x-api-key': both })).status).toBe(200);
      // A key left with none of its roles admits nothing, not even where any authenticated caller would do.
      expect(await everywhere('/ak/v1.0/admin', adminOnly, 401)).toEqual([401, 401]);
    } finally {
      await grantRole(connection, owner, 'admin');
    }
  });

  it('refuses a mistyped or made-up key as 401 before any query, and an unknown well-formed one', async () => {
    const key = await create('--backend', 'ak', '--user', 'key-owner', '--name', 'typo', '--role', 'exporter');
    const typo = `${key.slice(0, 10)}${key[10] === 'a' ? 'b' : 'a'}${key.slice(11)}`;
    for (const wrong of [typo, 'xr_short', `${key}x`]) {
      const answer = await call(servers[0]!, '/ak/v1.0/export', { 'x-api-key': wrong });
      expect(answer.status).toBe(401);
      expect(answer.json()).toEqual({ message: 'Invalid API key', status: 401 });
    }
    // A key of the CRC32 form (made before keyed tags) is read, within the failed-login limits: this one is nobody's.
    const body = `xr_${'5'.repeat(43)}`;
    expect((await call(servers[0]!, '/ak/v1.0/export', { 'x-api-key': body + base62(BigInt(crc32(body)), 6) })).status).toBe(401);
    const reasons = servers[0]!.logs.map((line) => line.reason);
    expect(reasons).toContain('malformed_key');
    expect(reasons).toContain('unknown_key');
  });

  it('is refused on every server within 5 s once revoked, expired, or its user disabled', async () => {
    const revoked = await create('--backend', 'ak', '--user', 'key-owner', '--name', 'to revoke', '--role', 'exporter');
    expect(await everywhere('/ak/v1.0/export', revoked, 200)).toEqual([200, 200]);
    const listed = JSON.parse((await xmlrest('key', 'list', '--backend', 'ak', '--json')).stdout) as { key_id: number; prefix: string }[];
    const id = listed.find((row) => row.prefix === revoked.slice(0, 8))!.key_id;
    const started = Date.now();
    expect((await xmlrest('key', 'revoke', String(id))).code).toBe(0);
    expect(await everywhere('/ak/v1.0/export', revoked, 401)).toEqual([401, 401]);
    expect(Date.now() - started).toBeLessThan(7000);
    expect((await xmlrest('key', 'revoke', String(id))).code).toBe(2);

    const expiring = await create('--backend', 'ak', '--user', 'key-owner', '--name', 'to expire', '--role', 'exporter', '--expires', '30d');
    expect(await everywhere('/ak/v1.0/export', expiring, 200)).toEqual([200, 200]);
    await connection.query('update xmlrest_api_key set expires_on = now() - interval 1 second where prefix = ?', [expiring.slice(0, 8)]);
    expect(await everywhere('/ak/v1.0/export', expiring, 401)).toEqual([401, 401]);

    const disabled = await create('--backend', 'ak', '--user', 'key-nobody', '--name', 'of a user to disable', '--role', 'exporter');
    expect(await everywhere('/ak/v1.0/export', disabled, 200)).toEqual([200, 200]);
    await connection.query("update usr set pass_word = concat('!', pass_word) where user_name = 'key-nobody'");
    try {
      expect(await everywhere('/ak/v1.0/export', disabled, 401)).toEqual([401, 401]);
    } finally {
      await connection.query("update usr set pass_word = substring(pass_word, 2) where user_name = 'key-nobody'");
    }
  }, 60_000);

  it('records when it was last used, without a write per request', async () => {
    const key = await create('--backend', 'ak', '--user', 'key-owner', '--name', 'used', '--role', 'exporter');
    for (let i = 0; i < 20; i++) expect((await call(servers[i % 2]!, '/ak/v1.0/export', { 'x-api-key': key })).status).toBe(200);
    const lastUsed = async () =>
      (
        (await connection.query('select last_used_on from xmlrest_api_key where prefix = ?', [key.slice(0, 8)])) as unknown as [{ last_used_on: Date | null }[]]
      )[0][0]!.last_used_on;
    let when = await lastUsed();
    for (let waited = 0; when === null && waited < 12_000; waited += 250) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      when = await lastUsed();
    }
    expect(when).not.toBeNull();
  });

  it('counts against its own rate on every route it calls', async () => {
    const key = await create('--backend', 'ak', '--user', 'key-owner', '--name', 'rated', '--role', 'exporter', '--rate', '3/h');
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await call(servers[i % 2]!, i % 2 ? '/ak/v1.0/limited' : '/ak/v1.0/export', { 'x-api-key': key })).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
  });
});

describe('xmlrest verify-access (issue 30)', () => {
  it('agrees with this project’s access.lock on its server, keys on a Bearer and a Basic backend included, and leaves no user behind', async () => {
    const { code, stdout, stderr } = await xmlrest('verify-access', servers[1]!.url, '--json');
    expect(code, stderr).toBe(0);
    const verdict = JSON.parse(stdout) as { disagreements: unknown[]; checks: Record<string, unknown>[] };
    expect(verdict.disagreements).toEqual([]);
    expect(verdict.checks).toContainEqual(expect.objectContaining({ backend: 'akb', credentials: 'API key', role: 'staff', got: 'admitted' }));
    expect(verdict.checks).toContainEqual(
      expect.objectContaining({ backend: 'ak', credentials: 'API key', role: 'exporter', path: '/ak/v1.0/admin', got: 'refused' }),
    );
    const [left] = (await connection.query("select user_name from usr where user_name like 'xmlrest-verify-%'")) as unknown as [object[]];
    expect(left).toEqual([]);
  }, 60_000);
});
