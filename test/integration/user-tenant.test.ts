import { rmSync } from 'node:fs';
import path from 'node:path';
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyStore } from '../../console/keys.js';
import { connectTo } from '../../scripts/connection.js';
import { queryableOf } from '../../scripts/schema.js';
import { type BuiltServer, startBuiltServer } from '../support/built-server.js';
import { formBody, send } from '../support/http.js';
import { ownDatabase } from '../support/own-database.js';
import { writeTenantProject, xmlrestIn } from '../support/tenant-project.js';

/**
 * A user's tenant from the command line (issue 43 point 4): `xmlrest user add --tenant` writes it in the column of
 * usr the tenant backend reads, checked against the tenant's type (a wrong one creates nobody), and `xmlrest user
 * tenant` moves a user, revoking their tokens, sessions and API keys on that backend exactly as `token revoke
 * --user` does: a token issued before the move, which carries the old tenant, is refused after it, over HTTP
 * against the built server. The project's tenant backend is written by hand (test/support/tenant-project.ts) as
 * the generator will write `shop` with `<Tenant column="ops_org" type="integer"/>`; the server serves the demo's shop.
 */
const ROOT = path.resolve('test/.tmp/user-tenant');
let url: string;
let connection: mysql.Connection;
let server: BuiltServer;

const cli = (...args: string[]) => xmlrestIn(ROOT, url, args);

async function tenantOf(name: string): Promise<string | null | undefined> {
  const [rows] = await connection.execute('select cast(ops_org as char) as tenant from usr where user_name = ?', [name]);
  return (rows as { tenant: string | null }[])[0]?.tenant;
}

async function tokenOf(user: string, password: string): Promise<string> {
  const body = formBody({ auth: 'bearer', userid: user, password });
  const answer = await send(`${server.url}/shop/`, { method: 'POST', body: body.body, headers: body.headers });
  expect(answer.status).toBe(200);
  return (answer.json() as { token: string }).token;
}

