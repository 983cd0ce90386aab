import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { readHeaders, validatorText, versionOf } from '../../runtime/conditional/reads.js';
import { digestTag, noneMatchHolds, readIfMatch, versionTag } from '../../runtime/conditional/tags.js';

/** Entity tags (runtime/conditional/tags.ts) and what a GET's answer says of them (reads.ts), docs/internals/contract.md §15. */
describe('digestTag', () => {
  it('is the first 160 bits of a SHA-256 of the text, in base64url, quoted', () => {
    const text = '{"items":[{"id":1}]}';
    const expected = createHash('sha256').update(text).digest('base64url').slice(0, 27);
    expect(digestTag(text)).toBe(`"${expected}"`);
    expect(digestTag(text)).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect(digestTag(`${text} `)).not.toBe(digestTag(text));
    // UTF-8 bytes, whatever the characters.
    expect(digestTag('é')).toBe(`"${createHash('sha256').update(Buffer.from('é', 'utf8')).digest('base64url').slice(0, 27)}"`);
  });
});

describe('versionTag', () => {
  it('quotes the canonical digits of a number, a bigint or a string', () => {
    expect(versionTag(7)).toBe('"7"');
    expect(versionTag(18446744073709551615n)).toBe('"18446744073709551615"');
    expect(versionTag('42')).toBe('"42"');
  });
});

describe('noneMatchHolds (weak comparison)', () => {
  const tag = '"abc"';
  it.each([
    ['"abc"', true],
    ['W/"abc"', true],
    ['"x", "abc"', true],
    ['"x",W/"abc"', true],
    ['  "abc"  ', true],
    ['*', true],
    ['"x", *', true],
    ['"abd"', false],
    ['abc', false],
    ['W/abc', false],
    ['"a"bc"', false],
    ['', false],
    [',', false],
  ])('If-None-Match %j holds "abc": %s', (header, holds) => {
    expect(noneMatchHolds(header, tag)).toBe(holds);
  });

  it('holds nothing without the header', () => {
    expect(noneMatchHolds(undefined, tag)).toBe(false);
  });
});

describe('readIfMatch (strong comparison)', () => {
  it.each([
    [undefined, { kind: 'absent' }],
    ['', { kind: 'absent' }],
    ['*', { kind: 'any' }],
    ['"7"', { kind: 'version', version: '7' }],
    ['"0"', { kind: 'version', version: '0' }],
    ['"18446744073709551615"', { kind: 'version', version: '18446744073709551615' }],
    ['"18446744073709551616"', { kind: 'other' }],
    ['"07"', { kind: 'other' }],
    ['W/"7"', { kind: 'other' }],
    ['"7", "8"', { kind: 'other' }],
    ['"7",', { kind: 'other' }],
    ['"AbC_-digest"', { kind: 'other' }],
    ['7', { kind: 'other' }],
  ])('If-Match %j is %j', (header, expected) => {
    expect(readIfMatch(header)).toEqual(expected);
  });
});

describe("a GET's cache headers", () => {
  it('are private and vary with the credentials on a protected route, public only with max_age', () => {
    expect(readHeaders({ access: ['member'] })).toEqual({ cacheControl: 'private, no-cache', vary: 'Authorization, X-API-Key' });
    expect(readHeaders({ access: '*' })).toEqual({ cacheControl: 'private, no-cache', vary: 'Authorization, X-API-Key' });
    expect(readHeaders({ access: null })).toEqual({ cacheControl: 'no-cache', vary: undefined });
    expect(readHeaders({ access: null, maxAge: 60 })).toEqual({ cacheControl: 'public, max-age=60', vary: undefined });
  });
});

describe("a rows validator's text", () => {
  const route = { backend: 'shop', resource: 'reviews@1.0', userId: '7', tenant: undefined, query: 'product_id=1' };
  it('differs by caller, tenant, query and rows, and cannot be forged across fields', () => {
    const base = validatorText(route, [{ n: 1 }]);
    expect(validatorText({ ...route, userId: '8' }, [{ n: 1 }])).not.toBe(base);
    expect(validatorText({ ...route, tenant: 'acme' }, [{ n: 1 }])).not.toBe(base);
    expect(validatorText({ ...route, query: 'product_id=2' }, [{ n: 1 }])).not.toBe(base);
    expect(validatorText(route, [{ n: 2 }])).not.toBe(base);
    // One field's text never runs into the next: JSON quotes each.
    expect(validatorText({ ...route, backend: 'sho', resource: 'previews@1.0' }, [{ n: 1 }])).not.toBe(base);
    expect(validatorText(route, [{ n: 1 }])).toBe(base);
  });

  it('takes a bigint as its digits', () => {
    expect(validatorText(route, [{ n: 5n }])).toBe(validatorText(route, [{ n: '5' }]));
  });
});

describe("a version validator's tag", () => {
  it("is the one row's one column as canonical digits, else no tag", () => {
    expect(versionOf([{ version: 7 }])).toBe('"7"');
    expect(versionOf([{ version: 0 }])).toBe('"0"');
    expect(versionOf([{ version: 9007199254740993n }])).toBe('"9007199254740993"');
    // mysql2's text of a BIGINT past 2^53.
    expect(versionOf([{ version: '18446744073709551615' }])).toBe('"18446744073709551615"');
    for (const rows of [[], [{ version: 1 }, { version: 2 }], [{ version: 1, other: 2 }]]) expect(versionOf(rows)).toBeUndefined();
    for (const value of [-1, 1.5, '07', '1e3', ' 1', '18446744073709551616', null, new Date(0), -1n])
      expect(versionOf([{ version: value }]), String(value)).toBeUndefined();
  });
});
