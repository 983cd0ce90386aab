import type { BackendModule, RateLimit, Roles } from '../contract.js';
import { forbidden, HttpError } from '../errors.js';
import { readUserTenant } from '../tenants/user-tenant.js';
import type { IssuerKeyRing } from './issuer/ring.js';
import { type ApiKeys, presentedKey } from './keys/api-key.js';
import type { LoginLimiter } from './limits/limiter.js';
import type { CredentialCache } from './passwords/credential-cache.js';
import { CredentialChecker, type UserDatabase } from './passwords/credentials.js';
import type { Hashing } from './passwords/hashing.js';
import { type AuthScheme, type Principal, principalName } from './scheme.js';
import { SCHEMES } from './schemes.js';
import { RefreshTokens } from './sessions/refresh-tokens.js';
import { Sessions } from './sessions/sessions.js';
import type { JwtKey } from './tokens/jwt.js';
import type { Revocations } from './tokens/revocations.js';
import { TokenIssuer } from './tokens/tokens.js';
import { grantLimits } from './users/grants.js';

/** What every backend of one server shares: the token key, revocations, the login limits, the credential cache, the hashing, outside issuers' keys. */
export interface SecurityServices {
  key: JwtKey | null;
  revocations: Revocations | undefined;
  limiter: LoginLimiter;
  cache: CredentialCache;
  hashing: Hashing;
  issuerKeys: IssuerKeyRing;
  /** API keys of every backend with `api_keys="on"` (docs/internals/contract.md §10). */
  apiKeys: ApiKeys;
}

/**
 * Authentication and the role check for one backend (docs/internals/contract.md §4):
 * generated handlers call `authenticate(header, role)` with their role
 * hard-wired. The scheme (schemes.ts) says who the caller is; the guard
 * applies the rules every scheme shares: no header is 403 (or 401 with a
 * challenge, `absent_credentials`), a role not held is 403.
 */
export class Guard {
  readonly scheme: AuthScheme | null;
  readonly credentials: CredentialChecker;
  /** Issues this backend's tokens; null when the backend has no token key. */
  readonly tokens: TokenIssuer | null;
  /** The server's API keys, when this backend takes them. */
  private readonly apiKeys: ApiKeys | undefined;
  /** Whether a grant of the default tables may end now (revocations.ts), asked before a shape-B token reads the grants. */
  private readonly revocations: Revocations | undefined;
  /** Sessions and refresh tokens, on a Bearer backend with `refresh_lifetime` (docs/internals/contract.md §10). */
  readonly sessions: Sessions | null;

  constructor(
    readonly backend: BackendModule,
    private readonly db: UserDatabase,
    services: SecurityServices,
  ) {
    this.credentials = new CredentialChecker(backend, db, services.limiter, services.cache, services.hashing, services.revocations);
    this.tokens = services.key === null ? null : new TokenIssuer(backend, services.key);
    this.apiKeys = backend.apiKeys ? services.apiKeys : undefined;
    this.revocations = services.revocations;
    const refreshLifetime = backend.refreshLifetime;
    const key = services.key;
    this.sessions =
      key !== null && this.tokens !== null && refreshLifetime !== null
        ? new Sessions({ ...backend, refreshLifetime }, db, this.tokens, services.revocations, services.limiter, new RefreshTokens(key.all))
        : null;
    const factory = backend.authScheme === null ? undefined : SCHEMES[backend.authScheme];
    this.scheme = factory
      ? factory({ backend, db, credentials: this.credentials, key: services.key, revocations: services.revocations, issuerKeys: services.issuerKeys })
      : null;
  }

