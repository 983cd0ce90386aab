import { describe, expect, it } from 'vitest';
import { topLevelTables, uidColumns } from '../../generator/analyse/ownership.js';
import type { Bind } from '../../generator/ir.js';
import { scanSql } from '../../generator/sql/index.js';
import { columnsNamed, sourceColumn, tablesOf } from '../../generator/sql/tables.js';

describe('scanSql', () => {
  it('replaces parameters, $uid and step references by ? in order', () => {
    const scanned = scanSql('select a from t where u = $uid and b = $b and c = $[auth][0].sub and d = $b');
    expect(scanned.sql).toBe('select a from t where u = ? and b = ? and c = ? and d = ?');
    expect(scanned.placeholders).toEqual([
      { kind: 'uid' },
      { kind: 'param', name: 'b' },
      { kind: 'ref', step: 'auth', row: 0, column: 'sub' },
      { kind: 'param', name: 'b' },
    ]);
    expect(scanned.problems).toEqual([]);
  });

  it('leaves $ alone inside strings, backtick identifiers, comments and identifiers', () => {
    const sql = 'select \'it\'\'s $a\' as a, "say \\"$b\\"" as b, `col$c`, price$ from t$x # $d\n-- $e\n/* $f */ where x = $g';
    const scanned = scanSql(sql);
    expect(scanned.placeholders).toEqual([{ kind: 'param', name: 'g' }]);
    expect(scanned.problems).toEqual([]);
  });

  it('reports ?, several statements, stray $, executable comments and unterminated text', () => {
    const messages = (sql: string) => scanSql(sql).problems.map((problem) => problem.message);
    expect(messages('select a as a from t where b = ?')).toEqual(["use $name parameters, not '?'"]);
    expect(messages('delete from t; delete from u')).toEqual(['one statement per Sql step: split it into several steps']);
    expect(messages('select $ as a')).toEqual(["'$' must be followed by a parameter name"]);
    for (const sql of ['select /*! 1 */ 2 as a', 'select a /*M!, ? */ from t', 'select /*+ hint */ 1 as a']) {
      expect(messages(sql), sql).toContain('executable comments (/*! ... */, /*M! ... */ and hints) are not supported');
    }
    expect(messages("select 'open as a")).toContain('unterminated string');
    expect(messages('select $[a][x].b as c')).toContain('malformed step reference: write $[step][row].column');
  });

  it('accepts one trailing semicolon', () => {
    expect(scanSql('select 1 as a;').problems).toEqual([]);
    expect(scanSql('select 1 as a;').sql).toBe('select 1 as a');
  });

  it('tells reads from writes', () => {
    expect(scanSql('select 1 as a').statement).toBe('read');
    expect(scanSql('(select 1 as a)').statement).toBe('read');
    expect(scanSql('with x as (select 1 as a) select a from x').statement).toBe('read');
    for (const sql of ['insert into t values (1)', 'update t set a = 1', 'delete from t', 'replace into t values (1)', 'call p()']) {
      expect(scanSql(sql).statement, sql).toBe('write');
    }
  });

  it('names result columns from aliases, implicit aliases and column references', () => {
    expect(scanSql('select distinct a, t.b, c as d, count(*) n, `e f`, sum(x) as `g`, (select 1) as h from t').columns).toEqual([
      'a',
      'b',
      'd',
      'n',
      'e f',
      'g',
      'h',
    ]);
    expect(scanSql('select * from t').columns).toBeNull();
    expect(scanSql('select t.* from t').columns).toBeNull();
    expect(scanSql('select a from t union select b from u').columns).toEqual(['a']);
    expect(scanSql('select a + 1 from t').problems[0]?.message).toBe('result column "a + 1" has no name: give the column an alias');
    expect(scanSql('select x is null from t').problems).toHaveLength(1);
  });

  it('keeps the statement readable: indentation removed, line structure kept', () => {
    expect(scanSql('\n      select a\n      from t\n        where b = $b\n    ').sql).toBe('select a\nfrom t\n  where b = ?');
  });
});

