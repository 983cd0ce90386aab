import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Backend } from '../../generator/ir.js';
import { freshTenants, giveTenant } from '../../scripts/cli/verify-access/tenants.js';
import { connectTo } from '../../scripts/connection.js';
import { addUser } from '../../scripts/schema.js';
import { ownDatabase } from '../support/own-database.js';

/**
 * verify-access's temporary tenants on a real database (issue 43 point 4): two tenants no row names yet, past the
 * greatest of every tenant table's column and usr's, given to its users; a usr column that refers to a table of
 * tenants refuses them, and the run is told why rather than failing. (The run over HTTP against a tenant backend
 * waits for the generator to read `<Tenant>` and the runtime to serve `$tenant`.)
 */
let url: string;
let connection: mysql.Connection;

const backend = (type: 'integer' | 'text') => ({ tenant: { column: 'va_org', type, userQuery: null }, defaultTables: true }) as unknown as Backend;

beforeAll(async () => {
  url = await ownDatabase('verify_access_tenants');
  connection = await connectTo(url);
  await connection.query('alter table usr add column va_org int unsigned null, add column va_fk int unsigned null');
  await connection.query('create table va_doc (id int unsigned auto_increment primary key, va_org int unsigned not null)');
  await connection.query('create table va_note (id int unsigned auto_increment primary key, va_org int unsigned not null)');
  await connection.query('insert into va_doc (va_org) values (3), (40)');
  await connection.query('insert into va_note (va_org) values (41)');
  await connection.query("update usr set va_org = 12 where user_name = 'alice'");
  await connection.query('create table va_tenant (va_org int unsigned primary key)');
  await connection.query('alter table usr add constraint va_fk_tenant foreign key (va_fk) references va_tenant (va_org)');
}, 120_000);

afterAll(async () => {
  await connection?.end();
});

describe('verify-access’s temporary tenants', () => {
  it('are past every tenant any table names, and are given to its users', async () => {
    expect(await freshTenants(connection, backend('integer'), 'va_org', 'abc123')).toEqual({ own: '42', other: '43' });
    expect(await freshTenants(connection, backend('text'), 'va_org', 'abc123')).toEqual({ own: 'xmlrest-verify-abc123-a', other: 'xmlrest-verify-abc123-b' });
    const id = await addUser(connection, 'xmlrest-verify-abc123-1', 'a-long-password', []);
    expect(await giveTenant(connection, 'va_org', [{ id, name: 'xmlrest-verify-abc123-1', password: '', role: '' }], '42')).toBeUndefined();
    const [rows] = await connection.query('select va_org from usr where user_id = ?', [id]);
    expect(rows).toEqual([{ va_org: 42 }]);
  });

  it('are refused by a column that refers to a table of tenants: the run is told why', async () => {
    const id = await addUser(connection, 'xmlrest-verify-abc123-2', 'a-long-password', []);
    const why = await giveTenant(connection, 'va_fk', [{ id, name: 'xmlrest-verify-abc123-2', password: '', role: '' }], '42');
    expect(why).toMatch(/cannot give its temporary users a tenant of their own in usr\.va_fk: it refers to a table of tenants/);
  });
});
