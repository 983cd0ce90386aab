import { readFileSync } from 'node:fs';
import path from 'node:path';
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTo } from '../../scripts/connection.js';
import { addUser, createDefaultTables } from '../../scripts/schema.js';
import { type BuiltServer, startBuiltServer } from '../support/built-server.js';
import { basicHeader, formBody, send } from '../support/http.js';
import { ownDatabase } from '../support/own-database.js';
import { copyBuiltProject } from '../support/project-copy.js';

/**
 * A console operator of one backend rules that backend only (docs/internals/contract.md §6), at the door, over HTTP
 * against the built server. The demo's two backends share the default user tables: shop's console role is
 * admin (its backend.xml), staff's the default, xmlrest-operator. Neither console may hand out the other's
 * console role or a role only the other checks, nor touch a user who operates the other.
 */
const ROOT = path.resolve('test/.tmp/console-scope');
let server: BuiltServer;
let connection: mysql.Connection;
const ids = new Map<string, number>();

beforeAll(async () => {
  copyBuiltProject(ROOT);
  const databaseUrl = await ownDatabase('scope');
  connection = await connectTo(databaseUrl);
  for (const [name, roles] of [
    ['shop-op', ['admin']],
    ['staff-op', ['xmlrest-operator']],
    ['plain', ['guest']],
    ['clerk', ['staff']],
  ] as const) {
    ids.set(name, await addUser(connection, name, `${name}-pass-1`, roles));
  }
  server = await startBuiltServer({ root: ROOT, env: { DATABASE_URL: databaseUrl } });
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await connection?.end();
});

async function shopOperator(): Promise<string> {
  const response = await send(`${server.url}/shop/`, { method: 'POST', ...formBody({ auth: 'bearer', userid: 'shop-op', password: 'shop-op-pass-1' }) });
  expect(response.status).toBe(200);
  return `Bearer ${(response.json() as { token: string }).token}`;
}
const staffOperator = () => basicHeader('staff-op', 'staff-op-pass-1');

