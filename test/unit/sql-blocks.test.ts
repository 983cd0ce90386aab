import { describe, expect, it } from 'vitest';
import { type Block, readStatement, type Statement } from '../../generator/sql/blocks.js';
import { tokenize } from '../../generator/sql/tokens.js';

const read = (text: string): Statement => readStatement(tokenize(text, []).filter((token) => token.type !== 'space' && token.type !== 'comment'));
const blocks = (text: string): Block[] => {
  const statement = read(text);
  if ('unread' in statement) throw new Error(`unread: ${statement.unread} in ${text}`);
  return statement.blocks;
};
/** Each block (in reading order: a with's bodies before its query) as `kind: ref ref …`, a ref as `name[/alias][:source][+join]`. */
const shape = (text: string) =>
  blocks(text).map(
    (block) =>
      `${block.kind}:${block.refs.map((ref) => ` ${ref.schema ? `${ref.schema}.` : ''}${ref.name}${ref.alias && ref.alias !== ref.name ? `/${ref.alias}` : ''}:${ref.source}${ref.join ? `+${ref.join}` : ''}`).join('')}`,
  );
const termCount = (condition: Block['where']) => (condition === null ? null : condition.terms === 'disjunction' ? 'disjunction' : condition.terms.length);

describe('readStatement: selects', () => {
  it('reads refs with aliases, sources, join kinds and offsets', () => {
    const text =
      'select o.a from orders as o join items i on i.oid = o.id and i.org_id = $tenant left outer join notes n using (org_id), tags t where o.org_id = $tenant';
    expect(shape(text)).toEqual(['select: orders/o:from items/i:join+inner notes/n:join+left tags/t:comma']);
    const [block] = blocks(text);
    expect(block!.refs.map((ref) => ref.offset)).toEqual([text.indexOf('orders'), text.indexOf('items'), text.indexOf('notes'), text.indexOf('tags')]);
    expect(termCount(block!.refs[1]!.on)).toBe(2);
    expect(block!.refs[2]!.using).toEqual(['org_id']);
    expect(termCount(block!.where)).toBe(1);
  });

  it('knows every join spelling, index hints, partitions, `from dual` and the select modifiers', () => {
    const text =
      'select distinct sql_calc_found_rows straight_join a from t1 a use index (i1) ignore key for order by (i2) cross join t2 b straight_join t3 c on c.x = 1 ' +
      'natural join t4 natural left outer join t5 right join t6 f on left(f.x, 1) = a.x inner join t7 partition (p0, p1) g on g.x = 1';
    expect(shape(text)).toEqual(['select: t1/a:from t2/b:join+cross t3/c:join+straight t4:join+natural t5:join+natural t6/f:join+right t7/g:join+inner']);
    expect(shape('select 1 from dual')).toEqual(['select: dual:from']);
  });

  it('makes every subquery its own block: select list, where, having, in, exists, derived tables, json_table', () => {
    const text =
      'select (select count(*) from a) n from b join (select * from c) d on d.x = b.x, json_table(b.j, "$[*]" columns (v int path "$")) jt ' +
      'where b.x in (select x from e) and exists (select 1 from f) group by n having max(b.y) > (select 1 from g) order by (select 2 from h)';
    expect(shape(text)).toEqual([
      'select: b:from d:derived+inner jt:derived',
      'select: a:from',
      'select: c:from',
      'select: e:from',
      'select: f:from',
      'select: g:from',
      'select: h:from',
    ]);
  });

  it('reads CTEs (recursive too) as blocks and their names as cte refs, each union arm as a block', () => {
    expect(shape('with x as (select * from orders), y (a) as (select a from x) select * from y join orders o on 1 = 1')).toEqual([
      'select: orders:from',
      'select: x:cte',
      'select: y:cte orders/o:join+inner',
    ]);
    // A plain with's body does not see its own name: `orders` inside is the table; a recursive one sees all.
    expect(shape('with orders as (select * from orders) select * from orders')).toEqual(['select: orders:from', 'select: orders:cte']);
    expect(shape('with recursive r as (select 1 n union all select n + 1 from r where n < 3) select * from r')).toEqual([
      'select:',
      'select: r:cte',
      'select: r:cte',
    ]);
    expect(shape('select a from t union select a from u intersect (select a from v) except all select a from w order by 1 limit 2')).toEqual([
      'select: t:from',
      'select: u:from',
      'select: v:from',
      'select: w:from',
    ]);
  });

  it('reads the tails: group by … with rollup, window, order, limit, for update, lock in share mode', () => {
    for (const tail of [
      'group by a with rollup',
      'window w as (partition by a)',
      'limit 1 offset 2',
      'limit 1, 2',
      'for update of t skip locked',
      'for share nowait',
      'lock in share mode',
    ]) {
      expect(shape(`select a from t where a = 1 ${tail}`), tail).toEqual(['select: t:from']);
    }
  });
});

