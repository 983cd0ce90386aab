import { describe, expect, it } from 'vitest';
import { widestStatement } from '../../generator/analyse/list-spec.js';
import { namedTables, proveTenancy, type TenantFacts } from '../../generator/analyse/tenancy.js';
import type { List } from '../../generator/ir.js';
import { NO_BACKSLASH_ESCAPES_BYPASS, REVIEW_BYPASSES, REVIEW_WRITE_BYPASSES } from '../support/tenant-bypasses.js';

/** orders, items and notes keep every unique key with org_id; contacts has unique(email) alone. */
const facts: TenantFacts = {
  column: 'org_id',
  tables: { orders: { uniqueOk: true }, items: { uniqueOk: true }, notes: { uniqueOk: true }, contacts: { uniqueOk: false } },
  views: ['order_report'],
};

/** `^` marks where the one problem must be reported; it is removed before proving. */
function refused(marked: string, fragment: string): void {
  const text = marked.replace('^', '');
  const problems = proveTenancy(text, facts);
  expect(
    problems.map((p) => p.offset),
    `${marked}\n${JSON.stringify(problems)}`,
  ).toEqual([marked.indexOf('^')]);
  expect(problems[0]!.message, marked).toContain(fragment);
}
const proven = (text: string) => expect(proveTenancy(text, facts), text).toEqual([]);