async function call(authorization: string, method: string, route: string, body?: unknown) {
  const headers: Record<string, string> = { authorization, 'x-xmlrest-console': '1' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await send(`${server.url}/_console/api/b/${route}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  return { status: response.status, body: response.json() as { message?: string } & Record<string, unknown> };
}
const rolesOf = async (name: string) => {
  const [rows] = await connection.query('select role_name from usr_role where user_id = ? order by role_name', [ids.get(name)]);
  return (rows as { role_name: string }[]).map((row) => row.role_name);
};

describe("a backend's console changes only the roles its backend uses", () => {
  it("does not grant another backend's console role, to anyone", async () => {
    const shop = await shopOperator();
    const refused = await call(shop, 'PUT', `shop/users/${ids.get('plain')}/roles/xmlrest-operator`);
    expect(refused).toEqual({
      status: 403,
      body: {
        status: 403,
        message:
          'The role xmlrest-operator opens the console of backend crm, backend desk and backend staff: the console of shop does not grant, revoke or delete it',
      },
    });
    expect((await call(shop, 'PUT', `shop/users/${ids.get('shop-op')}/roles/xmlrest-operator`)).status).toBe(403);
    expect(await rolesOf('plain')).toEqual(['guest']);
    expect(await rolesOf('shop-op')).toEqual(['admin']);
    // The other way round: staff's resources name admin too (board), but it opens shop's console.
    const back = await call(staffOperator(), 'PUT', `staff/users/${ids.get('plain')}/roles/admin`);
    expect(back.status).toBe(403);
    expect(back.body.message).toBe('The role admin opens the console of backend shop: the console of staff does not grant, revoke or delete it');
    expect(await rolesOf('plain')).toEqual(['guest']);
  });

  it('does not grant a role only another backend uses, nor one no backend uses', async () => {
    const shop = await shopOperator();
    const staffRole = await call(shop, 'PUT', `shop/users/${ids.get('plain')}/roles/staff`);
    expect(staffRole.status).toBe(403);
    expect(staffRole.body.message).toBe('The role staff belongs to backend staff, and shop does not use it: manage it on the console of backend staff');
    const customer = await call(staffOperator(), 'PUT', `staff/users/${ids.get('plain')}/roles/customer`);
    expect(customer.status).toBe(403);
    // The demo's desk backend names customer too (its tickets).
    expect(customer.body.message).toContain('The role customer belongs to backend desk and backend shop');
    const unused = await call(shop, 'PUT', `shop/users/${ids.get('plain')}/roles/nobody-uses-this`);
    expect(unused.status).toBe(403);
    expect(unused.body.message).toContain('shop does not use the role nobody-uses-this');
    expect(await rolesOf('plain')).toEqual(['guest']);
  });

  it('grants the roles its resources name, its console role and the roles created on its console', async () => {
    const shop = await shopOperator();
    expect((await call(shop, 'PUT', `shop/users/${ids.get('plain')}/roles/customer`)).status).toBe(200);
    expect((await call(shop, 'POST', 'shop/roles', { name: 'shop-auditor' })).status).toBe(201);
    expect((await call(shop, 'PUT', `shop/users/${ids.get('plain')}/roles/shop-auditor`)).status).toBe(200);
    expect(await rolesOf('plain')).toEqual(['customer', 'guest', 'shop-auditor']);
    // A role created on shop's console is shop's: staff's console neither grants nor deletes it.
    expect((await call(staffOperator(), 'DELETE', `staff/users/${ids.get('plain')}/roles/shop-auditor`)).status).toBe(403);
    expect((await call(staffOperator(), 'DELETE', 'staff/roles/shop-auditor')).status).toBe(403);
    expect((await call(staffOperator(), 'PUT', `staff/users/${ids.get('plain')}/roles/staff`)).status).toBe(200);
    expect(await rolesOf('plain')).toEqual(['customer', 'guest', 'shop-auditor', 'staff']);
    // The Roles page offers only what it may grant, and never another backend's role alone.
    const listed = (await call(shop, 'GET', 'shop/roles')).body.roles as { name: string; grantable: boolean }[];
    expect(listed.map((role) => role.name)).not.toContain('staff');
    expect(listed.map((role) => role.name)).not.toContain('xmlrest-operator');
    expect(listed.find((role) => role.name === 'shop-auditor')?.grantable).toBe(true);
    expect(listed.find((role) => role.name === 'guest')?.grantable).toBe(false);
  });

  it('does not create a role another backend uses, nor revoke or delete one, nor name one on a resource', async () => {
    const shop = await shopOperator();
    // xmlrest-operator is also the console role of the demo's desk backend (it names none of its own).
    for (const [name, owners] of [
      ['staff', 'backend staff'],
      ['xmlrest-operator', 'backend crm, backend desk and backend staff'],
    ]) {
      const created = await call(shop, 'POST', 'shop/roles', { name });
      expect(created.status, name).toBe(403);
      expect(created.body.message).toBe(`The role ${name} belongs to ${owners}: the console of shop creates roles of its own only`);
    }
    expect((await call(staffOperator(), 'POST', 'staff/roles', { name: 'shop-auditor' })).status).toBe(403);
    expect((await call(shop, 'DELETE', `shop/users/${ids.get('clerk')}/roles/staff`)).status).toBe(403);
    expect((await call(shop, 'DELETE', 'shop/roles/staff')).status).toBe(403);
    expect((await call(shop, 'DELETE', 'shop/roles/xmlrest-operator')).status).toBe(403);
    expect(await rolesOf('clerk')).toEqual(['staff']);
    expect(await rolesOf('staff-op')).toEqual(['xmlrest-operator']);
    expect((await send(`${server.url}/staff/v1.0/me`, { headers: { authorization: basicHeader('clerk', 'clerk-pass-1') } })).status).toBe(200);

    // Naming staff's role on a shop resource would make it shop's to grant: refused before the file is touched.
    const file = path.join(ROOT, 'resources/shop/products.xml');
    const before = readFileSync(file, 'utf8');
    const resources = (await call(shop, 'GET', 'shop/resources')).body.resources as { name: string; version: string; etag: string }[];
    const etag = resources.find((resource) => resource.name === 'products' && resource.version === '1.0')!.etag;
    for (const auth of ['staff', 'xmlrest-operator', 'customer staff']) {
      const named = await call(shop, 'PUT', 'shop/resources/products/1.0/auth', { auth, etag });
      expect(named.status, auth).toBe(403);
      expect(named.body.message).toMatch(
        /belongs to backend (crm, backend desk and backend |desk and backend )?staff: naming it on a resource of shop here would let this console grant it/,
      );
    }
    expect(readFileSync(file, 'utf8')).toBe(before);
  });
});

describe("a backend's console never touches a user who operates another backend", () => {
  it('refuses to grant, revoke, disable, reset the password of or remove them, saying why', async () => {
    const shop = await shopOperator();
    const staffOp = ids.get('staff-op');
    const why =
      'staff-op holds xmlrest-operator, the console role of backend crm, backend desk and backend staff: the console of shop does not change a user who operates another backend';
    for (const [method, route, body] of [
      ['PUT', `shop/users/${staffOp}/roles/customer`],
      ['DELETE', `shop/users/${staffOp}/roles/xmlrest-operator`],
      ['POST', `shop/users/${staffOp}/disable`],
      ['POST', `shop/users/${staffOp}/enable`],
      ['PUT', `shop/users/${staffOp}/password`, { password: 'taken-over-1' }],
      ['DELETE', `shop/users/${staffOp}`],
    ] as const) {
      expect(await call(shop, method, route, body), `${method} ${route}`).toEqual({ status: 403, body: { status: 403, message: why } });
    }
    expect(await rolesOf('staff-op')).toEqual(['xmlrest-operator']);
    // Still there, still signing in, still operating staff.
    expect((await call(staffOperator(), 'GET', 'staff/me')).status).toBe(200);

    // And staff's operators do not touch shop's.
    const back = await call(staffOperator(), 'POST', `staff/users/${ids.get('shop-op')}/disable`);
    expect(back.status).toBe(403);
    expect(back.body.message).toBe(
      'shop-op holds admin, the console role of backend shop: the console of staff does not change a user who operates another backend',
    );
    expect((await call(shop, 'GET', 'shop/me')).status).toBe(200);
  });

  it('still manages the users who operate no other backend', async () => {
    ids.set('shopper', await addUser(connection, 'shopper', 'shopper-pass-1', ['customer']));
    const shop = await shopOperator();
    const shopper = ids.get('shopper');
    expect((await call(shop, 'POST', `shop/users/${shopper}/disable`)).status).toBe(200);
    expect((await call(shop, 'POST', `shop/users/${shopper}/enable`)).status).toBe(200);
    expect((await call(shop, 'PUT', `shop/users/${shopper}/password`, { password: 'shopper-pass-2' })).status).toBe(200);
    // shop's own console role too: its operators make operators.
    expect((await call(shop, 'PUT', `shop/users/${shopper}/roles/admin`)).status).toBe(200);
    expect(await rolesOf('shopper')).toEqual(['admin', 'customer']);
  });
});

describe('the catalog of roles created on a console', () => {
  it('xmlrest db init gives an older catalog its backend column; its roles belong to no backend until a console creates them again', async () => {
    await connection.query('alter table xmlrest_role drop column backend');
    await connection.query("insert into xmlrest_role (role_name) values ('legacy-role')");
    await createDefaultTables(connection);
    const [rows] = await connection.query("select backend from xmlrest_role where role_name = 'legacy-role'");
    expect(rows).toEqual([{ backend: '' }]);
    const shop = await shopOperator();
    expect((await call(shop, 'PUT', `shop/users/${ids.get('plain')}/roles/legacy-role`)).status).toBe(403);
    expect((await call(shop, 'POST', 'shop/roles', { name: 'legacy-role' })).status).toBe(201);
    expect((await call(shop, 'PUT', `shop/users/${ids.get('plain')}/roles/legacy-role`)).status).toBe(200);
    expect((await call(staffOperator(), 'POST', 'staff/roles', { name: 'legacy-role' })).status).toBe(403);
  });
});
