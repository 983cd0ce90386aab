import { createSecretKey, randomUUID, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';

/**
 * HS256 tokens per contract §5. The secret is turned into a KeyObject once:
 * jsonwebtoken verifies about 40x faster with a KeyObject than with a string,
 * which it would otherwise re-import on every call.
 */
export const MIN_SECRET_BYTES = 32;

export class JwtKey {
  readonly key: KeyObject;
  constructor(secret: string) {
    if (Buffer.byteLength(secret, 'utf8') < MIN_SECRET_BYTES) {
      throw new Error(`JWT_SECRET must be at least ${MIN_SECRET_BYTES} bytes long`);
    }
    this.key = createSecretKey(Buffer.from(secret, 'utf8'));
  }
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
  return jwt.sign(payload, key.key, { algorithm: 'HS256' });
}

/** Why a token was refused; the words go into error_description. */
export type TokenFailure = 'expired' | 'signature' | 'issuer' | 'audience' | 'malformed' | 'algorithm';

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
}

/**
 * Strict verification: HS256 only (no `none`, no algorithm confusion), the
 * signature, a required and unexpired `exp`, the backend's `iss`, a string
 * `sub`, and an `aud` that is a string or an array of strings. Whether `aud`
 * names the resource's role is the caller's question: that is a 403, not a 401.
 */
export function verifyToken(key: JwtKey, issuer: string, token: string): VerifiedToken {
  let payload: string | jwt.JwtPayload;
  try {
    payload = jwt.verify(token, key.key, { algorithms: ['HS256'], issuer });
  } catch (error) {
    throw rejectionOf(error);
  }
  if (typeof payload !== 'object' || payload === null) {
    throw new TokenRejected('malformed', 'token payload is not a JSON object');
  }
  if (typeof payload.exp !== 'number') throw new TokenRejected('malformed', 'token has no expiry (exp)');
  if (typeof payload.sub !== 'string' || payload.sub === '') {
    throw new TokenRejected('malformed', 'token has no subject (sub)');
  }
  const aud = payload.aud;
  if (typeof aud === 'string') return { sub: payload.sub, aud: [aud], exp: payload.exp };
  if (Array.isArray(aud) && aud.every((a) => typeof a === 'string')) return { sub: payload.sub, aud, exp: payload.exp };
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
