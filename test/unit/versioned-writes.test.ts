import { describe, expect, it } from 'vitest';
import { scanSql } from '../../generator/sql/index.js';
import { EXPECTED, versionedTexts } from '../../generator/sql/versioned.js';

/** A versioned write's three forms (generator/sql/versioned.ts), as the handler runs them: `?` for each bind. */
function forms(text: string, column = 'version') {
  const texts = versionedTexts(text, column);
  if ('message' in texts) return texts.message;
  const conditional = scanSql(texts.conditional);
  return {
    unconditional: scanSql(texts.unconditional).sql,
    conditional: conditional.sql,
    probe: scanSql(texts.probe).sql,
    whereBinds: texts.whereBinds,
    last: conditional.placeholders.at(-1),
  };
}

describe('a versioned write’s forms', () => {
  it('move the version on in the set list, compare it last in a wrapped where, and probe the row by the same where', () => {
    expect(forms('update orders o set o.quantity = $q, o.note = concat(o.note, $n) where o.order_id = $id or o.code = $code')).toEqual({
      unconditional: 'update orders o set o.quantity = ?, o.note = concat(o.note, ?), o.version = o.version + 1 where o.order_id = ? or o.code = ?',
      conditional:
        'update orders o set o.quantity = ?, o.note = concat(o.note, ?), o.version = o.version + 1 where (o.order_id = ? or o.code = ?) and o.version = cast(? as unsigned)',
      probe: 'select o.version from orders o where o.order_id = ? or o.code = ? lock in share mode',
      whereBinds: 2,
      last: { kind: 'param', name: EXPECTED },
    });
  });

  it('keep a delete as written, qualify by the table when there is no alias, and quote what needs it', () => {
    expect(forms('delete from `my docs` where id = $id', 'rev')).toMatchObject({
      unconditional: 'delete from `my docs` where id = ?',
      conditional: 'delete from `my docs` where (id = ?) and `my docs`.rev = cast(? as unsigned)',
      probe: 'select `my docs`.rev from `my docs` where id = ? lock in share mode',
      whereBinds: 1,
    });
  });

  it('keep a subquery’s binds in the where, in order', () => {
    const made = forms('update t set a = (select max(b) from u where u.k = $k) where t.id = $id and t.g in (select g from v where v.x = $x)');
    expect(made).toMatchObject({
      whereBinds: 2,
      probe: 'select t.version from t where t.id = ? and t.g in (select g from v where v.x = ?) lock in share mode',
    });
  });

  it('refuse what could change another row, or the version by hand', () => {
    expect(forms('update a join b on a.x = b.x set a.y = 1 where a.z = $z')).toBe('a versioned write changes one table: no join, no second table');
    expect(forms('update a, b set a.y = 1 where a.z = b.z')).toBe('a versioned write changes one table: no join, no second table');
    expect(forms('delete a from a join b on a.x = b.x where b.z = $z')).toBe('a versioned write changes one table: no join, no second table');
    expect(forms('update a set y = 1 where z = $z limit 1')).toBe('a versioned write names its row by its where alone, without limit');
    expect(forms('delete from a where z = $z order by z')).toBe('a versioned write names its row by its where alone, without order by');
    expect(forms('update a set y = 1')).toBe('a versioned write names its row: give the statement a where');
    expect(forms('update a set a.VERSION = 3 where z = 1')).toBe('the statement sets the version column version itself: the generator moves it on');
    expect(forms('insert into a (y) values ($y)')).toBe('a versioned write is an update or a delete');
  });
});