  /**
   * A token for a user who just proved a password (token shape A, or a token request's plug-in): a session's first
   * pair on a backend with sessions. On the default user tables, roles whose grant has ended are left out (none
   * left: 401, as for a user who holds no role), and the token, and its session, end no later than the first
   * temporary grant it carries (runtime/auth/users/grants.ts).
   */
  async issue(
    sub: string,
    aud: string | string[],
    ends?: ReadonlyMap<string, number | null>,
    tenant?: string,
  ): Promise<{ token: string; refreshToken?: string }> {
    if (this.tokens === null) throw new Error(`backend "${this.backend.name}" has no JWT key: set JWT_SECRET`);
    // A tenant backend's token carries its user's tenant (`ten`, docs/internals/contract.md §14): the one the password's
    // check read, else read now by `sub`, once per token, never per request.
    const ten = tenant ?? (await readUserTenant(this.db, this.backend, sub));
    let claims = aud;
    let endsBy: number | undefined;
    if (ends !== undefined) {
      // The auth query said already (credentials.ts): its rows hold no ended grant, and each one's end.
      const carried = (Array.isArray(aud) ? aud : [aud]).flatMap((role) => {
        const end = ends.get(role);
        return end === null || end === undefined ? [] : [end];
      });
      if (carried.length > 0) endsBy = Math.min(...carried);
    } else if (this.backend.defaultTables && this.revocations?.someGrantEnds !== false) {
      // A token request's own SQL (shape B) told nothing of ends: one read of the user's temporary grants, unless the
      // server's last poll found no grant that ends (revocations.ts says what that leaves open, and what closes it).
      const limits = await grantLimits(this.db, sub, Array.isArray(aud) ? aud : [aud]);
      if (limits.roles.length === 0) throw new HttpError(401, 'Invalid credentials', {}, 'unknown_user');
      claims = Array.isArray(aud) ? (limits.roles.length === 1 ? limits.roles[0]! : limits.roles) : limits.roles[0]!;
      endsBy = limits.endsBy;
    }
    if (this.sessions !== null) return this.sessions.begin(sub, claims, endsBy, ten);
    return { token: this.tokens.sign({ sub, aud: claims, ten, ...(endsBy === undefined ? {} : { expiresBy: endsBy }) }) };
  }

  /**
   * Who the caller is (having checked the role), or the 401/403 the contract asks for. `apiKey` is the
   * request's X-API-Key: on a backend with `api_keys="on"`, a key there or as a Bearer credential is the
   * caller's, checked by api-key.ts; a key's principal carries its id and its own rate limit.
   */
  async identify(header: string | undefined, roles: Roles, address: string, apiKey?: string): Promise<Principal & { keyId?: number; rate?: RateLimit | null }> {
    const key = this.apiKeys === undefined ? undefined : presentedKey(header, apiKey);
    return this.who(header, roles, address, key);
  }

  /**
   * Who the person calling is, for the doors that take a person's credentials only (docs/internals/contract.md §10): the
   * console and the session doors. A machine key stands in for its user on the routes its roles admit, never
   * for the user at these doors (it could create users, grant roles and make keys that never expire there), so
   * any key, wherever it travels and whether or not this backend takes keys, is refused before it is read.
   * `credential` says what the person proved themself with, for the console's history.
   */
  async identifyPerson(
    header: string | undefined,
    roles: Roles,
    address: string,
    apiKey: string | undefined,
  ): Promise<Principal & { credential: 'password' | 'token' }> {
    if (presentedKey(header, apiKey) !== undefined) {
      throw new HttpError(403, "An API key is not accepted here: use a person's own credentials", {}, 'api_key_refused');
    }
    const principal = await this.who(header, roles, address, undefined);
    // The scheme read the header: Basic carries a password, anything else a token (the backend's own or an issuer's).
    return { ...principal, credential: /^\s*basic\s/i.test(header ?? '') ? 'password' : 'token' };
  }

  private async who(
    header: string | undefined,
    roles: Roles,
    address: string,
    key: string | undefined,
  ): Promise<Principal & { keyId?: number; rate?: RateLimit | null }> {
    // The generator refuses a protected resource on a backend with no scheme; this is a guard.
    if (this.scheme === null) throw forbidden('no_scheme');
    if (header === undefined && key === undefined) {
      if (this.backend.absentCredentialsStatus === 401)
        throw new HttpError(401, 'Credentials required', { 'WWW-Authenticate': this.scheme.challenge }, 'no_credentials');
      throw forbidden('no_credentials');
    }
    const principal = key !== undefined ? await this.apiKeys!.authenticate(this.backend, key, address) : await this.scheme.authenticate(header!, address);
    return this.admit(principal, roles);
  }

  /**
   * The roles' check of `identify`, alone: for a caller this guard authenticated already in the same request (an
   * MCP request's caller, whose tool calls run routes: runtime/mcp/), so that its credentials are checked once.
   */
  admit<P extends Principal>(principal: P, roles: Roles): P {
    // Any one of the roles admits (docs/internals/contract.md §8); '*' admits whoever authenticated.
    if (roles !== '*' && !roles.some((role) => principal.roles.includes(role))) throw forbidden('role_not_held');
    return principal;
  }
}
