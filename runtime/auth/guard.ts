import type { BackendModule, RateLimit, Roles } from '../contract.js';
import { forbidden, HttpError } from '../errors.js';
import { type ApiKeys, presentedKey } from './api-key.js';
import type { CredentialCache } from './credential-cache.js';
import { CredentialChecker, type UserDatabase } from './credentials.js';
import type { Hashing } from './hashing.js';
import type { IssuerKeyRing } from './issuer/ring.js';
import type { JwtKey } from './jwt.js';
import type { LoginLimiter } from './limiter.js';
import type { Revocations } from './revocations.js';
import type { AuthScheme, Principal } from './scheme.js';
import { SCHEMES } from './schemes.js';
import { Sessions } from './sessions.js';
import { TokenIssuer } from './tokens.js';

/** What every backend of one server shares: the token key, revocations, the login limits, the credential cache, the hashing, outside issuers' keys. */
export interface SecurityServices {
  key: JwtKey | null;
  revocations: Revocations | undefined;
  limiter: LoginLimiter;
  cache: CredentialCache;
  hashing: Hashing;
  issuerKeys: IssuerKeyRing;
  /** API keys of every backend with `api_keys="on"` (docs/contract.md §10). */
  apiKeys: ApiKeys;
}

/**
 * Authentication and the role check for one backend (docs/contract.md §4):
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
  /** Sessions and refresh tokens, on a Bearer backend with `refresh_lifetime` (docs/contract.md §10). */
  readonly sessions: Sessions | null;

  constructor(
    readonly backend: BackendModule,
    db: UserDatabase,
    services: SecurityServices,
  ) {
    this.credentials = new CredentialChecker(backend, db, services.limiter, services.cache, services.hashing);
    this.tokens = services.key === null ? null : new TokenIssuer(backend, services.key);
    this.apiKeys = backend.apiKeys ? services.apiKeys : undefined;
    const refreshLifetime = backend.refreshLifetime;
    this.sessions =
      this.tokens !== null && refreshLifetime !== null ? new Sessions({ ...backend, refreshLifetime }, db, this.tokens, services.revocations) : null;
    const factory = backend.authScheme === null ? undefined : SCHEMES[backend.authScheme];
    this.scheme = factory
      ? factory({ backend, db, credentials: this.credentials, key: services.key, revocations: services.revocations, issuerKeys: services.issuerKeys })
      : null;
  }

  /** Returns `$uid`, or throws the 401/403 the contract asks for (429 after too many failed passwords). */
  async authenticate(header: string | undefined, roles: Roles, address: string): Promise<string> {
    return (await this.identify(header, roles, address)).userId;
  }

  /**
   * Who the caller is (having checked the role), or the 401/403 the contract asks for. `apiKey` is the
   * request's X-API-Key: on a backend with `api_keys="on"`, a key there or as a Bearer credential is the
   * caller's, checked by api-key.ts; a key's principal carries its id and its own rate limit.
   */
  async identify(header: string | undefined, roles: Roles, address: string, apiKey?: string): Promise<Principal & { keyId?: number; rate?: RateLimit | null }> {
    // The generator refuses a protected resource on a backend with no scheme; this is a guard.
    if (this.scheme === null) throw forbidden('no_scheme');
    const key = this.apiKeys === undefined ? undefined : presentedKey(header, apiKey);
    if (header === undefined && key === undefined) {
      if (this.backend.absentCredentialsStatus === 401)
        throw new HttpError(401, 'Credentials required', { 'WWW-Authenticate': this.scheme.challenge }, 'no_credentials');
      throw forbidden('no_credentials');
    }
    const principal = key !== undefined ? await this.apiKeys!.authenticate(this.backend, key) : await this.scheme.authenticate(header!, address);
    // Any one of the roles admits (docs/contract.md §8); '*' admits whoever authenticated.
    if (roles !== '*' && !roles.some((role) => principal.roles.includes(role))) throw forbidden('role_not_held');
    return principal;
  }
}
