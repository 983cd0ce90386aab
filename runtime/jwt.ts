import { createSecretKey, randomUUID, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';

/**
 * HS256 tokens per contract §5. The secret is turned into a KeyObject once:
 * jsonwebtoken verifies about 40x faster with a KeyObject than with a string,
 * which it would otherwise re-import on every call.
 */
export const MIN_SECRET_BYTES = 32;

/**
 * The signing and verifying keys. JWT_SECRET is one secret, or, to rotate
 * keys, a JSON object of key ids to secrets: the first signs (its id goes in
 * the token's `kid`), all of them verify, so tokens signed with the previous
 * key stay valid until they expire.
 */
export class JwtKey {
  readonly signing: { kid: string | undefined; key: KeyObject };
  private readonly byKid = new Map<string, KeyObject>();

  constructor(secret: string) {
    const rotation = secret.trimStart().startsWith('{') ? parseKeys(secret) : undefined;
    if (rotation) {
      for (const [kid, value] of rotation) this.byKid.set(kid, keyOf(value, `JWT_SECRET key "${kid}"`));
      const [kid] = rotation[0]!;
      this.signing = { kid, key: this.byKid.get(kid)! };
    } else {
      this.signing = { kid: undefined, key: keyOf(secret, 'JWT_SECRET') };
    }
  }

  /** The key a token names: by its `kid` when keys rotate, else the one key (and then no `kid` is accepted). */
  verifying(kid: unknown): KeyObject | undefined {
    if (this.signing.kid === undefined) return kid === undefined ? this.signing.key : undefined;
    return typeof kid === 'string' ? this.byKid.get(kid) : undefined;
  }
}

function parseKeys(text: string): [string, string][] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error('JWT_SECRET starts with { but is not a JSON object of key ids to secrets');
  }
  const entries = typeof parsed === 'object' && parsed !== null ? Object.entries(parsed) : [];
  // JavaScript orders integer-like keys first, whatever the text says: the first entry would not be the newest.
  if (entries.some(([kid]) => /^[0-9]+$/.test(kid))) throw new Error('JWT_SECRET key ids must not be plain numbers (write "k1", not "1")');
  if (entries.length === 0 || entries.some(([, value]) => typeof value !== 'string')) {
    throw new Error('JWT_SECRET as JSON maps key ids to secrets: {"2026-11": "...", "2026-10": "..."}');
  }
  return entries as [string, string][];
}

function keyOf(secret: string, name: string): KeyObject {
  if (Buffer.byteLength(secret, 'utf8') < MIN_SECRET_BYTES) throw new Error(`${name} must be at least ${MIN_SECRET_BYTES} bytes long`);
  return createSecretKey(Buffer.from(secret, 'utf8'));
}

export interface TokenSettings {
  issuer: string;
  /** Lifetime in seconds. */
  lifetime: number;
  /** `s` per RFC 7519; `ms` as the original system sent. */
  iatUnit: 's' | 'ms';
}

export interface IssuedClaims {
  sub: string;
  aud: string | string[];
}

/** Signs a token; `iss`, `iat`, `exp` and `jti` are always the system's own. */
export function signToken(key: JwtKey, settings: TokenSettings, claims: IssuedClaims, now = Date.now()): string {
  const seconds = Math.floor(now / 1000);
  const payload = {
    sub: claims.sub,
    aud: claims.aud,
    iss: settings.issuer,
    iat: settings.iatUnit === 'ms' ? now : seconds,
    exp: seconds + settings.lifetime,
    jti: randomUUID(),
  };
  // jsonwebtoken keeps a payload iat as it is (it may be in milliseconds).
  const { kid, key: signing } = key.signing;
  return jwt.sign(payload, signing, kid === undefined ? { algorithm: 'HS256' } : { algorithm: 'HS256', keyid: kid });
}

/** Why a token was refused; the words go into error_description. */
export type TokenFailure = 'expired' | 'signature' | 'issuer' | 'audience' | 'malformed' | 'algorithm' | 'key' | 'revoked';

export class TokenRejected extends Error {
  constructor(readonly reason: TokenFailure, readonly description: string) {
    super(description);
    this.name = 'TokenRejected';
  }
}

export interface VerifiedToken {
  sub: string;
  aud: string[];
  /** Seconds since the epoch. */
  exp: number;
  /** Seconds since the epoch (a token issued in milliseconds is read as such), or undefined. */
  iat: number | undefined;
  jti: string | undefined;
}

/**
 * Strict verification: HS256 only (no `none`, no algorithm confusion), the
 * signature, a required and unexpired `exp`, the backend's `iss`, a string
 * `sub`, and an `aud` that is a string or an array of strings. Whether `aud`
 * names the resource's role is the caller's question: that is a 403, not a 401.
 */
export function verifyToken(key: JwtKey, issuer: string, token: string, clockSkew = 0): VerifiedToken {
  let payload: string | jwt.JwtPayload;
  try {
    const header = jwt.decode(token, { complete: true })?.header;
    if (!header) throw new TokenRejected('malformed', 'token is malformed');
    if (header.typ !== undefined && String(header.typ).toUpperCase() !== 'JWT') throw new TokenRejected('malformed', 'token type (typ) is not JWT');
    const verifying = key.verifying(header.kid);
    if (!verifying) throw new TokenRejected('key', 'token key (kid) is not known');
    // nbf is honoured, and exp and nbf allow the backend's clock skew (RFC 8725 §3.x leaves it to the verifier).
    payload = jwt.verify(token, verifying, { algorithms: ['HS256'], issuer, clockTolerance: clockSkew });
  } catch (error) {
    throw error instanceof TokenRejected ? error : rejectionOf(error);
  }
  if (typeof payload !== 'object' || payload === null) {
    throw new TokenRejected('malformed', 'token payload is not a JSON object');
  }
  if (typeof payload.exp !== 'number') throw new TokenRejected('malformed', 'token has no expiry (exp)');
  if (typeof payload.sub !== 'string' || payload.sub === '') {
    throw new TokenRejected('malformed', 'token has no subject (sub)');
  }
  const iat = typeof payload.iat === 'number' ? (payload.iat > 1e11 ? Math.floor(payload.iat / 1000) : payload.iat) : undefined;
  const jti = typeof payload.jti === 'string' ? payload.jti : undefined;
  const aud = payload.aud;
  if (typeof aud === 'string') return { sub: payload.sub, aud: [aud], exp: payload.exp, iat, jti };
  if (Array.isArray(aud) && aud.every((a) => typeof a === 'string')) return { sub: payload.sub, aud, exp: payload.exp, iat, jti };
  throw new TokenRejected('audience', 'token audience (aud) is missing or not a string');
}

function rejectionOf(error: unknown): TokenRejected {
  if (error instanceof jwt.TokenExpiredError) return new TokenRejected('expired', 'token expired');
  if (error instanceof jwt.NotBeforeError) return new TokenRejected('expired', 'token not yet valid');
  const message = error instanceof Error ? error.message : '';
  if (message === 'invalid signature') return new TokenRejected('signature', 'token signature is invalid');
  if (message.startsWith('jwt issuer invalid')) return new TokenRejected('issuer', 'token issuer is not accepted');
  if (message === 'invalid algorithm' || message === 'jwt signature is required') {
    return new TokenRejected('algorithm', 'token algorithm is not HS256');
  }
  return new TokenRejected('malformed', 'token is malformed');
}
