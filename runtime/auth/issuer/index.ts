import type { errors as JoseErrors, JWTPayload } from 'jose';
import type { BackendModule, IssuerSettings } from '../../contract.js';
import type { Queryable } from '../../db/index.js';
import { forbidden, type HttpError } from '../../errors.js';
import type { Principal } from '../scheme.js';
import { rolesOf, tenantOf, userIdOf } from './claims.js';
import { jose } from './jose.js';
import type { IssuerKeys } from './keys.js';
import type { IssuerKeyRing } from './ring.js';

export { DEFAULT_KEY_TIMINGS, type KeyTimings } from './keys.js';
export { IssuerKeyRing } from './ring.js';

/**
 * Access tokens of outside issuers (docs/internals/contract.md §9), beside a Bearer
 * backend's own: the bearer scheme hands over every token whose `iss` is one
 * of the backend's `Issuer`s, and gets its principal or a refusal. jose is
 * the verifier (RFC 8725): the algorithm must be one the configuration allows
 * and the key's type and curve fit, the key is found by `kid` in the
 * issuer's own set (keys.ts), and the token's `jku`, `x5u`, `jwk` and `x5c`
 * are never read; `exp` is required, `nbf` and `iat` honoured within
 * `clock_skew`, the audience one of the configured ones.
 */

/** How many verified tokens, and tokens refused for good, a backend remembers of its outside issuers. */
const REMEMBERED = 10_000;
/** A token mapped to a local user by a UserQuery is asked about again after this long: the local user may go. */
const USER_QUERY_MS = 60_000;

type Refuse = (description: string, reason: string) => HttpError;

interface OutsideIssuer {
  settings: IssuerSettings;
  keys: IssuerKeys;
}

/** A verdict remembered under one generation of an issuer's keys (a change of the set forgets it), or under none. */
interface Remembered<T> {
  value: T;
  until: number;
  keys: IssuerKeys | undefined;
  generation: number;
}

export class OutsideIssuers {
  private readonly byIss = new Map<string, OutsideIssuer>();
  private readonly verified = new Map<string, Remembered<Principal>>();
  private readonly refused = new Map<string, Remembered<HttpError>>();

  constructor(
    private readonly backend: BackendModule,
    private readonly db: Queryable,
    ring: IssuerKeyRing,
    private readonly refuse: Refuse,
  ) {
    for (const settings of backend.issuers) this.byIss.set(settings.iss, { settings, keys: ring.keysOf(settings) });
  }

  /**
   * Undefined when the token names none of these issuers (it is the backend's own, or nobody's); else who
   * sent it, or the refusal: 401, 403 for an unknown user, 503 while the issuer's keys cannot be had.
   * `digest` identifies the whole token.
   */
  authenticate(token: string, digest: string): Promise<Principal> | Principal | undefined {
    const now = Date.now();
    const known = recall(this.verified, digest, now);
    if (known !== undefined) {
      // Remembered, but only while its issuer's keys may serve: past the stale window of an outage, a 503.
      known.keys?.check(now);
      return known.value;
    }
    const refusal = recall(this.refused, digest, now);
    if (refusal !== undefined) throw refusal.value;
    const iss = issuerOf(token);
    // Unreadable, or the backend's own: its own verifier says what is wrong, or right, with it.
    if (iss === undefined || iss === this.backend.issuer) return undefined;
    const issuer = this.byIss.get(iss);
    if (issuer === undefined) {
      const refused = this.refuse('token issuer is not accepted', 'wrong_issuer');
      remember(this.refused, digest, { value: refused, until: Number.POSITIVE_INFINITY, keys: undefined, generation: 0 });
      throw refused;
    }
    return this.verify(issuer, token, digest);
  }

