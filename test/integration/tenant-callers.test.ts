import { Writable } from 'node:stream';
import type mysql from 'mysql2/promise';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyStore } from '../../console/keys.js';
import type { BackendModule, ListSpec, ParamSpecs, RequestScope, ResourceModule } from '../../runtime/contract.js';
import { createReloadableApp, type Database, listen, openDatabase, type Revocations, type RunningServer } from '../../runtime/index.js';
import { tenantChanged } from '../../runtime/tenants/index.js';
import { connectTo } from '../../scripts/connection.js';
import { addUser, queryableOf } from '../../scripts/schema.js';
import { basicHeader, formBody, type RawResponse, send } from '../support/http.js';
import { type FixtureIssuer, type PrivateJwk, signingKey, startFixtureIssuer } from '../support/identity-provider.js';
import { ownDatabase } from '../support/own-database.js';
import { decodeJwt, TEST_SECRET } from '../support/server.js';

/**
 * Each caller's tenant at run time (docs/internals/contract.md §14), over HTTP against MariaDB: two hand-written tenant
 * backends (the generator's tenant modules are another helper's work) whose handlers ask `scope.caller` as generated
 * ones will, one Basic and one Bearer with sessions, both taking API keys, on the default user tables with an
 * `org_id` on usr. Every way in gives the user's tenant, a user without one is refused on every way in, and the
 * tenant is read where the roles are, never per request.
 */

const TENANT_SQL = 'select org_id as tenant from usr where user_id = ?';
const TENANT = { column: 'org_id', type: 'integer', userQuery: { sql: TENANT_SQL } } as const;
const ROLES = ['member'] as const;

const NOTES: ListSpec = {
  sql: 'select note_id, body from tenant_note where org_id = ?',
  where: true,
  tail: '',
  filters: [],
  sort: null,
  page: { size: 2, max: 10, key: [{ sql: 'note_id', column: 'note_id', desc: false, type: 'number' }] },
};
const NOTES_PARAMS: ParamSpecs = {
  limit: { kind: 'integer', nullable: false, min: 1, max: 10, optional: true },
  after: { kind: 'string', nullable: false, maxLength: 155, optional: true },
};

const who: ResourceModule = {
  name: 'who',
  version: '1.0',
  auth: 'member',
  source: 'resources/test/who.xml',
  operations: {
    GET: {
      status: 200,
      access: ROLES,
      audit: { keeps: [] },
      handler: async (scope: RequestScope) => {
        const { uid, tenant } = await scope.caller(ROLES);
        return { uid, tenant, plugin: scope.plugin.tenant ?? null };
      },
    },
  },
};

const notes: ResourceModule = {
  name: 'notes',
  version: '1.0',
  auth: 'member',
  source: 'resources/test/notes.xml',
  operations: {
    GET: {
      status: 200,
      access: ROLES,
      pages: true,
      handler: async (scope: RequestScope) => {
        const { tenant } = await scope.caller(ROLES);
        const params = await scope.params<{ limit?: number; after?: string }>(NOTES_PARAMS);
        const list = scope.list(NOTES, params);
        const rows = list.page(await scope.db.select<{ note_id: number; body: string }>(list.sql, list.values(tenant)));
        return { notes: rows, next: list.next };
      },
    },
  },
};

/**
 * A token request's plug-in as shape B's does it (token-b.ts), standing in for one whose query found the user: a
 * token issued by `issueToken` without a tenant, or signed by `signToken`, which does no I/O, with none.
 */
const issue: ResourceModule = {
  name: 'issue',
  version: '1.0',
  auth: null,
  source: 'resources/test/issue.xml',
  operations: {
    POST: {
      status: 201,
      access: null,
      handler: async (scope: RequestScope) => {
        const { sub, how } = await scope.params<{ sub: string; how: 'issue' | 'sign' }>({
          sub: { kind: 'string', nullable: false, maxLength: 20 },
          how: { kind: 'enum', nullable: false, values: ['issue', 'sign'] },
        });
        const claims = { sub, aud: 'member' };
        return { token: how === 'issue' ? await scope.plugin.issueToken(claims) : scope.plugin.signToken(claims) };
      },
    },
  },
};