describe('tables a statement reads, and where an auth query takes its user id (the lint for unowned reads)', () => {
  it('follows from and join, comma lists, subqueries and aliases, but not a function’s from', () => {
    expect(tablesOf('select o.a, p.b from orders o inner join products as p on p.id = o.pid, `notes` n where x in (select y from reviews)')).toEqual([
      { table: 'orders', aliases: ['o'] },
      { table: 'products', aliases: ['p'] },
      { table: 'notes', aliases: ['n'] },
      { table: 'reviews', aliases: [] },
    ]);
    expect(tablesOf("select extract(year from created_on) as y, trim(both 'x' from name) as n from shop.orders where a = ?")).toEqual([
      { table: 'orders', aliases: [] },
    ]);
  });

  it('names the columns of a name the text shows, by table', () => {
    expect([...columnsNamed('select o.user_id, p.name from orders o join products p on p.id = o.pid', ['user_id'])]).toEqual([['orders', ['user_id']]]);
    expect([...columnsNamed('select name from notes where USER_ID = ?', ['user_id'])]).toEqual([['notes', ['USER_ID']]]);
    expect([...columnsNamed('select count(user_id) as n from a, b', ['user_id'])]).toEqual([]);
  });

  it('finds the table and column an AuthQuery takes its user id from, through a cast', () => {
    expect(sourceColumn('select cast(u.user_id as char) as sub, r.role_name as aud from usr u inner join usr_role r on r.user_id = u.user_id', 'sub')).toEqual({
      table: 'usr',
      column: 'user_id',
    });
    expect(sourceColumn('select m.member_id as user_id, m.team as role_name from members m where m.login = ?', 'user_id')).toEqual({
      table: 'members',
      column: 'member_id',
    });
    expect(sourceColumn('select account_id as user_id, role as role_name from accounts where login = ?', 'user_id')).toEqual({
      table: 'accounts',
      column: 'account_id',
    });
    expect(sourceColumn('select 1 as sub from a, b', 'sub')).toBeUndefined();
  });
});

describe('the columns $uid meets (the unowned-read lint)', () => {
  const uid = { kind: 'uid' } as const;
  const id = { kind: 'param', name: 'id' } as const;
  const meets = (sql: string, binds: Bind[]) => {
    const columns = uidColumns({ sql, binds });
    return columns === null ? null : [...columns].sort();
  };

  it('only as a whole AND term of a where or an on: never under or, not, or inside a larger expression', () => {
    expect(meets('select order_id from orders o where o.user_id = ? or 1', [uid])).toEqual([]);
    expect(meets('select order_id from orders o where o.user_id = ? || o.order_id > 0', [uid])).toEqual([]);
    expect(meets('select order_id from orders o where (o.user_id = ? or 1) and o.order_id > 0', [uid])).toEqual([]);
    expect(meets('select order_id from orders o where not o.user_id = ?', [uid])).toEqual([]);
    expect(meets('select order_id from orders o where o.order_id > 0 and (o.user_id = ? and 1)', [uid])).toEqual(['orders.user_id']);
    expect(meets('select order_id from orders o where o.order_id in (select order_id from orders where user_id = ?)', [uid])).toEqual(['orders.user_id']);
  });

  it('compared with =, either way round, and through the joins of two columns', () => {
    expect(meets('select order_id from orders where user_id = ?', [uid])).toEqual(['orders.user_id']);
    expect(meets('select o.order_id from orders o where ? = o.user_id', [uid])).toEqual(['orders.user_id']);
    expect(meets('select o.order_id from orders o join usr u on u.user_id = o.user_id where u.user_id = ?', [uid])).toEqual(['orders.user_id', 'usr.user_id']);
    // The user's row only: the order is anyone's.
    expect(meets('select o.order_id from orders o join usr u on u.user_id = ? where o.order_id = ?', [uid, id])).toEqual(['usr.user_id']);
    // <= is no equality, and a parameter before $uid is counted.
    expect(meets('select o.order_id from orders o where o.quantity <= ? and o.user_id = ?', [id, uid])).toEqual(['orders.user_id']);
  });

  it('says it cannot tell (null) where $uid meets no column it can name, rather than raise an alarm', () => {
    expect(meets('select o.order_id from orders o where o.user_id in (?)', [uid])).toBeNull();
    expect(meets('select cast(? as char) as uid', [uid])).toBeNull();
    expect(meets('select a from t1, t2 where owner = ?', [uid])).toBeNull();
  });
});

describe('the tables a statement reads outside its subqueries (the unowned-read lint)', () => {
  it('its own FROM and JOINs, schema-qualified or not, and none a subquery reads', () => {
    expect([...topLevelTables('select name from products where product_id in (select product_id from orders)')]).toEqual(['products']);
    expect([
      ...topLevelTables('select p.name, (select count(*) from reviews r where r.product_id = p.id) as n from shop.products p join stock s on s.id = p.id'),
    ]).toEqual(['products', 'stock']);
    expect([...topLevelTables('select 1 as one')]).toEqual([]);
  });
});
