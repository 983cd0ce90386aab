import { hash } from 'node:crypto';
import { HttpError } from '../errors.js';
import { parseAuthorization } from './header.js';
import { OutsideIssuers } from './issuer/index.js';
import { type AuthScheme, isCanonicalUid, type Principal, type SchemeFactory } from './scheme.js';
import { type TokenFailure, TokenRejected, type VerifiedToken, verifyToken } from './tokens/jwt.js';

/** The log's reason code for each way a token fails (docs/internals/contract.md §7). */
const REASONS: Record<TokenFailure, string> = {
  expired: 'expired',
  signature: 'bad_signature',
  issuer: 'wrong_issuer',
  backend: 'wrong_backend',
  audience: 'wrong_audience',
  malformed: 'malformed',
  algorithm: 'bad_algorithm',
  key: 'unknown_key',
  revoked: 'revoked',
};

/** How many verified tokens a backend remembers, and how many tokens it refused for good. */
const VERIFIED_TOKENS = 10_000;
const REFUSED_TOKENS = 10_000;

/**
 * Bearer tokens (RFC 6750; HS256 JWTs, docs/internals/contract.md §4, §5): `Bearer
 * <jwt>`, or the bare token the seed's examples send. The principal is the
 * token's `sub` and every role in its `aud`. A token whose `iss` is one of
 * the backend's outside issuers (§9) is theirs to verify (issuer/).
 */
export const bearerScheme: SchemeFactory = ({ backend, db, key, revocations, issuerKeys }): AuthScheme => {
  if (key === null) throw new Error(`backend "${backend.name}" uses Bearer tokens: set JWT_SECRET`);
  const challenge = `Bearer realm="${backend.name}"`;
  // The description is one of jwt.ts's fixed phrases (it never echoes the token), so each answer's message
  // and challenge are made once, not on every refusal of a flood.
  const answers = new Map<string, { message: string; headers: Record<string, string> }>();
  const invalid = (description: string, reason: string) => {
    let answer = answers.get(description);
    if (answer === undefined) {
      answer = {
        message: `Invalid token: ${description}`,
        headers: { 'WWW-Authenticate': `${challenge}, error="invalid_token", error_description="${description}"` },
      };
      answers.set(description, answer);
    }
    return new HttpError(401, answer.message, answer.headers, reason);
  };
  const options = {
    issuer: backend.issuer,
    backend: backend.name,
    clockSkew: backend.clockSkew,
    lifetime: backend.tokenLifetime,
    isUid: (sub: string) => isCanonicalUid(backend.uidType, sub),
  };

  /**
   * Clients send the same token on every call, and checking its signature and
   * parsing it again is most of a protected GET's cost: verified tokens are
   * remembered (bounded, the oldest first), keyed by a digest of the whole
   * token, so that a token differing in any byte is verified afresh and a long
   * one costs no more to remember. A remembered token is still refused once
   * its `exp` has passed, and when revoked: revocations are checked on every use.
   * Tokens refused for good (jwt.ts: a bad signature, a passed expiry, an
   * unknown key, ...) are remembered as well, apart, so that a client retrying
   * a dead token, or a flood of one forged token, costs a digest and a lookup
   * rather than an HMAC each time; a token that time may make good (nbf) is
   * never remembered as refused. Each map is bounded on its own, so refused
   * tokens never push out verified ones.
   */
  const verified = new Map<string, VerifiedToken>();
  const refused = new Map<string, TokenRejected>();
  const unlessRevoked = (token: VerifiedToken) => {
    if (revocations?.isRevoked(backend.name, token, backend.defaultTables)) throw invalid('token revoked', 'revoked');
    return token;
  };
  /** One of the backend's own tokens verified before, still unexpired; revocations are checked on every use. */
  const recall = (cacheKey: string): VerifiedToken | undefined => {
    const known = verified.get(cacheKey);
    if (known === undefined) return undefined;
    if ((known.exp + backend.clockSkew) * 1000 > Date.now()) return unlessRevoked(known);
    verified.delete(cacheKey);
    return undefined;
  };
  const verify = (token: string, cacheKey: string): VerifiedToken => {
    const refusal = refused.get(cacheKey);
    if (refusal !== undefined) throw invalid(refusal.description, REASONS[refusal.reason]);
    let fresh: VerifiedToken;
    try {
      fresh = verifyToken(key, token, options);
    } catch (error) {
      if (!(error instanceof TokenRejected)) throw error;
      if (error.lasting) remember(refused, REFUSED_TOKENS, cacheKey, error);
      throw invalid(error.description, REASONS[error.reason]);
    }
    unlessRevoked(fresh);
    remember(verified, VERIFIED_TOKENS, cacheKey, fresh);
    return fresh;
  };

  const outside = backend.issuers.length > 0 ? new OutsideIssuers(backend, db, issuerKeys, invalid) : undefined;

  return {
    challenge,
    async authenticate(header: string): Promise<Principal> {
      const parsed = parseAuthorization(header);
      if (parsed?.scheme !== 'bearer') throw invalid('token is malformed or not a Bearer token', parsed ? 'wrong_scheme' : 'malformed');
      // One part, so no framing (keys.ts) is needed; the one-shot digest allocates nothing on the way.
      const cacheKey = hash('sha256', parsed.token, 'base64url');
      // The backend's own tokens remembered come first: beside outside issuers they cost no more than before.
      const own = recall(cacheKey);
      if (own !== undefined) return ownPrincipal(own);
      const fromOutside = outside?.authenticate(parsed.token, cacheKey);
      if (fromOutside !== undefined) return fromOutside;
      return ownPrincipal(verify(parsed.token, cacheKey));
    },
  };
};

/**
 * The principal of one of the backend's own tokens: its tenant is the `ten` it was signed with (docs/internals/contract.md
 * §14), read at issue, so that no request with a token reads it; a token without one has none (403 `no_tenant` at a
 * tenant backend's route, scope.ts).
 */
function ownPrincipal(token: VerifiedToken): Principal {
  const principal: Principal = { userId: token.sub, roles: token.aud, sessionId: token.sid };
  if (token.ten !== undefined) principal.tenant = token.ten;
  return principal;
}

/** Adds an entry to a bounded map, dropping the oldest when it is full. */
function remember<T>(map: Map<string, T>, limit: number, key: string, value: T): void {
  if (map.size >= limit) map.delete(map.keys().next().value!);
  map.set(key, value);
}