const SETTINGS = {
  authQuery: null,
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
  apiKeys: true,
  sessionLifetime: 2592000,
  tenant: TENANT,
  resources: [who, notes],
} as const;

const tbasic: BackendModule = {
  ...SETTINGS,
  name: 'tbasic',
  issuer: 'tbasic',
  authScheme: 'Basic',
  authQuery: {
    sql: 'select r.user_id, r.role_name, u.pass_word from usr_role r inner join usr u on r.user_id = u.user_id where u.user_name = ?',
    binds: ['user'],
    passwordColumn: 'pass_word',
  },
  refreshLifetime: null,
};

/**
 * A second Basic tenant backend on the same user tables whose tenant is another column of usr (`team_id`): the
 * server's one credential cache remembers a password's verdict for both, and must never answer one backend's
 * tenant for the other's.
 */
const TEAM_SQL = 'select team_id as tenant from usr where user_id = ?';
const tteam: BackendModule = {
  ...tbasic,
  name: 'tteam',
  issuer: 'tteam',
  apiKeys: false,
  tenant: { column: 'team_id', type: 'integer', userQuery: { sql: TEAM_SQL }, userColumn: 'team_id' },
};

/** An outside issuer of the Bearer backend, its tenant in the claim `org`. */
const OUTSIDE = 'https://tenants.example';

const bearerBackend = (jwksUri: string): BackendModule => ({
  ...SETTINGS,
  issuers: [
    {
      iss: OUTSIDE,
      audience: ['api'],
      keys: { jwksUri },
      algorithms: ['ES256'],
      clockSkew: 0,
      roles: { path: ['roles'], format: 'array' },
      roleMap: [],
      mapOnly: false,
      user: ['sub'],
      userQuery: null,
      tenant: ['org'],
    },
  ],
  name: 'tbear',
  issuer: 'tbear',
  authScheme: 'Bearer',
  authQuery: {
    sql: 'select cast(r.user_id as char) as sub, r.role_name as aud, u.pass_word from usr_role r inner join usr u on r.user_id = u.user_id where u.user_name = ?',
    binds: ['user'],
    passwordColumn: 'pass_word',
  },
  refreshLifetime: 3600,
  resources: [who, notes, issue],
});