/** Each bypass of the design study's table (notes/43-design.md §2), then its filtered form. */
const BYPASSES: [string, string, string][] = [
  [
    'select * from ^orders o where o.org_id = $tenant or o.public = 1',
    'the where holds an or',
    'select * from orders o where o.org_id = $tenant and (o.public = 1 or o.x = 2)',
  ],
  ['select * from ^orders o where o.org_id = $tenant || 1', 'an or (||)', 'select * from orders o where o.org_id = $tenant && 1'],
  ['select * from ^orders o where o.org_id = $tenant xor 1', 'an xor', 'select * from orders o where (o.org_id = $tenant and (1))'],
  ['select * from ^orders o where not (o.org_id <> $tenant)', 'a not', 'select * from orders o where o.org_id = $tenant and o.x not in (1)'],
  [
    'select * from ^orders o where o.org_id = $tenant is true',
    'not exactly o.org_id = $tenant',
    'select * from orders o where o.org_id = $tenant and o.x is not null',
  ],
  [
    'select * from ^orders o where o.x between 1 and o.org_id = $tenant',
    'not exactly',
    'select * from orders o where o.x between 1 and 2 and o.org_id = $tenant',
  ],
  [
    'select * from ^orders o where case when o.x then 1 else 0 and o.org_id = $tenant and 1 end',
    'not exactly',
    'select * from orders o where case when o.x then 1 else 0 end and o.org_id = $tenant',
  ],
  [
    'select * from orders o join ^items i on i.oid = o.id where o.org_id = $tenant',
    'only o.org_id is filtered',
    'select * from orders o join items i on i.oid = o.id and i.org_id = $tenant where o.org_id = $tenant',
  ],
  [
    'select * from ^orders a left join items b on b.x = a.x and a.org_id = $tenant and b.org_id = $tenant',
    "a join's on keeps only its own",
    'select * from orders a left join items b on b.x = a.x and b.org_id = $tenant where a.org_id = $tenant',
  ],
  [
    'select * from orders a right join ^items b on b.x = a.x and b.org_id = $tenant where a.org_id = $tenant',
    'the on of a right join',
    'select * from orders a right join items b on b.x = a.x where a.org_id = $tenant and b.org_id = $tenant',
  ],
  [
    'select * from orders a left join ^items b on b.x = a.x where a.org_id = $tenant',
    'only a.org_id',
    'select * from orders a left join items b on b.x = a.x where a.org_id = $tenant and b.org_id = $tenant',
  ],
  [
    'select * from orders a join ^items b using (org_id) where a.org_id = $tenant',
    'only a.org_id',
    'select * from orders a join items b using (org_id) where a.org_id = $tenant and b.org_id = $tenant',
  ],
  [
    'select * from orders a natural join ^items b where a.org_id = $tenant',
    "in its block's where (",
    'select * from orders a natural join items b where a.org_id = $tenant and b.org_id = $tenant',
  ],
  [
    'select * from orders a, ^items b where a.org_id = $tenant',
    'only a.org_id',
    'select * from orders a, items b where a.org_id = $tenant and $tenant = b.org_id',
  ],
  [
    'select o.id, (select count(*) from ^items) n from orders o where o.org_id = $tenant',
    'write items.org_id',
    'select o.id, (select count(*) from items where org_id = $tenant) n from orders o where o.org_id = $tenant',
  ],
  [
    'select * from orders o where o.org_id = $tenant and o.id in (select oid from ^items)',
    'items',
    'select * from orders o where o.org_id = $tenant and o.id in (select oid from items i where i.org_id = $tenant)',
  ],
  [
    'select * from orders o where o.org_id = $tenant and exists (select 1 from ^items i where i.oid = o.id)',
    'items (alias i)',
    'select * from orders o where o.org_id = $tenant and exists (select 1 from items i where i.oid = o.id and i.org_id = $tenant)',
  ],
  [
    'select id from orders where org_id = $tenant union all select id from ^orders',
    'orders',
    'select id from orders where org_id = $tenant union all select id from orders where org_id = $tenant',
  ],
  [
    'select id from orders where org_id = $tenant except select oid from ^items',
    'items',
    'select id from orders where org_id = $tenant except select oid from items where org_id = $tenant',
  ],
  ['select * from (select * from ^orders) d where d.org_id = $tenant', 'orders', 'select * from (select * from orders where org_id = $tenant) d'],
  [
    'with x as (select * from ^orders) select * from x where x.org_id = $tenant',
    'orders',
    'with x as (select * from orders o where o.org_id = $tenant) select * from x',
  ],
  [
    'with orders as (select * from ^orders) select * from orders where org_id = $tenant',
    'orders',
    'with orders as (select * from orders where org_id = $tenant) select * from orders',
  ],
  [
    'select * from orders o where o.org_id = $tenant and o.id in (select oid from ^items i where o.org_id = $tenant)',
    "another block's alias (o)",
    'select * from orders o where o.org_id = $tenant and o.id in (select oid from items i where i.org_id = $tenant)',
  ],
  ['select * from ^orders o where o.org_id = $org', 'compared with $org, not $tenant', 'select * from orders o where o.org_id = $tenant and o.x = $org'],
  ['select * from ^orders o where o.org_id = $[prev][0].org_id', 'compared with $[prev][0].org_id', 'select * from orders o where o.org_id = $tenant'],
  ['select * from ^orders o where o.org_id = 7', 'compared with 7', 'select * from orders o where o.org_id = $tenant'],
  ['select * from ^orders o where o.org_id in ($tenant)', 'not exactly', 'select * from orders o where o.org_id = $tenant'],
  [
    'select * from orders o join ^items i on i.oid = o.id where o.org_id = $tenant and org_id = $tenant',
    'unqualified org_id with several tables',
    'select * from orders o join items i on i.oid = o.id where o.org_id = $tenant and i.org_id = $tenant',
  ],
  ['select * from ^order_report where org_id = $tenant', 'view order_report', 'select * from orders where org_id = $tenant'],
  ['select * from ^information_schema.tables', 'another schema', 'select * from products'],
  ['select * from orders o join ^mysql.user u on 1 = 1 where o.org_id = $tenant', 'another schema', 'select * from orders o where o.org_id = $tenant'],
  ['select * from ^otherdb.orders o where o.org_id = $tenant', 'another schema', 'select * from orders o where o.org_id = $tenant'],
  ['^call p($tenant)', 'cannot read', 'select * from orders o where o.org_id = $tenant'],
  ['select ^@v := count(*) from orders where org_id = $tenant', 'cannot read', 'select count(*) from orders where org_id = $tenant'],
  ['select id from orders where org_id = $tenant ^into @v', 'cannot read', 'select id from orders where org_id = $tenant'],
  ['^prepare s from concat("select * from ", $t)', 'cannot read', 'select * from orders where org_id = $tenant'],
  [
    'select * from orders o where o.org_id = $tenant and ^window or 1',
    'an expression cut at window',
    'select * from orders o where o.org_id = $tenant window w as (order by o.id)',
  ],
  ['select * from orders o where o.org_id = $tenant ^/*! or 1 */', 'cannot read', 'select * from orders o where o.org_id = $tenant /* a comment */'],
  ['insert into ^orders (id, total) values ($id, 1)', 'leaves org_id out', 'insert into orders (id, total, org_id) values ($id, 1, $tenant)'],
  ['insert into ^orders values ($id, 1, $tenant)', 'names no column list', 'insert into orders (id, total, org_id) values ($id, 1, $tenant)'],
  ['insert into orders (id, org_id) values ($id, ^default)', 'other than $tenant', 'insert into orders (id, org_id) values ($id, $tenant)'],
  [
    'insert into orders (id, org_id) values ($id, $tenant), ($id2, ^null)',
    'other than $tenant',
    'insert into orders (id, org_id) values ($id, $tenant), ($id2, $tenant)',
  ],
  ['insert into ^orders set id = $id', 'sets no org_id', 'insert into orders set id = $id, org_id = $tenant'],
  [
    'insert into orders (id, org_id) select id, ^org_id from items where org_id = $tenant',
    'selects something other than $tenant',
    'insert into orders (id, org_id) select id, $tenant from items where org_id = $tenant',
  ],
  [
    'insert into orders (id, org_id) select id, $tenant from ^items',
    'items',
    'insert into orders (id, org_id) select i.id, $tenant as org_id from items i where i.org_id = $tenant',
  ],
  [
    'insert into orders (id, org_id) values ($id, $tenant) on duplicate key update ^org_id = $x',
    'would move a row',
    'insert into orders (id, org_id) values ($id, $tenant) on duplicate key update total = 1, org_id = $tenant',
  ],
  [
    'insert into ^contacts (email, org_id) values ($e, $tenant) on duplicate key update name = $n',
    'unique key without org_id',
    'insert into contacts (email, org_id) values ($e, $tenant)',
  ],
  ['replace into ^contacts (email, org_id) values ($e, $tenant)', 'replace another tenant', 'replace into orders (id, org_id) values ($id, $tenant)'],
  ['update orders o set ^o.org_id = $other where o.org_id = $tenant', 'would move rows', 'update orders o set o.total = $t where o.org_id = $tenant'],
  [
    'update orders o join ^items i on i.oid = o.id set i.x = 1 where o.org_id = $tenant',
    'only o.org_id',
    'update orders o join items i on i.oid = o.id and i.org_id = $tenant set i.x = 1 where o.org_id = $tenant',
  ],
  ['update ^orders set total = 0', 'write orders.org_id', 'update orders set total = 0, org_id = $tenant where org_id = $tenant'],
  [
    'update orders o join items i on i.oid = o.id and i.org_id = $tenant set ^org_id = 1 where o.org_id = $tenant',
    'qualify it',
    'update orders o join items i on i.oid = o.id and i.org_id = $tenant set o.x = 1 where o.org_id = $tenant',
  ],
  [
    'delete o, i from orders o join ^items i on i.oid = o.id where o.org_id = $tenant',
    'only o.org_id',
    'delete o, i from orders o join items i on i.oid = o.id where o.org_id = $tenant and i.org_id = $tenant',
  ],
  ['delete from ^orders where id = $id', 'write orders.org_id', 'delete from orders where id = $id and org_id = $tenant'],
  [
    'delete from o using orders o, ^items i where i.oid = o.id and o.org_id = $tenant',
    'only o.org_id',
    'delete from o using orders o, items i where i.oid = o.id and o.org_id = $tenant and i.org_id = $tenant',
  ],
];

