import { describe, expect, it } from 'vitest';
import { comparison, provesTenant, readCondition, type Term } from '../../generator/sql/terms.js';
import { tokenize } from '../../generator/sql/tokens.js';

const tokens = (text: string) => tokenize(text, []).filter((token) => token.type !== 'space' && token.type !== 'comment');
const texts = (text: string) => {
  const { terms } = readCondition(tokens(text));
  return terms === 'disjunction' ? terms : terms.map((term) => term.tokens.map((token) => token.text).join(' '));
};
/** Whether the condition proves the reference aliased `o` (the only alias that resolves). */
const proves = (text: string, bareOk = false) => {
  const { terms } = readCondition(tokens(text));
  return terms !== 'disjunction' && terms.some((term) => provesTenant(term, 'org_id', (q) => (q === null ? bareOk : q.toLowerCase() === 'o')));
};

describe('$tenant', () => {
  it('is a placeholder token of kind tenant, and stays text inside strings, names and comments', () => {
    const text = "select '$tenant', `$tenant` from t -- $tenant\nwhere a = $tenant";
    const found = tokenize(text, []).filter((t) => t.type === 'placeholder');
    expect(found).toEqual([{ type: 'placeholder', text: '$tenant', start: text.lastIndexOf('$'), placeholder: { kind: 'tenant' } }]);
    expect(tokens('$tenants')[0]!.placeholder).toEqual({ kind: 'param', name: 'tenants' });
  });
});

describe('readCondition', () => {
  it('splits at top-level and / &&, flattening a parenthesised pure and', () => {
    expect(texts('a = 1 and (b = 2 and (c = 3 && d = 4)) and f(x and y)')).toEqual(['a = 1', 'b = 2', 'c = 3', 'd = 4', 'f ( x and y )']);
  });

  it('pairs between … and, and keeps case … end whole', () => {
    expect(texts('x between 1 and o.org_id = $tenant and y = 2')).toEqual(['x between 1 and o . org_id = $tenant', 'y = 2']);
    expect(texts('x not between 1 and 2 and y = 2')).toEqual(['x not between 1 and 2', 'y = 2']);
    expect(texts('case when a then 1 else 0 and o.org_id = $tenant and 1 end')).toHaveLength(1);
  });

  it('is a disjunction for or, xor, ||, := and a negating not or !, at the top level only', () => {
    for (const text of ['a or b', 'a and b || c', 'a xor b', 'a and @x := 1', 'not a and b', 'a and ! b', 'a and not (b)']) {
      expect(texts(text), text).toBe('disjunction');
    }
    expect(readCondition(tokens('a = 1 or b')).why).toBe('an or');
    expect(readCondition(tokens('a | | b')).why).toBe(undefined);
    // Comparisons spelt with not are not negations of the term; a subquery's or stays inside it.
    expect(texts('a not in (1) and b is not null and c not like d and e != 1 and not exists (select 1 or 2)')).toHaveLength(5);
    expect(texts('(a or b) and c')).toEqual(['( a or b )', 'c']);
  });

  it('never opens a parenthesised subquery into terms', () => {
    expect(texts('(select 1 from t where a and o.org_id = $tenant)')).toHaveLength(1);
    expect(proves('(select 1 from t where a and o.org_id = $tenant)')).toBe(false);
  });
});

describe('provesTenant', () => {
  it('accepts exactly o.org_id = $tenant, $tenant = o.org_id, backticks and any case', () => {
    for (const text of ['o.org_id = $tenant', '$tenant = o.org_id', '`o`.`org_id` = $tenant', 'O.ORG_ID = $tenant', 'a = 1 and (o.org_id = $tenant)']) {
      expect(proves(text), text).toBe(true);
    }
  });

  it('accepts a bare column only where the block has one reference', () => {
    expect(proves('org_id = $tenant', true)).toBe(true);
    expect(proves('org_id = $tenant', false)).toBe(false);
    expect(proves('$tenant = org_id', true)).toBe(true);
  });

  it('refuses every other shape', () => {
    for (const text of [
      'o.org_id = $tenant or 1',
      'o.org_id = $tenant || 1',
      'o.org_id = $tenant xor 1',
      'not (o.org_id <> $tenant)',
      'o.org_id = $tenant is true',
      'o.org_id <=> $tenant',
      'o.org_id != $tenant',
      'o.org_id in ($tenant)',
      'o.org_id = $tenant collate utf8mb4_bin',
      'binary o.org_id = $tenant',
      'o.org_id = $org',
      'o.org_id = $[prev][0].org_id',
      'o.org_id = 7',
      'o.org_id = $uid',
      'x.org_id = $tenant',
      'o.other = $tenant',
      'o.org_id = $tenant + 0',
      'x between 1 and o.org_id = $tenant',
      'case when 1 then 1 else 0 and o.org_id = $tenant and 1 end',
      'db.o.org_id = $tenant',
      "o.org_id = '$tenant'",
    ]) {
      expect(proves(text, true), text).toBe(false);
    }
  });

  it('reads the near miss a message names', () => {
    const term: Term = { tokens: tokens('o.org_id = $org'), offset: 0 };
    expect(comparison(term)).toMatchObject({ qualifier: 'o', column: 'org_id', other: { text: '$org' } });
  });
});
