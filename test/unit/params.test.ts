import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { queryFields } from '../../runtime/body.js';
import type { ParamSpec } from '../../runtime/contract.js';
import { HttpError } from '../../runtime/errors.js';
import { readParams } from '../../runtime/params.js';

const read = (value: unknown, spec: ParamSpec) => readParams<{ p: unknown }>({}, { p: value }, { p: spec }).p;
const message = (value: unknown, spec: ParamSpec) => {
  try {
    read(value, spec);
    return 'accepted';
  } catch (error) {
    expect(error).toBeInstanceOf(HttpError);
    return (error as HttpError).message;
  }
};

describe('readParams: where a parameter comes from', () => {
  const spec: ParamSpec = { kind: 'string', nullable: false };
  it('takes the body over the query string, and the query string when the body lacks it', () => {
    expect(readParams({ p: 'query' }, { p: 'body' }, { p: spec })).toEqual({ p: 'body' });
    expect(readParams({ p: 'query' }, undefined, { p: spec })).toEqual({ p: 'query' });
  });

  it("reads a parameter marked from: 'body' (a token request's) from the body only", () => {
    const fromBody: ParamSpec = { ...spec, from: 'body' };
    expect(readParams({ p: 'query' }, { p: 'body' }, { p: fromBody })).toEqual({ p: 'body' });
    expect(() => readParams({ p: 'query' }, undefined, { p: fromBody })).toThrow("Missing parameter 'p'");
    expect(() => readParams({ p: 'query' }, {}, { p: fromBody })).toThrow("Missing parameter 'p'");
  });
});

describe('readParams: checks and converts each parameter to what its column takes', () => {
  it('converts whole numbers, keeping BIGINT and DECIMAL exact as strings', () => {
    expect(read('42', { kind: 'integer', nullable: false })).toBe(42);
    expect(read(42, { kind: 'integer', nullable: false })).toBe(42);
    expect(read('9007199254740993', { kind: 'bigint', nullable: false })).toBe('9007199254740993');
    expect(read(1.5, { kind: 'decimal', nullable: false })).toBe('1.5');
    expect(read('0.10', { kind: 'decimal', nullable: false })).toBe('0.10');
    expect(read('1e3', { kind: 'number', nullable: false })).toBe(1000);
  });

  it('refuses what the column cannot take, naming the parameter', () => {
    expect(message('4.2', { kind: 'integer', nullable: false })).toBe("Parameter 'p' must be a whole number");
    expect(message('-1', { kind: 'integer', nullable: false, unsigned: true })).toBe("Parameter 'p' must be a whole number, 0 or more");
    expect(message('9007199254740993', { kind: 'integer', nullable: false })).toBe("Parameter 'p' must be a whole number in range");
    expect(message(true, { kind: 'integer', nullable: false })).toBe("Parameter 'p' must be a whole number");
    expect(message('1e3', { kind: 'decimal', nullable: false })).toBe("Parameter 'p' must be a decimal number");
    expect(message(Number('9007199254740993'), { kind: 'bigint', nullable: false })).toBe(
      "Parameter 'p' must be a whole number in range (send a larger one as a string)",
    );
    expect(message(1e20, { kind: 'decimal', nullable: false })).toBe("Parameter 'p' must be a decimal number in range (send it as a string)");
    expect(message('abc', { kind: 'number', nullable: false })).toBe("Parameter 'p' must be a number");
    expect(message('héllo', { kind: 'string', nullable: false, maxLength: 4 })).toBe("Parameter 'p' must be at most 4 characters");
    expect(message('zoë!', { kind: 'string', nullable: false, maxLength: 4 })).toBe('accepted');
    expect(message('maybe', { kind: 'enum', nullable: false, values: ['yes', 'no'] })).toBe("Parameter 'p' must be one of yes, no");
    expect(message('2026-13', { kind: 'date', nullable: false })).toBe("Parameter 'p' must be a date (YYYY-MM-DD)");
    expect(message('2026-11-22 10:00:00', { kind: 'datetime', nullable: false })).toBe('accepted');
    expect(message('10:00', { kind: 'time', nullable: false })).toBe('accepted');
    expect(message(null, { kind: 'string', nullable: false })).toBe("Parameter 'p' must not be null");
    expect(message(null, { kind: 'string', nullable: true })).toBe('accepted');
    expect(message({ a: 1 }, { kind: 'any', nullable: true })).toBe("Parameter 'p' must be a single string, number, boolean or null");
  });

  it('binds an untyped parameter as text: a JSON number or boolean as a form would send it, never as a number', () => {
    // As a number, 0 would meet a text column as a number, and MariaDB compares 'alice' = 0 as true.
    const untyped = { kind: 'any', nullable: true } as const;
    expect(read(0, untyped)).toBe('0');
    expect(read(-0, untyped)).toBe('0');
    expect(read(1.5, untyped)).toBe('1.5');
    expect(read(1e21, untyped)).toBe('1e+21');
    expect(read(true, untyped)).toBe('true');
    expect(read(false, untyped)).toBe('false');
    expect(read('0', untyped)).toBe('0');
    expect(read(null, untyped)).toBe(null);
    // Typed parameters keep their types.
    expect(read(0, { kind: 'integer', nullable: false })).toBe(0);
    expect(read(0, { kind: 'string', nullable: false })).toBe('0');
  });

  it('takes the body over the query string, and reports a missing parameter', () => {
    expect(readParams({ p: 'query' }, { p: 'body' }, { p: { kind: 'any', nullable: false } })).toEqual({ p: 'body' });
    expect(readParams({ p: 'query' }, undefined, { p: { kind: 'any', nullable: false } })).toEqual({ p: 'query' });
    expect(() => readParams({}, {}, { p: { kind: 'any', nullable: false } })).toThrow("Missing parameter 'p'");
  });
});