describe('a caller of a tenant backend, by every way in', () => {
  let connection: mysql.Connection;
  let database: Database;
  let running: RunningServer;
  let revocations: Revocations;
  let issuer: FixtureIssuer;
  let issuerKey: PrivateJwk;
  let tbear: BackendModule;
  const lines: Record<string, unknown>[] = [];
  /** How many times the server ran the user query of the tenant. */
  let tenantReads = 0;
  const users: Record<'ann' | 'bob' | 'nat', number> = { ann: 0, bob: 0, nat: 0 };
  const url = (path: string) => `${running.url}${path}`;

  beforeAll(async () => {
    issuerKey = await signingKey('ES256', 'tenant-ec');
    issuer = await startFixtureIssuer([issuerKey]);
    tbear = bearerBackend(issuer.jwksUri);
    const own = await ownDatabase('tenant_callers');
    connection = await connectTo(own);
    await connection.query('alter table usr add column if not exists org_id int unsigned null, add column if not exists team_id int unsigned null');
    await connection.query('create table tenant_note (note_id int unsigned not null primary key, org_id int unsigned not null, body varchar(50) not null)');
    await connection.query("insert into tenant_note values (1, 1, 'a1'), (2, 1, 'a2'), (3, 1, 'a3'), (4, 2, 'b1'), (5, 2, 'b2'), (6, 2, 'b3')");
    for (const name of ['ann', 'bob', 'nat'] as const) users[name] = await addUser(connection, `t_${name}`, `${name}-pass-1`, ['member']);
    await connection.query('update usr set org_id = 1 where user_id = ?', [users.ann]);
    await connection.query('update usr set org_id = 2 where user_id = ?', [users.bob]);
    await connection.query('update usr set team_id = 7 where user_id = ?', [users.ann]);
    database = openDatabase(own);
    const select = database.select.bind(database);
    database.select = ((sql: string, values?: readonly unknown[]) => {
      if (sql === TENANT_SQL) tenantReads++;
      return select(sql, values as never);
    }) as typeof database.select;
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n')) if (line !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    const served = createReloadableApp({ backends: [tbasic, tbear, tteam], database, jwtSecret: TEST_SECRET, logger: pino({ level: 'info' }, sink) });
    revocations = served.revocations;
    running = await listen(served.app, 0, '127.0.0.1');
  }, 120_000);

  afterAll(async () => {
    await running?.close();
    await database?.end();
    await connection?.end();
    await issuer?.close();
  });

  const basic = (name: 'ann' | 'bob' | 'nat') => ({ authorization: basicHeader(`t_${name}`, `${name}-pass-1`) });
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  const tokenOf = async (name: 'ann' | 'bob' | 'nat') => {
    const answer = await send(url('/tbear/'), { method: 'POST', ...formBody({ auth: 'bearer', userid: `t_${name}`, password: `${name}-pass-1` }) });
    expect(answer.status).toBe(200);
    return answer.json() as { token: string; refresh_token: string };
  };
  const keyOf = async (name: 'ann' | 'bob' | 'nat', backend: string) =>
    (
      await new KeyStore(queryableOf(connection)).create({
        backend,
        userId: String(users[name]),
        name: `k_${name}`,
        roles: ['member'],
        expires: null,
        rate: null,
      })
    ).key;
  const expectNoTenant = (answer: RawResponse) => {
    expect(answer.status).toBe(403);
    expect(answer.json()).toEqual({ message: expect.any(String), status: 403 });
  };

  it('Basic gives the user’s tenant, read with the password’s check and then remembered with its verdict', async () => {
    const first = await send(url('/tbasic/v1.0/who'), { headers: basic('ann') });
    expect(first.status).toBe(200);
    expect(first.json()).toEqual({ uid: String(users.ann), tenant: '1', plugin: '1' });
    const reads = tenantReads;
    for (let i = 0; i < 3; i++) expect((await send(url('/tbasic/v1.0/who'), { headers: basic('ann') })).json()).toMatchObject({ tenant: '1' });
    // A remembered password answers its tenant without a query.
    expect(tenantReads).toBe(reads);
    expect((await send(url('/tbasic/v1.0/who'), { headers: basic('bob') })).json()).toMatchObject({ tenant: '2' });
  });

  it('two Basic backends reading the tenant from different columns: a remembered password answers each its own tenant', async () => {
    // ann's password is remembered with tbasic's tenant (org_id 1) by the test above, or here.
    expect((await send(url('/tbasic/v1.0/who'), { headers: basic('ann') })).json()).toMatchObject({ tenant: '1' });
    expect((await send(url('/tteam/v1.0/who'), { headers: basic('ann') })).json()).toMatchObject({ tenant: '7' });
    expect((await send(url('/tbasic/v1.0/who'), { headers: basic('ann') })).json()).toMatchObject({ tenant: '1' });
    // bob has no team: refused on tteam, whatever tbasic remembered for his password.
    expect((await send(url('/tbasic/v1.0/who'), { headers: basic('bob') })).json()).toMatchObject({ tenant: '2' });
    expectNoTenant(await send(url('/tteam/v1.0/who'), { headers: basic('bob') }));
  });

  it('a token of shape A carries the tenant as ten, signed at issue, and a request with it reads nothing', async () => {
    const { token } = await tokenOf('ann');
    expect(decodeJwt(token).payload.ten).toBe('1');
    const reads = tenantReads;
    for (let i = 0; i < 3; i++) expect((await send(url('/tbear/v1.0/who'), { headers: bearer(token) })).json()).toMatchObject({ tenant: '1' });
    expect(tenantReads).toBe(reads);
  });

  it("a token request's plug-in: issueToken reads the user's tenant by sub; signToken signs only a tenant it is given", async () => {
    const request = (how: string) => send(url('/tbear/v1.0/issue'), { method: 'POST', ...formBody({ sub: String(users.bob), how }) });
    const issued = ((await request('issue')).json() as { token: string }).token;
    expect(decodeJwt(issued).payload.ten).toBe('2');
    expect((await send(url('/tbear/v1.0/who'), { headers: bearer(issued) })).json()).toMatchObject({ tenant: '2' });
    const signed = ((await request('sign')).json() as { token: string }).token;
    expect(decodeJwt(signed).payload).not.toHaveProperty('ten');
    expectNoTenant(await send(url('/tbear/v1.0/who'), { headers: bearer(signed) }));
  });

  it('a session’s refresh reads the tenant again', async () => {
    const { refresh_token } = await tokenOf('bob');
    await connection.query('update usr set org_id = 3 where user_id = ?', [users.bob]);
    try {
      const refreshed = await send(url('/tbear/v1.0/token/refresh'), { method: 'POST', ...formBody({ refresh_token }) });
      expect(refreshed.status).toBe(201);
      const { token } = refreshed.json() as { token: string };
      expect(decodeJwt(token).payload.ten).toBe('3');
      expect((await send(url('/tbear/v1.0/who'), { headers: bearer(token) })).json()).toMatchObject({ tenant: '3' });
    } finally {
      await connection.query('update usr set org_id = 2 where user_id = ?', [users.bob]);
    }
  });

  it('an API key gives its user’s tenant, read with the key', async () => {
    const key = await keyOf('ann', 'tbasic');
    expect((await send(url('/tbasic/v1.0/who'), { headers: { 'x-api-key': key } })).json()).toMatchObject({ uid: String(users.ann), tenant: '1' });
    const reads = tenantReads;
    expect((await send(url('/tbasic/v1.0/who'), { headers: { 'x-api-key': key } })).json()).toMatchObject({ tenant: '1' });
    expect(tenantReads).toBe(reads);
    const bobs = await keyOf('bob', 'tbear');
    expect((await send(url('/tbear/v1.0/who'), { headers: bearer(bobs) })).json()).toMatchObject({ tenant: '2' });
  });

  it("an outside issuer's token gives the tenant its claim names; none, or one not of the tenant's type, is 403 no_tenant", async () => {
    const outside = (claims: Record<string, unknown>) => issuer.sign(issuerKey, { iss: OUTSIDE, aud: 'api', sub: '77', roles: ['member'], ...claims });
    const reads = tenantReads;
    expect((await send(url('/tbear/v1.0/who'), { headers: bearer(await outside({ org: '5' })) })).json()).toMatchObject({ uid: '77', tenant: '5' });
    expect((await send(url('/tbear/v1.0/who'), { headers: bearer(await outside({ org: 6 })) })).json()).toMatchObject({ tenant: '6' });
    expect(tenantReads).toBe(reads);
    expectNoTenant(await send(url('/tbear/v1.0/who'), { headers: bearer(await outside({})) }));
    expectNoTenant(await send(url('/tbear/v1.0/who'), { headers: bearer(await outside({ org: '05' })) }));
    expectNoTenant(await send(url('/tbear/v1.0/who'), { headers: bearer(await outside({ org: 'acme' })) }));
  });

  it('a user whose tenant is NULL is refused on every way in: 403 no_tenant', async () => {
    expectNoTenant(await send(url('/tbasic/v1.0/who'), { headers: basic('nat') }));
    const { token, refresh_token } = await tokenOf('nat');
    expect(decodeJwt(token).payload).not.toHaveProperty('ten');
    expectNoTenant(await send(url('/tbear/v1.0/who'), { headers: bearer(token) }));
    const refreshed = await send(url('/tbear/v1.0/token/refresh'), { method: 'POST', ...formBody({ refresh_token }) });
    expectNoTenant(await send(url('/tbear/v1.0/who'), { headers: bearer((refreshed.json() as { token: string }).token) }));
    expectNoTenant(await send(url('/tbasic/v1.0/who'), { headers: { 'x-api-key': await keyOf('nat', 'tbasic') } }));
    expectNoTenant(await send(url('/tbasic/v1.0/notes'), { headers: basic('nat') }));
    await expect.poll(() => lines.some((line) => line.msg === 'request' && line.reason === 'no_tenant' && line.userId === String(users.nat))).toBe(true);
  });

  it('a token whose ten was changed to another tenant is refused: 401, its signature', async () => {
    const { token } = await tokenOf('ann');
    const [header, payload, signature] = token.split('.');
    const forged = { ...(JSON.parse(Buffer.from(payload!, 'base64url').toString('utf8')) as object), ten: '2' };
    const answer = await send(url('/tbear/v1.0/who'), {
      headers: bearer(`${header}.${Buffer.from(JSON.stringify(forged)).toString('base64url')}.${signature}`),
    });
    expect(answer.status).toBe(401);
    expect(answer.headers['www-authenticate']).toContain('token signature is invalid');
  });

  it('a cursor of tenant 1 does not open for tenant 2, even for the same user: 400; tenantChanged ends the old tenant', async () => {
    const page = await send(url('/tbasic/v1.0/notes'), { headers: basic('ann') });
    expect(page.status).toBe(200);
    const { notes: rows, next } = page.json() as { notes: { body: string }[]; next: string };
    expect(rows.map((row) => row.body)).toEqual(['a1', 'a2']);
    expect((await send(url(`/tbasic/v1.0/notes?after=${encodeURIComponent(next)}`), { headers: basic('ann') })).json()).toMatchObject({
      notes: [{ body: 'a3' }],
    });
    await connection.query('update usr set org_id = 2 where user_id = ?', [users.ann]);
    try {
      await tenantChanged(queryableOf(connection), tbasic, String(users.ann));
      await revocations.refresh();
      // The remembered verdict's tenant is older than the revocation: read again.
      expect((await send(url('/tbasic/v1.0/who'), { headers: basic('ann') })).json()).toMatchObject({ tenant: '2' });
      const replayed = await send(url(`/tbasic/v1.0/notes?after=${encodeURIComponent(next)}`), { headers: basic('ann') });
      expect(replayed.status).toBe(400);
      expect((replayed.json() as { message: string }).message).toContain('not a cursor of this list');
    } finally {
      await connection.query('update usr set org_id = 1 where user_id = ?', [users.ann]);
      await tenantChanged(queryableOf(connection), tbasic, String(users.ann));
      await revocations.refresh();
    }
  });

  it('the audit row and the access log line carry the tenant', async () => {
    const answer = await send(url('/tbasic/v1.0/who'), { headers: { ...basic('bob'), 'x-request-id': 'tenant-audit-1' } });
    expect(answer.status).toBe(200);
    const audited = async () => {
      const [rows] = await connection.query('select user_id, tenant from xmlrest_api_audit where request_id = ?', ['tenant-audit-1']);
      return rows as { user_id: string; tenant: string | null }[];
    };
    await expect.poll(audited, { timeout: 30_000, interval: 200 }).toEqual([{ user_id: String(users.bob), tenant: '2' }]);
    await expect.poll(() => lines.find((line) => line.msg === 'request' && line.requestId === 'tenant-audit-1')?.tenant).toBe('2');
  });
});
