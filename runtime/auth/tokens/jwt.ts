import { createHmac, createSecretKey, type KeyObject, randomUUID, timingSafeEqual } from 'node:crypto';
import jwt from 'jsonwebtoken';

/**
 * HS256 tokens per docs/internals/contract.md §5. The secret is turned into a KeyObject once:
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
  /** The key that signs, its id, and the header of every token it signs, encoded once (signToken). */
  readonly signing: { kid: string | undefined; key: KeyObject; header: string };
  /** The one key, when keys do not rotate (then a token may name no `kid`). */
  readonly single: KeyObject | undefined;
  private readonly byKid = new Map<string, KeyObject>();

  constructor(secret: string) {
    const rotation = secret.trimStart().startsWith('{') ? parseKeys(secret) : undefined;
    if (rotation) {
      for (const [kid, value] of rotation) this.byKid.set(kid, keyOf(value, `JWT_SECRET key "${kid}"`));
      const [kid] = rotation[0]!;
      this.signing = { kid, key: this.byKid.get(kid)!, header: encodedHeader(kid) };
      this.single = undefined;
    } else {
      this.signing = { kid: undefined, key: keyOf(secret, 'JWT_SECRET'), header: encodedHeader(undefined) };
      this.single = this.signing.key;
    }
  }

  /** Every key, the signing one first: what keys derived from the server's (page cursors, runtime/lists/) are made from. */
  get all(): KeyObject[] {
    return this.single ? [this.single] : [...this.byKid.values()];
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

/** The header jsonwebtoken writes for HS256 (in its order: alg, typ, kid), base64url-encoded. */
function encodedHeader(kid: string | undefined): string {
  const header = kid === undefined ? { alg: 'HS256', typ: 'JWT' } : { alg: 'HS256', typ: 'JWT', kid };
  return Buffer.from(JSON.stringify(header), 'utf8').toString('base64url');
}

function keyOf(secret: string, name: string): KeyObject {
  if (Buffer.byteLength(secret, 'utf8') < MIN_SECRET_BYTES) throw new Error(`${name} must be at least ${MIN_SECRET_BYTES} bytes long`);
  return createSecretKey(Buffer.from(secret, 'utf8'));
}

export interface TokenSettings {
  issuer: string;
  /** The backend that signs: its name goes in the `backend` claim, and only that backend accepts the token. */
  backend: string;
  /** Lifetime in seconds. */
  lifetime: number;
  /** `s` per RFC 7519; `ms` as the original system sent. */
  iatUnit: 's' | 'ms';
}

export interface IssuedClaims {
  sub: string;
  aud: string | string[];
  /** The session the token belongs to (docs/internals/contract.md §10), when the backend has sessions. */
  sid?: string;
  /** No later than this (seconds since the epoch): a session's end. */
  expiresBy?: number;
  /** On a tenant backend, the user's tenant as read at issue (docs/internals/contract.md §14): the claim `ten`. */
  ten?: string | undefined;
}

/**
 * Signs a token; `iss`, `backend`, `iat`, `exp` and `jti` are always the system's own.
 * The same bytes as jsonwebtoken's sign (a unit test holds it to them), without
 * its per-call work: it validates a payload and options built right here, and
 * encodes a header that is the same for every token of a key. What a token
 * must prove is checked where it is received, by jsonwebtoken's verify.
 */
export function signToken(key: JwtKey, settings: TokenSettings, claims: IssuedClaims, now = Date.now()): string {
  const seconds = Math.floor(now / 1000);
  const payload = {
    sub: claims.sub,
    aud: claims.aud,
    iss: settings.issuer,
    backend: settings.backend,
    iat: settings.iatUnit === 'ms' ? now : seconds,
    exp: claims.expiresBy === undefined ? seconds + settings.lifetime : Math.min(seconds + settings.lifetime, claims.expiresBy),
    jti: randomUUID(),
    ...(claims.sid === undefined ? {} : { sid: claims.sid }),
    ...(claims.ten === undefined ? {} : { ten: claims.ten }),
  };
  const { header, key: signing } = key.signing;
  const input = `${header}.${Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url')}`;
  return `${input}.${createHmac('sha256', signing).update(input).digest('base64url')}`;
}

/** Why a token was refused; the words go into error_description. */
export type TokenFailure = 'expired' | 'signature' | 'issuer' | 'backend' | 'audience' | 'malformed' | 'algorithm' | 'key' | 'revoked';

export class TokenRejected extends Error {
  constructor(
    readonly reason: TokenFailure,
    readonly description: string,
    /**
     * Whether this token is refused for good, whenever it comes again: its signature, its key, its algorithm,
     * its issuer or backend, a passed expiry. Not a token that is not yet valid (nbf, an iat ahead of the clock,
     * an exp further away than the lifetime): time may make it good.
     */
    readonly lasting = false,
  ) {
    // A verdict on a client's token, turned into a 401 at once: no stack (see HttpError).
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(description);
    Error.stackTraceLimit = limit;
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
  /** The session it belongs to, when issued with one. */
  sid: string | undefined;
  /** The user's tenant signed at issue (`ten`, docs/internals/contract.md §14); undefined when it carries none. */
  ten: string | undefined;
}

export interface VerifyOptions {
  /** The backend's `iss`. */
  issuer: string;
  /** The backend's name, which the token's `backend` claim must be. */
  backend: string;
  /** Seconds of clock difference allowed for exp, nbf and iat. */
  clockSkew: number;
  /** The backend's token lifetime in seconds: no token it accepts expires later than that from now. */
  lifetime: number;
  /** Whether `sub` is the canonical text of a user id (the backend's uid type). */
  isUid: (sub: string) => boolean;
}

/** Seconds since the epoch that a time claim may hold: year 2000 to year 3000. */
const EARLIEST = 946_684_800;
const LATEST = 32_503_680_000;

/**
 * Strict verification (RFC 7515, RFC 8725): HS256 only (no `none`, no
 * algorithm confusion), no `crit` extension (none is understood, so any is
 * refused), the signature, a required and unexpired `exp`, `exp`, `iat` and
 * `nbf` whole numbers in a sane range, an `iat` not in the future (it would
 * escape a revocation of the user), `nbf` honoured, the backend's `iss`, the
 * backend's name in `backend` (two backends never take each other's tokens,
 * nor escape each other's revocations, whatever their issuers), a `sub` that
 * is exactly a user id's canonical text (so that the database never converts
 * "1abc" into user 1), and an `aud` that is a string or an array of strings. Whether `aud` names the resource's role is the caller's question:
 * that is a 403, not a 401.
 */
export function verifyToken(key: JwtKey, token: string, options: VerifyOptions): VerifiedToken {
  let payload: string | jwt.JwtPayload;
  try {
    // With one key the token is verified at once and its header read from the result: a forged token costs
    // one decoding, not two. With several, the header must first say which key (kid) signed it.
    let verifying = key.single;
    if (verifying !== undefined && forged(token, verifying)) throw new TokenRejected('signature', 'token signature is invalid', true);
    if (verifying === undefined) {
      const named = jwt.decode(token, { complete: true })?.header;
      if (!named) throw new TokenRejected('malformed', 'token is malformed');
      verifying = key.verifying(named.kid);
      if (!verifying) throw new TokenRejected('key', 'token key (kid) is not known', true);
    }
    // nbf is honoured, and exp and nbf allow the backend's clock skew (RFC 8725 leaves it to the verifier).
    const verified = jwt.verify(token, verifying, { algorithms: ['HS256'], issuer: options.issuer, clockTolerance: options.clockSkew, complete: true });
    const header = verified.header as jwt.JwtHeader & { crit?: unknown };
    if (header.crit !== undefined) throw new TokenRejected('malformed', 'token names critical extensions (crit)');
    if (header.typ !== undefined && String(header.typ).toUpperCase() !== 'JWT') throw new TokenRejected('malformed', 'token type (typ) is not JWT');
    if (key.verifying(header.kid) !== verifying) throw new TokenRejected('key', 'token key (kid) is not known', true);
    payload = verified.payload;
  } catch (error) {
    throw error instanceof TokenRejected ? error : rejectionOf(error);
  }
  if (typeof payload !== 'object' || payload === null) {
    throw new TokenRejected('malformed', 'token payload is not a JSON object');
  }
  // Every token xmlrest signs names its backend: one without the claim is from before it (an hour at most) or not ours.
  if (payload.backend !== options.backend) {
    throw new TokenRejected('backend', payload.backend === undefined ? 'token names no backend' : 'token was issued for another backend', true);
  }
  const now = Date.now() / 1000;
  const exp = payload.exp;
  if (exp === undefined) throw new TokenRejected('malformed', 'token has no expiry (exp)');
  if (!isTime(exp)) throw new TokenRejected('malformed', 'token expiry (exp) is not a whole number of seconds');
  if (exp > now + options.lifetime + options.clockSkew) throw new TokenRejected('malformed', 'token expiry (exp) is further away than the token lifetime');
  if (payload.nbf !== undefined && !isTime(payload.nbf)) throw new TokenRejected('malformed', 'token start (nbf) is not a whole number of seconds');
  let iat: number | undefined;
  if (payload.iat !== undefined) {
    // Tokens issued with iat_unit="ms" carry milliseconds.
    const raw: unknown = payload.iat;
    const seconds = typeof raw === 'number' && raw > 1e11 ? raw / 1000 : raw;
    if (typeof seconds !== 'number' || !Number.isSafeInteger(raw) || seconds < EARLIEST || seconds > LATEST) {
      throw new TokenRejected('malformed', 'token issue time (iat) is not a whole number');
    }
    if (seconds > now + options.clockSkew) throw new TokenRejected('malformed', 'token issue time (iat) is in the future');
    iat = Math.floor(seconds);
  }
  if (typeof payload.sub !== 'string' || payload.sub === '') throw new TokenRejected('malformed', 'token has no subject (sub)');
  if (!options.isUid(payload.sub)) throw new TokenRejected('malformed', 'token subject (sub) is not a user id');
  const jti = typeof payload.jti === 'string' ? payload.jti : undefined;
  const sid = typeof payload.sid === 'string' ? payload.sid : undefined;
  const ten = typeof payload.ten === 'string' ? payload.ten : undefined;
  const aud = payload.aud;
  if (typeof aud === 'string') return { sub: payload.sub, aud: [aud], exp, iat, jti, sid, ten };
  if (Array.isArray(aud) && aud.every((a) => typeof a === 'string')) return { sub: payload.sub, aud, exp, iat, jti, sid, ten };
  throw new TokenRejected('audience', 'token audience (aud) is missing or not a string');
}

/**
 * Whether an HS256 token's signature is certainly not the key's: a flood of
 * forged tokens is refused for the price of one HMAC, before jsonwebtoken
 * decodes their header and payload. It only ever refuses what jsonwebtoken
 * would refuse too (a signature whose bytes differ cannot have the canonical
 * text it compares); anything else (another alg, a malformed token) goes on to
 * jsonwebtoken, which stays the verifier of record and names the failure.
 */
function forged(token: string, key: KeyObject): boolean {
  const first = token.indexOf('.');
  const second = token.indexOf('.', first + 1);
  if (first < 0 || second < 0 || token.indexOf('.', second + 1) >= 0) return false;
  let header: { alg?: unknown } | null;
  try {
    header = JSON.parse(Buffer.from(token.slice(0, first), 'base64url').toString('utf8')) as { alg?: unknown } | null;
  } catch {
    return false;
  }
  if (header?.alg !== 'HS256') return false;
  const expected = createHmac('sha256', key).update(token.slice(0, second)).digest();
  const given = Buffer.from(token.slice(second + 1), 'base64url');
  return given.length !== expected.length || !timingSafeEqual(given, expected);
}

/** A time claim: whole seconds since the epoch, between the years 2000 and 3000. */
function isTime(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= EARLIEST && value <= LATEST;
}

function rejectionOf(error: unknown): TokenRejected {
  if (error instanceof jwt.TokenExpiredError) return new TokenRejected('expired', 'token expired', true);
  if (error instanceof jwt.NotBeforeError) return new TokenRejected('expired', 'token not yet valid');
  const message = error instanceof Error ? error.message : '';
  if (message === 'invalid signature') return new TokenRejected('signature', 'token signature is invalid', true);
  if (message.startsWith('jwt issuer invalid')) return new TokenRejected('issuer', 'token issuer is not accepted', true);
  if (message === 'invalid algorithm' || message === 'jwt signature is required') {
    return new TokenRejected('algorithm', 'token algorithm is not HS256', true);
  }
  return new TokenRejected('malformed', 'token is malformed');
}