  private async verify(issuer: OutsideIssuer, token: string, digest: string): Promise<Principal> {
    const { settings, keys } = issuer;
    const { jwtVerify, errors } = await jose();
    let payload: JWTPayload;
    let generation: number;
    for (let attempt = 0; ; attempt++) {
      const resolve = await keys.current();
      generation = keys.generation;
      try {
        ({ payload } = await jwtVerify(token, resolve, {
          issuer: settings.iss,
          audience: settings.audience as string[],
          algorithms: settings.algorithms as string[],
          clockTolerance: settings.clockSkew,
          requiredClaims: ['exp'],
        }));
        // The set changed while the token was being verified (a refresh landed): verified with keys that may be
        // gone, it is verified again with the new ones.
        if (keys.generation !== generation && attempt < 2) continue;
        break;
      } catch (error) {
        // A key the set does not hold may be one the provider has just added: fetch the set again, at most
        // once per refetch interval whatever the number of unknown kids, and try once more.
        if (error instanceof errors.JWKSNoMatchingKey && attempt === 0 && (await keys.refetch())) continue;
        const [description, reason, lasting] = refusalOf(error, errors);
        const refusal = this.refuse(description, reason);
        if (lasting) remember(this.refused, digest, { value: refusal, until: Number.POSITIVE_INFINITY, keys, generation });
        throw refusal;
      }
    }
    const now = Date.now();
    // jose checks iat only against a maximum age: a token issued in the future would outlive a revocation at the provider.
    if (typeof payload.iat === 'number' && payload.iat > now / 1000 + settings.clockSkew)
      throw this.refuse('token issue time (iat) is in the future', 'malformed');
    // Bound to its issuer: a same-named user of another issuer, or of the backend, is someone else (scheme.ts).
    const principal: Principal = {
      userId: await this.userOf(settings, payload),
      roles: rolesOf(payload, settings, this.backend.consoleRole),
      issuer: settings.iss,
    };
    // Read from the token as its roles are (docs/internals/contract.md §14): no query per request.
    const tenant = tenantOf(payload, settings, this.backend);
    if (tenant !== undefined) principal.tenant = tenant;
    const until = Math.min((payload.exp! + settings.clockSkew) * 1000, settings.userQuery === null ? Number.POSITIVE_INFINITY : now + USER_QUERY_MS);
    // Under the generation it was verified with: if the set has changed since, the next use verifies it afresh.
    remember(this.verified, digest, { value: principal, until, keys, generation });
    return principal;
  }

  /** `$uid`: the `user` claim, or the local id a UserQuery finds for the claims; 403 `unknown_user` when there is none. */
  private async userOf(settings: IssuerSettings, payload: JWTPayload): Promise<string> {
    const uid = await userIdOf(payload, settings, this.backend.uidType, (sql, values) => this.db.select(sql, values));
    if (uid === undefined) throw forbidden('unknown_user');
    return uid;
  }
}

/** The `iss` a token names, read from its unverified payload only to choose whose keys verify it; undefined when unreadable. */
function issuerOf(token: string): string | undefined {
  const first = token.indexOf('.');
  const second = token.indexOf('.', first + 1);
  if (first < 0 || second < 0) return undefined;
  try {
    const payload = JSON.parse(Buffer.from(token.slice(first + 1, second), 'base64url').toString('utf8')) as { iss?: unknown } | null;
    return typeof payload?.iss === 'string' ? payload.iss : undefined;
  } catch {
    return undefined;
  }
}

/** What to tell the client, the log's reason, and whether the token is refused for good (under these keys). */
function refusalOf(error: unknown, errors: typeof JoseErrors): [string, string, boolean] {
  if (error instanceof errors.JWTExpired) return ['token expired', 'expired', true];
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'aud') return ['token audience (aud) is not accepted', 'wrong_audience', true];
    if (error.claim === 'iss') return ['token issuer is not accepted', 'wrong_issuer', true];
    if (error.claim === 'nbf' && error.reason === 'check_failed') return ['token not yet valid', 'expired', false];
    if (error.claim === 'exp') return ['token has no expiry (exp)', 'malformed', true];
    return [`token claim ${error.claim} is malformed`, 'malformed', true];
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) return ['token signature is invalid', 'bad_signature', true];
  if (error instanceof errors.JOSEAlgNotAllowed) return ['token algorithm is not accepted', 'bad_algorithm', true];
  if (error instanceof errors.JWKSNoMatchingKey) return ['token key (kid) is not known', 'unknown_kid', false];
  if (error instanceof errors.JWKSMultipleMatchingKeys) return ['token names no key (kid) and the issuer has several', 'unknown_kid', true];
  if (error instanceof errors.JOSENotSupported) return ['token algorithm is not accepted', 'bad_algorithm', true];
  if (error instanceof errors.JOSEError) return ['token is malformed', 'malformed', true];
  // jose's TypeError for a key it will not use (an RSA key under 2048 bits): the issuer's fault, but the token cannot pass.
  return ['token key is not usable', 'bad_signature', false];
}

function recall<T>(map: Map<string, Remembered<T>>, digest: string, now: number): Remembered<T> | undefined {
  const entry = map.get(digest);
  if (entry === undefined) return undefined;
  if (now < entry.until && (entry.keys === undefined || entry.generation === entry.keys.generation)) return entry;
  map.delete(digest);
  return undefined;
}

function remember<T>(map: Map<string, Remembered<T>>, digest: string, entry: Remembered<T>): void {
  if (map.size >= REMEMBERED) map.delete(map.keys().next().value!);
  map.set(digest, entry);
}
