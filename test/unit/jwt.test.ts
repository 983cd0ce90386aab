import jwt from 'jsonwebtoken';
import { describe, expect, it } from 'vitest';
import { JwtKey, signToken, TokenRejected, verifyToken } from '../../runtime/auth/tokens/jwt.js';

const SECRET = 'unit-secret-0123456789-0123456789-abcdef';

/**
 * signToken writes its tokens itself (the header encoded once per key): they must be the very bytes
 * jsonwebtoken's sign makes of the same payload with the same key, and pass jsonwebtoken's verify.
 */
describe('signToken', () => {
  const cases = [
    { name: 'one key, one role', secret: SECRET, claims: { sub: '42', aud: 'member' }, iatUnit: 's' as const },
    { name: 'one key, several roles in ms', secret: SECRET, claims: { sub: '7', aud: ['member', 'reader'] }, iatUnit: 'ms' as const },
    {
      name: 'rotating keys (kid), a role name beyond ASCII',
      secret: JSON.stringify({ 'k-2026-11': SECRET, 'k-2026-10': `${SECRET}-old` }),
      claims: { sub: '0f8fad5b-d9cb-469f-a165-70867728950e', aud: 'rédacteur "chef" ✓' },
      iatUnit: 's' as const,
    },
  ];

  for (const { name, secret, claims, iatUnit } of cases) {
    it(`writes jsonwebtoken's bytes: ${name}`, () => {
      const key = new JwtKey(secret);
      const token = signToken(key, { issuer: 'api', backend: 'shop', lifetime: 3600, iatUnit }, claims);
      const { header, payload } = jwt.decode(token, { complete: true }) as jwt.Jwt;
      const { kid, key: signing } = key.signing;
      // The same payload (its jti and iat kept), signed by the library.
      const expected = jwt.sign(payload as jwt.JwtPayload, signing, kid === undefined ? { algorithm: 'HS256' } : { algorithm: 'HS256', keyid: kid });
      expect(token).toBe(expected);
      expect(header).toEqual(kid === undefined ? { alg: 'HS256', typ: 'JWT' } : { alg: 'HS256', typ: 'JWT', kid });
      expect(payload).toMatchObject({ ...claims, iss: 'api', backend: 'shop' });
      const verified = verifyToken(key, token, { issuer: 'api', backend: 'shop', clockSkew: 0, lifetime: 3600, isUid: () => true });
      expect(verified.sub).toBe(claims.sub);
      expect(verified.aud).toEqual([claims.aud].flat());
    });
  }

  it('signs with the key that signs: another key refuses the token', () => {
    const token = signToken(new JwtKey(SECRET), { issuer: 'api', backend: 'shop', lifetime: 60, iatUnit: 's' }, { sub: '1', aud: 'member' });
    expect(() => jwt.verify(token, `${SECRET}x`, { algorithms: ['HS256'] })).toThrow('invalid signature');
  });
});

/** A token is bound to the backend that signed it, whatever the issuers say (two backends may share one). */
describe('the backend claim', () => {
  const key = new JwtKey(SECRET);
  const verify = (token: string, backend: string) => verifyToken(key, token, { issuer: 'api', backend, clockSkew: 0, lifetime: 3600, isUid: () => true });
  const refusal = (token: string, backend: string) => {
    try {
      verify(token, backend);
    } catch (error) {
      if (error instanceof TokenRejected) return { reason: error.reason, description: error.description, lasting: error.lasting };
      throw error;
    }
    return undefined;
  };

  it('is accepted by its own backend only, and refused for good by another of the same issuer', () => {
    const token = signToken(key, { issuer: 'api', backend: 'shop', lifetime: 3600, iatUnit: 's' }, { sub: '1', aud: 'member' });
    expect(verify(token, 'shop').sub).toBe('1');
    expect(refusal(token, 'staff')).toEqual({ reason: 'backend', description: 'token was issued for another backend', lasting: true });
  });

  it('is required: a token without it, or with one that is not a name, is refused', () => {
    const now = Math.floor(Date.now() / 1000);
    const payload = { sub: '1', aud: 'member', iss: 'api', iat: now, exp: now + 600 };
    const signed = (extra: object) => jwt.sign({ ...payload, ...extra }, key.signing.key, { algorithm: 'HS256' });
    expect(refusal(signed({}), 'shop')).toEqual({ reason: 'backend', description: 'token names no backend', lasting: true });
    for (const backend of [['shop'], { name: 'shop' }, 1, null, 'SHOP', 'shop ']) {
      expect(refusal(signed({ backend }), 'shop')?.reason, JSON.stringify(backend)).toBe('backend');
    }
    expect(verify(signed({ backend: 'shop' }), 'shop').sub).toBe('1');
  });
});