describe('readStatement: writes', () => {
  it('reads insert … values rows, insert … set, insert … select and on duplicate key update', () => {
    const [values] = blocks('insert ignore into t (a, `org_id`) values (1, $tenant), ((select 2), $x) on duplicate key update a = values(a)');
    expect(values!.insert).toMatchObject({ table: { name: 't', source: 'target' }, columns: ['a', 'org_id'], select: null });
    expect(values!.insert!.rows!.map((row) => row.map((item) => item.map((token) => token.text).join(' ')))).toEqual([
      ['1', '$tenant'],
      ['( select 2 )', '$x'],
    ]);
    expect(values!.insert!.odku.map((set) => set.column)).toEqual(['a']);
    expect(blocks('replace t set a = 1, org_id = $tenant')[0]!.sets.map((set) => set.column)).toEqual(['a', 'org_id']);
    const selected = blocks('insert into t (a, org_id) select a, $tenant from u where u.org_id = $tenant union select 1, $tenant');
    expect(selected[0]!.insert!.select!.map((arm) => arm.items.length)).toEqual([2, 2]);
    expect(shape('insert into t (a) with w as (select 1 a) select a from w')).toEqual(['insert:', 'select:', 'select: w:cte']);
  });

  it('reads single and multi-table updates with their set lists', () => {
    const [update] = blocks(
      'update low_priority orders o join items i on i.oid = o.id set o.a = 1, i.b = (select 1 from c) where o.org_id = $tenant order by o.id limit 5',
    );
    expect(update!.refs.map((ref) => `${ref.alias}:${ref.source}`)).toEqual(['o:target', 'i:join']);
    expect(update!.sets.map((set) => `${set.qualifier}.${set.column}`)).toEqual(['o.a', 'i.b']);
  });

  it('reads the three deletes and which references each deletes', () => {
    const deleted = (text: string) => blocks(text)[0]!.deletes.map((ref) => ref.alias ?? ref.name);
    expect(deleted('delete quick from t where a = 1 order by a limit 1')).toEqual(['t']);
    expect(deleted('delete a, b.* from orders a join items b on b.x = a.x where a.org_id = $tenant')).toEqual(['a', 'b']);
    expect(deleted('delete from a, b using orders a, items b where b.x = a.x')).toEqual(['a', 'b']);
  });
});

describe('readStatement: refusals', () => {
  it('leaves unread every form outside its list, at the offending token', () => {
    const cases: [string, string][] = [
      ['call p()', 'call'],
      ['set @a = 1', 'set'],
      ['prepare s from concat("select * from ", $t)', 'prepare'],
      ['do sleep(1)', 'do'],
      ['select a into @v from t', 'into'],
      ['select a from t into outfile "x"', 'into'],
      ['select @a := 1', '@'],
      ['select a from t where b = @@version', '@'],
      ['select * from t where a = 1; delete from t', 'delete'],
      ['table t', 'table'],
      ['values (1)', 'values'],
      ['select * from (values (1)) v', 'values'],
      ['select * from (t join u on 1) where 1', 't join'],
      ['select * from lateral (select 1) x', 'lateral'],
      ['select * from a.b.c', '.c'],
      ['select * from t for system_time all', 'for'],
      ['delete from t returning a', 'returning'],
      ['insert into t (a) values (1) returning a', 'returning'],
      ['select * from (select 1)', ')'],
      ['select ((select 1) union select a from t)', 'select a'],
      ['select a from t where (a = 1', 'the end'],
      ['with x as (select 1) update t set a = 1', 'update'],
      ['select a from t where a in (values (1))', '(values'],
      // A stop word after a dot is a column to the database, and WINDOW is not reserved in MariaDB: a where cut
      // there is unread, never trusted.
      ['select a from t where a = 1 and t.limit = 1', 'limit'],
      ['select a from t where a = 1 and window or 1', 'window'],
    ];
    for (const [text, at] of cases) {
      const statement = read(text);
      expect('unread' in statement, text).toBe(true);
      if ('unread' in statement && at !== 'the end') expect(statement.offset, `${text}: ${statement.unread}`).toBe(text.indexOf(at));
    }
  });

  it('never throws on random token soups (fuzz)', () => {
    const words = [
      'select',
      'from',
      'where',
      'join',
      'left',
      'on',
      'using',
      'and',
      'or',
      'not',
      '(',
      ')',
      ',',
      '.',
      '=',
      '$tenant',
      't',
      'o',
      'org_id',
      'union',
      'with',
      'as',
      'insert',
      'into',
      'values',
      'set',
      'update',
      'delete',
      'between',
      'case',
      'end',
      'exists',
      'in',
      '*',
      '1',
      'group',
      'by',
      'limit',
      ';',
      '@',
      ':',
      '`x`',
      'on duplicate key update',
      'for',
      'natural',
    ];
    let seed = 43;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    for (let k = 0; k < 3000; k++) {
      const soup = Array.from({ length: 1 + random(30) }, () => words[random(words.length)]).join(' ');
      expect(() => read(soup), soup).not.toThrow();
    }
  });
});