/** The status of the account call, once it is `status` (a server hears of a revocation within its poll), or the last one. */
async function accountStatus(headers: Record<string, string>, status: number): Promise<number> {
  let last = 0;
  for (let waited = 0; waited <= 20_000; waited += 250) {
    last = (await send(`${server.url}/shop/v1.0/account`, { headers })).status;
    if (last === status) return last;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return last;
}

beforeAll(async () => {
  url = await ownDatabase('user_tenant');
  connection = await connectTo(url);
  await connection.query('alter table usr add column ops_org int unsigned null');
  writeTenantProject(ROOT, { name: 'shop', column: 'ops_org' });
  server = await startBuiltServer({ env: { DATABASE_URL: url } });
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await connection?.end();
  rmSync(ROOT, { recursive: true, force: true });
});

describe('xmlrest user add --tenant', () => {
  it('creates the user in the tenant given', async () => {
    const added = await cli('user', 'add', 'tia', '--password', 'tia-pass-long', '--role', 'customer', '--tenant', '7');
    expect(added, added.stderr).toMatchObject({ code: 0, stdout: expect.stringMatching(/^created user tia \(user_id \d+\) with customer in tenant 7\n$/) });
    expect(await tenantOf('tia')).toBe('7');
  });

  it('refuses a tenant not of the type (exit 2) and creates nobody', async () => {
    for (const [tenant, name] of [
      ['07', 'tib'],
      ['-1', 'tic'],
      ['seven', 'tid'],
      ['18446744073709551616', 'tie'],
    ] as const) {
      const refused = await cli('user', 'add', name, '--password', 'long-password', '--tenant', tenant);
      expect(refused).toMatchObject({ code: 2, stderr: expect.stringContaining('a tenant here is a whole number') });
      expect(await tenantOf(name)).toBeUndefined();
    }
    // The widest value of this INT UNSIGNED column is a tenant.
    expect((await cli('user', 'add', 'tif', '--password', 'long-password', '--tenant', '4294967295')).code).toBe(0);
    expect(await tenantOf('tif')).toBe('4294967295');
  });

  it('is refused in a project with no tenant backend', async () => {
    const plain = `${ROOT}-plain`;
    writeTenantProject(plain, { name: 'shop', column: 'ops_org', none: true });
    try {
      const refused = await xmlrestIn(plain, url, ['user', 'add', 'tig', '--password', 'long-password', '--tenant', '1']);
      expect(refused).toMatchObject({ code: 2, stderr: expect.stringContaining('no backend of this project has a tenant') });
      expect(await tenantOf('tig')).toBeUndefined();
    } finally {
      rmSync(plain, { recursive: true, force: true });
    }
  });
});

describe('xmlrest user tenant', () => {
  it('moves the user; a token and an API key issued before stop working, new ones carry on', async () => {
    expect((await cli('user', 'add', 'tom', '--password', 'tom-pass-long', '--role', 'customer', '--tenant', '1')).code).toBe(0);
    const token = await tokenOf('tom', 'tom-pass-long');
    const [[tom]] = (await connection.query("select user_id from usr where user_name = 'tom'")) as unknown as [{ user_id: number }[]];
    const { key } = await new KeyStore(queryableOf(connection)).create({
      backend: 'shop',
      userId: String(tom!.user_id),
      name: 'tom',
      roles: ['customer'],
      expires: null,
      rate: null,
    });
    expect(await accountStatus({ authorization: `Bearer ${token}` }, 200)).toBe(200);
    expect(await accountStatus({ 'x-api-key': key }, 200)).toBe(200);

    const moved = await cli('user', 'tenant', 'tom', '2');
    expect(moved, moved.stderr).toMatchObject({
      code: 0,
      stdout: expect.stringContaining('moved tom to tenant 2; revoked every token of tom on shop issued until now, 1 API key revoked'),
    });
    expect(await tenantOf('tom')).toBe('2');
    expect(await accountStatus({ authorization: `Bearer ${token}` }, 401)).toBe(401);
    expect(await accountStatus({ 'x-api-key': key }, 401)).toBe(401);
    // A token issued after the move (a second later: revoked_before is to the second) is served.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect(await accountStatus({ authorization: `Bearer ${await tokenOf('tom', 'tom-pass-long')}` }, 200)).toBe(200);
    const [history] = await connection.query("select action, target, detail from xmlrest_console_audit where action = 'set tenant' and target = 'tom'");
    expect(history).toEqual([{ action: 'set tenant', target: 'tom', detail: '2, 1 API key revoked' }]);
  });

  it('takes a tenant away with --none, and refuses what is not a tenant, nobody, or neither', async () => {
    expect((await cli('user', 'tenant', 'tia', '--none')).code).toBe(0);
    expect(await tenantOf('tia')).toBeNull();
    expect(await cli('user', 'tenant', 'tia', '1.5')).toMatchObject({ code: 2, stderr: expect.stringContaining('a tenant here is a whole number') });
    expect(await cli('user', 'tenant', 'nobody-here', '3')).toMatchObject({ code: 2, stderr: expect.stringContaining('no such user: nobody-here') });
    expect(await cli('user', 'tenant', 'tia')).toMatchObject({ code: 2, stderr: expect.stringContaining('give the new tenant, or --none') });
    expect(await cli('user', 'tenant', 'tia', '3', '--none')).toMatchObject({ code: 2 });
    expect(await tenantOf('tia')).toBeNull();
  });

  it('says there is nothing to set on a backend whose tenant comes from a TenantQuery', async () => {
    const custom = path.join(ROOT, 'custom');
    writeTenantProject(custom, { name: 'shop', column: 'ops_org', customQuery: 'select org_id as tenant from member where user_id = ?' });
    const refused = await xmlrestIn(custom, url, ['user', 'tenant', 'tom', '3']);
    expect(refused).toMatchObject({ code: 2, stderr: expect.stringContaining("reads its users' tenant with its TenantQuery") });
    expect(await tenantOf('tom')).toBe('2');
  });
});