describe('proveTenancy: the bypasses', () => {
  it.each(BYPASSES)('refuses %s (%s), proves its filtered form', (marked, fragment, fixed) => {
    refused(marked, fragment);
    proven(fixed);
  });

  it('proves non-tenant tables, statements without tables, and left joins filtered in the where', () => {
    proven('select p.name from products p join orders o on o.pid = p.id left join items i on i.oid = o.id where o.org_id = $tenant and i.org_id = $tenant');
    proven('select 1 as one');
    proven('insert into products (name) values ($n) on duplicate key update name = $n');
    proven('select `o`.`id` from `orders` `o` where `o`.`ORG_ID` = $tenant for update');
  });

  it('names the table and alias, and says the fix', () => {
    expect(proveTenancy('select * from products p join orders c on c.pid = p.id', facts)[0]!.message).toBe(
      "table orders (alias c) is not kept to the caller's tenant: write c.org_id = $tenant in its block's where or its join's on",
    );
    expect(proveTenancy('select * from orders where id = 1', facts)[0]!.message).toBe(
      "table orders is not kept to the caller's tenant: write orders.org_id = $tenant in its block's where",
    );
  });
});

describe('proveTenancy: the adversarial review', () => {
  it.each(REVIEW_BYPASSES)('refuses %s (%s)', (marked, fragment) => refused(marked, fragment));
  it.each(REVIEW_WRITE_BYPASSES)('refuses the write %s (%s)', (marked, fragment) => refused(marked, fragment));

  it('refuses a backslash in a string, read otherwise under NO_BACKSLASH_ESCAPES', () => refused(...NO_BACKSLASH_ESCAPES_BYPASS));

  it("refuses found_rows() and row_count(): the counts of the pooled connection's previous statement, maybe another tenant's", () => {
    refused('select ^found_rows() n', 'found_rows()');
    refused('select ^ROW_COUNT () n', 'ROW_COUNT()');
    proven('select o.found_rows from orders o where o.org_id = $tenant');
  });

  it('finds an assignment to the tenant column whatever the letter case of its qualifier', () => {
    // Proving a filter, case must match (MariaDB's aliases on Linux); finding a move, any case could be meant.
    refused('update orders O set ^o.org_id = 2 where O.org_id = $tenant', 'would move rows');
  });

  it('proves what the review did not mean to refuse: reserved words after a dot, an exactly spelt alias, numbers', () => {
    proven('select o.id from orders o where o.org_id = $tenant and o.total = 1.5 and o.x = 1e3 and o.y = 0x1f and o.z = .5');
    proven('select o.id, (select count(*) from items O where O.org_id = $tenant) n from orders o where o.org_id = $tenant');
    proven('select o.id from orders o where o.org_id = $tenant and o.`end` = 1 and case when o.x then 1 else 0 end = 1');
    proven('select o.id from orders o where o.org_id = $tenant -- a comment\n and o.x = 1 # another\n');
  });

  it("asks facts of a list filter's tables: its widest statement, ? and all, is read", () => {
    // The facts (which tables have org_id) are asked of namedTables(widestStatement(list)), with `?` where values go;
    // read as unread, the filter's `notes` got no facts and its unfiltered read was proven as a table without org_id.
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
    expect(namedTables(widestStatement(list))).toEqual(['orders', 'notes']);
  });
});

