import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { widestStatement } from '../../generator/analyse/list-spec.js';
import { namedTables, proveTenancy, type TenantFacts } from '../../generator/analyse/tenancy.js';
import type { List } from '../../generator/ir.js';
import { connectTo } from '../../scripts/connection.js';
import { ownDatabase } from '../support/own-database.js';
import { NO_BACKSLASH_ESCAPES_BYPASS, REVIEW_BYPASSES, REVIEW_WRITE_BYPASSES } from '../support/tenant-bypasses.js';

/**
 * The adversarial review of the tenant proof (issue 43): each statement the proof once proved is run raw on MariaDB,
 * `$tenant` bound to tenant 1, and tenant 2's rows, or their count, come back: the holes were real. The proof now
 * refuses each. Tables of this file's own (bp_ before the names the cases use), in a database of its own.
 */
let connection: mysql.Connection;
const TABLES = ['orders', 'items', 'notes'];
const named = (text: string) => text.replace(/\b(orders|items|notes)\b/g, 'bp_$1');
const facts: TenantFacts = { column: 'org_id', tables: Object.fromEntries(TABLES.map((table) => [`bp_${table}`, { uniqueOk: true }])), views: [] };

beforeAll(async () => {
  connection = await connectTo(await ownDatabase('tenant_bypass_real'));
  for (const table of TABLES) await connection.query(`drop table if exists bp_${table}`);
  await connection.query('create table bp_orders (id int primary key, org_id int not null, total int not null)');
  await connection.query('create table bp_items (id int primary key, org_id int not null, oid int not null)');
  await connection.query('create table bp_notes (id int primary key, org_id int not null, body varchar(40) not null)');
  await connection.query('insert into bp_orders values (1, 1, 10), (2, 2, 20)');
  await connection.query('insert into bp_items values (1, 1, 1), (2, 2, 2)');
  await connection.query("insert into bp_notes values (1, 1, 'ours'), (2, 2, 'theirs')");
});

afterAll(async () => {
  await connection?.end();
});

/** The statement as the runtime prepares it: every placeholder a `?`, each bound to tenant 1. */
async function asTenantOne(text: string): Promise<Record<string, unknown>[]> {
  const sql = named(text).replace(/\$tenant\b/g, '?');
  const [rows] = await connection.execute(
    sql,
    sql
      .split('?')
      .slice(1)
      .map(() => 1),
  );
  return rows as Record<string, unknown>[];
}

describe('the review’s bypasses, run on MariaDB', () => {
  it.each(REVIEW_BYPASSES)("%s returns tenant 2's rows or their count to tenant 1, and is refused", async (marked) => {
    const text = marked.replace('^', '');
    const rows = await asTenantOne(text);
    expect(
      rows.some((row) => row.id === 2 || Number(row.n) === 2),
      JSON.stringify(rows),
    ).toBe(true);
    expect(proveTenancy(named(text), facts)).not.toEqual([]);
  });

  it.each(REVIEW_WRITE_BYPASSES)('%s writes a row of tenant 2 for tenant 1, and is refused', async (marked) => {
    const text = marked.replace('^', '');
    await connection.beginTransaction();
    try {
      await asTenantOne(text);
      const [rows] = await connection.query('select count(*) n from bp_orders where org_id = 2 and id >= 5');
      expect(Number((rows as { n: number }[])[0]!.n)).toBeGreaterThan(0);
    } finally {
      await connection.rollback();
    }
    expect(proveTenancy(named(text), facts)).not.toEqual([]);
  });

  it("a backslash in a string returns tenant 2's rows where the server's sql_mode has NO_BACKSLASH_ESCAPES, and is refused", async () => {
    const text = NO_BACKSLASH_ESCAPES_BYPASS[0].replace('^', '');
    expect(await asTenantOne(text)).toEqual([]);
    const [[mode]] = (await connection.query('select @@session.sql_mode m')) as unknown as [{ m: string }[]];
    await connection.query("set session sql_mode = concat(@@session.sql_mode, ',NO_BACKSLASH_ESCAPES')");
    try {
      // A statement prepared afresh: mysql2 keeps each prepared one by its text.
      connection.unprepare(named(text).replace(/\$tenant\b/g, '?'));
      expect((await asTenantOne(text)).map((row) => row.id)).toContain(2);
    } finally {
      await connection.query('set session sql_mode = ?', [mode!.m]);
    }
    expect(proveTenancy(named(text), facts)).not.toEqual([]);
  });

  it("found_rows() tells tenant 1 the count of tenant 2's statement run before on the connection, and is refused", async () => {
    await connection.execute('select id from bp_orders where org_id = ? or id = 1', [2]);
    expect(Number((await asTenantOne('select found_rows() n'))[0]!.n)).toBe(2);
    expect(proveTenancy('select found_rows() n', facts)).not.toEqual([]);
  });

  it("a list filter reading another table tells tenant 1 whether tenant 2 has a note; its table's facts are now asked", async () => {
    const at = { file: 'x.xml', line: 1, col: 1 };
    const list: List = {
      head: 'select o.id from orders o where o.org_id = ?',
      where: true,
      tail: '',
      filters: [{ param: 'noted', sql: 'exists (select 1 from notes n where n.body = ?)', uses: 1, at }],
      sort: null,
      page: null,
      equalities: [],
    };
    const widest = named(widestStatement(list));
    const run = async (body: string) => (await connection.execute(widest, [1, body]))[0] as unknown[];
    // An existence oracle on tenant 2's notes: rows when they hold the body, none when not.
    expect(await run('theirs')).toHaveLength(1);
    expect(await run('nobody wrote this')).toHaveLength(0);
    // The facts are asked of the tables the widest statement names: once unread (its `?`), now orders and notes.
    expect(namedTables(widest)).toEqual(['bp_orders', 'bp_notes']);
    const proven = named('select o.id from orders o where o.org_id = $tenant\n  and exists (select 1 from notes n where n.body = $list_value)');
    expect(proveTenancy(proven, facts)[0]?.message).toContain('table bp_notes (alias n) is not kept');
  });
});
