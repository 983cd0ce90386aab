import { randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { checkNewKey, parseExpiry } from '../../console/keys.js';
import { base62, presentedKey, storedForm } from '../../runtime/auth/keys/api-key.js';
import { isLegacyApiKey, KeyChecksum } from '../../runtime/auth/keys/key-checksum.js';

/** The API key format (docs/internals/contract.md §10): xr_, 43 base62 characters of 32 random bytes, an 11-character keyed tag. */
describe('API keys', () => {
  const checksum = new KeyChecksum(randomBytes(32));

  it('are xr_ and 54 base62 characters, different every time, and pass their own tag', () => {
    const keys = new Set(Array.from({ length: 200 }, () => checksum.make()));
    expect(keys.size).toBe(200);
    for (const key of keys) {
      expect(key).toMatch(/^xr_[0-9A-Za-z]{54}$/);
      expect(checksum.formOf(key)).toBe('current');
    }
  });

  it('refuse every change of one character, a missing or extra one, and anything of another shape', () => {
    const key = checksum.make();
    const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
    for (let i = 3; i < key.length; i++) {
      for (const c of alphabet) {
        if (c === key[i]) continue;
        expect(checksum.formOf(key.slice(0, i) + c + key.slice(i + 1)), `${i} ${c}`).toBe('malformed');
      }
    }
    expect(checksum.formOf(key.slice(0, -1))).toBe('malformed');
    expect(checksum.formOf(`${key}0`)).toBe('malformed');
    expect(checksum.formOf(`xx_${key.slice(3)}`)).toBe('malformed');
    expect(checksum.formOf('')).toBe('malformed');
  });

  it('made under one secret pass under the same secret only (every server of a database shares it)', () => {
    const secret = randomBytes(32);
    const key = new KeyChecksum(secret).make();
    expect(new KeyChecksum(Buffer.from(secret)).formOf(key)).toBe('current');
    expect(new KeyChecksum(randomBytes(32)).formOf(key)).toBe('malformed');
  });

  it('of the CRC32 form made before keyed tags are told apart as such, by shape and checksum', () => {
    const body = `xr_${'7'.repeat(43)}`;
    const legacy = body + base62(BigInt(crc32(body)), 6);
    expect(isLegacyApiKey(legacy)).toBe(true);
    expect(checksum.formOf(legacy)).toBe('legacy');
    expect(isLegacyApiKey(`${legacy.slice(0, -1)}${legacy.at(-1) === 'a' ? 'b' : 'a'}`)).toBe(false);
  });

  it('are stored as their SHA-256 and first 8 characters', () => {
    const key = checksum.make();
    const stored = storedForm(key);
    expect(stored.hash).toHaveLength(32);
    expect(stored.prefix).toBe(key.slice(0, 8));
  });

  it('are read from X-API-Key, or from Authorization as a Bearer credential of their shape only', () => {
    expect(presentedKey(undefined, ' xr_abc ')).toBe('xr_abc');
    expect(presentedKey('Bearer xr_abc', undefined)).toBe('xr_abc');
    expect(presentedKey('bearer   xr_abc', undefined)).toBe('xr_abc');
    expect(presentedKey('Bearer eyJhbGciOi.x.y', undefined)).toBeUndefined();
    expect(presentedKey('Basic eHI6', undefined)).toBeUndefined();
    expect(presentedKey(undefined, undefined)).toBeUndefined();
  });

  it('list only roles their user holds, with a name, a rate and a future expiry, and no console role', () => {
    const key = { backend: 'b', userId: '1', name: 'nightly', roles: ['a'], expires: null, rate: null };
    expect(checkNewKey(key, ['a', 'b'], [])).toEqual({ ok: true });
    expect(checkNewKey({ ...key, roles: ['a', 'op'] }, ['a', 'op'], ['op'])).toMatchObject({ ok: false, message: expect.stringContaining('console role') });
    expect(checkNewKey({ ...key, roles: ['c'] }, ['a'], [])).toMatchObject({ ok: false });
    expect(checkNewKey({ ...key, roles: [] }, ['a'], [])).toMatchObject({ ok: false });
    expect(checkNewKey({ ...key, name: '' }, ['a'], [])).toMatchObject({ ok: false });
    expect(checkNewKey({ ...key, rate: '5/d' }, ['a'], [])).toMatchObject({ ok: false });
    expect(checkNewKey({ ...key, expires: new Date(Date.now() - 1000) }, ['a'], [])).toMatchObject({ ok: false });
  });

  it('expire at an ISO time or a time from now', () => {
    const now = new Date('2026-11-25T12:00:00Z');
    expect(parseExpiry('30d', now)?.toISOString()).toBe('2026-12-25T12:00:00.000Z');
    expect(parseExpiry('12h', now)?.toISOString()).toBe('2026-11-26T00:00:00.000Z');
    expect(parseExpiry('2027-01-31T00:00Z', now)?.toISOString()).toBe('2027-01-31T00:00:00.000Z');
    expect(parseExpiry('2027-01-31', now)?.toISOString()).toBe('2027-01-31T00:00:00.000Z');
    expect(parseExpiry('soon', now)).toBeUndefined();
    expect(parseExpiry('2027-13-45', now)).toBeUndefined();
  });
});