describe('queryFields: the query string, in one pass and within the limit', () => {
  // What Koa's ctx.query gave before (koa/lib/search-params.js): the same decoding, the same arrays.
  const koa = (text: string) => {
    const searchParams = new URLSearchParams(text);
    const fields: Record<string, string | string[]> = {};
    for (const key of searchParams.keys()) {
      const values = searchParams.getAll(key);
      Object.defineProperty(fields, key, { value: values.length <= 1 ? values[0] : values, writable: true, enumerable: true, configurable: true });
    }
    return fields;
  };

  it.each(['', 'id=42', 'a=1&b=two', 'a=1&a=2&a=3', 'q=caf%C3%A9+au+lait', 'bad=%zz%E0%A4', 'flag&empty=&=nameless', '__proto__=x&constructor=y', 'a=1&&b=2&'])(
    'reads %j as Koa did',
    (text) => {
      const fields = queryFields(text, 100);
      // Nothing inherited: the prototype is an empty, frozen object of no prototype (body.ts, Fields).
      const inherited = Object.getPrototypeOf(fields);
      expect(Object.getPrototypeOf(inherited)).toBeNull();
      expect(Reflect.ownKeys(inherited)).toEqual([]);
      expect(Object.isFrozen(inherited)).toBe(true);
      for (const name of ['constructor', 'toString', 'hasOwnProperty', '__proto__']) expect(Object.hasOwn(fields, name) || !(name in fields)).toBe(true);
      expect({ ...fields }).toEqual({ ...koa(text) });
    },
  );

  it('reads any text as URLSearchParams does, on its fast path (no %, + or character past ASCII) and off it', () => {
    // Texts made of the characters that matter to the cut and the decoding, a leading `?` included.
    const piece = fc.constantFrom('a', 'b', '=', '&', '?', '%', '%2', '%41', '+', 'é', '\ud800', ';', '#', ' ', '&&', '==');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 14 }), (pieces) => {
        const text = pieces.join('');
        expect({ ...queryFields(text, 1000) }).toEqual({ ...koa(text) });
      }),
      { numRuns: 2000 },
    );
  });

  it('reads a text in one pass however it is cut: a form body of 1 MB of `a&a&...` (no `=`) is not searched again for each piece', () => {
    // Counted, not timed: every character each indexOf looks at, over a text of 500,000 pieces without a `=`. Looked
    // up afresh for each piece, the `=` was searched for to the text's end each time (some 10^11 characters, 5 s of
    // CPU for one unauthenticated POST to a token door, whose form bodies take this path).
    const text = Array(500_000).fill('a').join('&');
    const indexOf = String.prototype.indexOf;
    let scanned = 0;
    String.prototype.indexOf = function (this: string, search: string, from = 0) {
      const found = indexOf.call(this, search, from);
      scanned += (found === -1 ? this.length : found + search.length) - Math.max(0, from);
      return found;
    };
    let fields: Record<string, string | string[]>;
    try {
      fields = queryFields(text, 100);
    } finally {
      String.prototype.indexOf = indexOf;
    }
    expect((fields.a as string[]).length).toBe(500_000);
    expect(scanned).toBeLessThan(3 * text.length);
  });

  it('refuses the first distinct field past the limit; repeats of a field count once', () => {
    expect(Object.keys(queryFields('a=1&b=2&c=3', 3))).toEqual(['a', 'b', 'c']);
    expect(() => queryFields('a=1&b=2&c=3&d=4', 3)).toThrow('Too many parameters: at most 3');
    expect(queryFields('a=1&a=2&a=3&a=4', 1).a).toEqual(['1', '2', '3', '4']);
    const many = Array.from({ length: 3000 }, (_, i) => `k${i}=`).join('&');
    expect(() => queryFields(many, 100)).toThrow(HttpError);
  });
});
