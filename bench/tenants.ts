import type mysql from 'mysql2/promise';
import { type ServerName, TENANT_BASIC_SCENARIO, TENANT_GET_SCENARIO, TENANT_WRITE_SCENARIO } from './report.js';

/**
 * Tenants in the bench (issue 43's Speed): the same statements with the caller's organisation from its tenant
 * (`$tenant`, bench/resources/ten and tenb) and written in by hand, sent by the client (`$org`, bench/resources/org
 * and seedb), on the same generated server, in the same slices.
 */

/** Organisations the bench users are spread over: usr.org_id = 1 + user_id % ORGS. */
const ORGS = 100;

/**
 * usr.org_id (as the demo's database adds it) and each bench user's organisation; bench_org_items, a copy of
 * bench_items with each row's owner's organisation. Idempotent: CI's smoke run may meet a database seeded before.
 */
export async function seedTenants(connection: mysql.Connection): Promise<void> {
  await connection.query('alter table usr add column if not exists org_id int unsigned null');
  await connection.query("update usr set org_id = 1 + user_id % ? where user_name like 'bench-%' and org_id is null", [ORGS]);
  await connection.query(`create table if not exists bench_org_items (
    item_id int unsigned not null auto_increment primary key,
    org_id int unsigned not null,
    user_id int unsigned not null,
    title varchar(100) not null,
    price decimal(10, 2) not null,
    created_on timestamp not null default current_timestamp,
    key bench_org_items_org (org_id)
  ) engine = InnoDB default charset = utf8mb4`);
  const [rows] = await connection.query('select count(*) as n from bench_org_items');
  if (Number((rows as { n: string }[])[0]!.n) > 0) return;
  await connection.query(
    'insert into bench_org_items (org_id, user_id, title, price) select u.org_id, i.user_id, i.title, i.price from bench_items i join usr u on u.user_id = i.user_id where u.org_id is not null order by i.item_id',
  );
  await connection.query('analyze table bench_org_items');
}

/** What the tenant scenarios send, filled in once the servers answer: bench-1's organisation and its tokens. */
export const tenantCallers = { org: 0, tenantToken: '', orgToken: '' };

/** bench-1's organisation, and its token from each Bearer backend (token shape A: the tenant backend's carries `ten`). */
export async function prepareTenantCallers(connection: mysql.Connection, token: (path: string) => Promise<string>): Promise<void> {
  const [rows] = await connection.query("select org_id from usr where user_name = 'bench-1'");
  tenantCallers.org = Number((rows as { org_id: number }[])[0]!.org_id);
  tenantCallers.tenantToken = await token('/ten/');
  tenantCallers.orgToken = await token('/org/');
}

/** The servers' names of the tenant scenarios, each the generated server. */
export const TENANT_SERVERS = ['org-param', 'tenant', 'org-basic', 'tenant-basic'] as const satisfies readonly ServerName[];

const form = { 'content-type': 'application/x-www-form-urlencoded' };
const basic = { authorization: `Basic ${Buffer.from('bench-1:pass-1').toString('base64')}` };

/** Rows of bench-1's organisation only, at least one: what every tenant GET must answer. */
const ownRows = (status: number, body: any) =>
  status === 200 && Array.isArray(body.items) && body.items.length > 0 && body.items.every((row: { org_id: unknown }) => row.org_id === tenantCallers.org);

/**
 * The scenarios, each server first the one with the organisation by hand: the ratios read "tenant / by hand". Each
 * counts CPU a request too (the server's and MariaDB's): on the shared 2-core VM req/s ratios of these two moved
 * by 0.7-1.3 from round to round, more than the 2% asked.
 */
export const tenantScenarios = [
  {
    name: TENANT_GET_SCENARIO,
    servers: ['org-param', 'tenant'] as ServerName[],
    cpu: true,
    request: (server: ServerName) =>
      server === 'tenant'
        ? { method: 'GET' as const, path: '/ten/v1.0/org-items', headers: { authorization: `Bearer ${tenantCallers.tenantToken}` } }
        : { method: 'GET' as const, path: `/org/v1.0/org-items?org=${tenantCallers.org}`, headers: { authorization: `Bearer ${tenantCallers.orgToken}` } },
    check: ownRows,
  },
  {
    name: TENANT_WRITE_SCENARIO,
    servers: ['org-param', 'tenant'] as ServerName[],
    cpu: true,
    request: (server: ServerName) =>
      server === 'tenant'
        ? {
            method: 'POST' as const,
            path: '/ten/v1.0/org-items',
            headers: { ...form, authorization: `Bearer ${tenantCallers.tenantToken}` },
            body: 'title=bench&price=9.99',
          }
        : {
            method: 'POST' as const,
            path: '/org/v1.0/org-items',
            headers: { ...form, authorization: `Bearer ${tenantCallers.orgToken}` },
            body: `org=${tenantCallers.org}&title=bench&price=9.99`,
          },
    check: (status: number, body: any) =>
      status === 201 && body.added?.affectedRows === 1 && body.item?.[0]?.title === 'bench' && body.item[0].org_id === tenantCallers.org,
  },
  {
    name: TENANT_BASIC_SCENARIO,
    servers: ['org-basic', 'tenant-basic'] as ServerName[],
    cpu: true,
    request: (server: ServerName) => ({
      method: 'GET' as const,
      path: server === 'tenant-basic' ? '/tenb/v1.0/org-items' : `/seedb/v1.0/org-items?org=${tenantCallers.org}`,
      headers: basic,
    }),
    check: ownRows,
  },
];