describe('proveTenancy: fuzz', () => {
  /** Every filtered form of the table above: each `x.org_id = $tenant` in it is needed for its proof. */
  const corpus = BYPASSES.map(([, , fixed]) => fixed);
  const FILTER = /(?:`?\w+`?\.)?`?org_id`? = \$tenant|\$tenant = (?:\w+\.)?org_id/gi;

  it('never proves a statement whose one filter is removed, put under or or not, or compared with another value', () => {
    let mutants = 0;
    for (const text of corpus) {
      for (const match of text.matchAll(FILTER)) {
        const at = match.index;
        const filter = match[0];
        for (const replacement of [
          '1 = 1',
          `${filter} or 1 = 1`,
          `(${filter} or 1)`,
          `1 = 1 || ${filter}`,
          `not ${filter}`,
          filter.replace('$tenant', '$org'),
          `${filter} xor 0`,
        ]) {
          const mutant = text.slice(0, at) + replacement + text.slice(at + filter.length);
          mutants++;
          expect(proveTenancy(mutant, facts), `${mutant}`).not.toEqual([]);
        }
      }
    }
    expect(mutants).toBeGreaterThan(300);
  });

  it('never throws on random mutations of proven statements, nor proves one left without $tenant', () => {
    const words = [
      'or',
      'and',
      'not',
      '(',
      ')',
      ',',
      'select',
      'from',
      'join',
      'union',
      '$tenant',
      '$x',
      '||',
      '@',
      'where',
      'on',
      'x',
      'between',
      'case',
      'end',
      '1',
    ];
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    for (let k = 0; k < 4000; k++) {
      const parts = corpus[random(corpus.length)]!.split(' ');
      const at = random(parts.length);
      const kind = random(3);
      if (kind === 0) parts.splice(at, 1);
      else if (kind === 1) parts.splice(at, 0, words[random(words.length)]!);
      else parts.splice(at, 1, words[random(words.length)]!);
      const mutant = parts.join(' ');
      const problems = proveTenancy(mutant, facts);
      const named = namedTables(mutant);
      // An independent floor: a statement naming a tenant table is never proven without a $tenant left in it.
      const tenantNamed = Array.isArray(named) && named.some((table) => Object.hasOwn(facts.tables, table));
      if (tenantNamed && !mutant.includes('$tenant')) expect(problems, mutant).not.toEqual([]);
    }
  });

  it('refuses, never crashes on, statements nested deeper than the stack', () => {
    const deep = `select * from orders where org_id = $tenant and x in ${'(select 1 from t where x in '.repeat(20000)}(1)${')'.repeat(20000)}`;
    expect(proveTenancy(deep, facts)[0]!.message).toContain('cannot read');
  });
});

describe('namedTables', () => {
  it('lists base tables in lower case, CTE names and schema-qualified names left out, or says unread', () => {
    expect(namedTables('with x as (select * from Orders) select * from x join items using (a) join other.t on 1 where exists (select 1 from notes)')).toEqual([
      'orders',
      'items',
      'notes',
    ]);
    expect(namedTables('insert into contacts (a) select a from products')).toEqual(['contacts', 'products']);
    expect(namedTables('call p()')).toEqual({ unread: 'a statement beginning with call' });
  });
});
