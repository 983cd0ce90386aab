import { describe, expect, it } from 'vitest';
import { IDEMPOTENCY_KEY_MAX_LENGTH } from '../../runtime/contract/safe-writes.js';
import { HttpError } from '../../runtime/errors.js';
import { callerOf, canonicalText, fingerprint, framedDigest, idempotencyKeyOf, recordId } from '../../runtime/idempotency/index.js';

/** The pure parts of Idempotency-Key (docs/internals/contract.md §15): the header's form, the record's id and the request's fingerprint. */
describe('an Idempotency-Key header', () => {
  const refused = (header: string | string[] | undefined, required = false) => {
    try {
      idempotencyKeyOf(header, required);
    } catch (error) {
      expect(error).toBeInstanceOf(HttpError);
      return { status: (error as HttpError).status, reason: (error as HttpError).reason };
    }
    return undefined;
  };

  it('is taken as sent when 1 to 255 printable ASCII characters', () => {
    expect(idempotencyKeyOf('a', false)).toBe('a');
    expect(idempotencyKeyOf('!~', false)).toBe('!~');
    const longest = 'k'.repeat(IDEMPOTENCY_KEY_MAX_LENGTH);
    expect(idempotencyKeyOf(longest, true)).toBe(longest);
    expect(idempotencyKeyOf('8e03978e-40d5-43e8-bc93-6894a57f9324', false)).toBe('8e03978e-40d5-43e8-bc93-6894a57f9324');
  });

  it('is refused, 400, when empty, too long, or holding a space, a control or a character beyond ASCII', () => {
    for (const bad of ['', 'k'.repeat(IDEMPOTENCY_KEY_MAX_LENGTH + 1), 'a b', 'a\tb', 'a\x7fb', 'é', 'a, b', ['a', 'b']]) {
      expect(refused(bad), JSON.stringify(bad)).toEqual({ status: 400, reason: 'bad_idempotency_key' });
    }
  });

  it('may be absent, unless the route requires it', () => {
    expect(idempotencyKeyOf(undefined, false)).toBeUndefined();
    expect(refused(undefined, true)).toEqual({ status: 400, reason: 'idempotency_key_required' });
  });
});

describe("a record's id and a request's fingerprint", () => {
  it('frame each part by its length, so that no two lists of parts meet', () => {
    expect(framedDigest(['a|b', 'c']).equals(framedDigest(['a', 'b|c']))).toBe(false);
    expect(framedDigest(['ab', '']).equals(framedDigest(['a', 'b']))).toBe(false);
    expect(framedDigest(['a\u0000', 'b']).equals(framedDigest(['a', '\u0000b']))).toBe(false);
    expect(framedDigest(['a', 'b']).equals(framedDigest(['a', 'b']))).toBe(true);
    expect(framedDigest(['x'])).toHaveLength(32);
  });

  it('tell backends, callers and keys apart', () => {
    const id = recordId('shop', 'u:7', 'key-1');
    expect(recordId('shop', 'u:7', 'key-1').equals(id)).toBe(true);
    expect(recordId('desk', 'u:7', 'key-1').equals(id)).toBe(false);
    expect(recordId('shop', 'u:8', 'key-1').equals(id)).toBe(false);
    expect(recordId('shop', 'u:7', 'key-2').equals(id)).toBe(false);
  });

  it("name a user, an API key and the public apart, whatever a user's id reads", () => {
    expect(callerOf({ userId: '7' })).toBe('u:7');
    expect(callerOf({ userId: 'https://idp.example|7' })).toBe('u:https://idp.example|7');
    expect(callerOf({ userId: '7', keyId: 3 })).toBe('k:3');
    expect(callerOf({})).toBe('public');
    expect(callerOf({ userId: 'public' })).not.toBe(callerOf({}));
    expect(callerOf({ userId: 'k:3' })).not.toBe(callerOf({ keyId: 3 }));
  });

  it("take the method, the route, the query string and the body, in any order of the body's members", () => {
    const one = fingerprint('POST', '/shop/v1.0/orders', 'a=1', { item: 'pen', qty: 2, more: { b: 1, a: [1, { d: 1, c: 2 }] } });
    expect(fingerprint('POST', '/shop/v1.0/orders', 'a=1', { more: { a: [1, { c: 2, d: 1 }], b: 1 }, qty: 2, item: 'pen' }).equals(one)).toBe(true);
    expect(fingerprint('POST', '/shop/v1.0/orders', 'a=1', { item: 'pen', qty: 3, more: { b: 1, a: [1, { d: 1, c: 2 }] } }).equals(one)).toBe(false);
    expect(fingerprint('POST', '/shop/v1.0/orders', 'a=2', { item: 'pen', qty: 2, more: { b: 1, a: [1, { d: 1, c: 2 }] } }).equals(one)).toBe(false);
    expect(fingerprint('POST', '/shop/v2.0/orders', 'a=1', { item: 'pen', qty: 2, more: { b: 1, a: [1, { d: 1, c: 2 }] } }).equals(one)).toBe(false);
    // A number and its text are two bodies; so are no body and an empty one.
    expect(fingerprint('POST', '/r', '', { qty: 2 }).equals(fingerprint('POST', '/r', '', { qty: '2' }))).toBe(false);
    expect(fingerprint('POST', '/r', '', undefined).equals(fingerprint('POST', '/r', '', {}))).toBe(false);
  });

  it('keep a member named __proto__ as a member', () => {
    const parsed = JSON.parse('{"__proto__": {"x": 1}}') as unknown;
    expect(canonicalText(parsed)).toBe('{"__proto__":{"x":1}}');
    expect(canonicalText(parsed)).not.toBe(canonicalText({}));
    expect(canonicalText([null, 'a', 1.5, true])).toBe('[null,"a",1.5,true]');
  });
});
