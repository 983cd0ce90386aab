import type { WebhookSettings } from './events.js';
import type { IssuerSettings } from './issuer.js';
import type { BatchSettings } from './safe-writes.js';
import type { TenantSettings } from './tenant.js';

/** A query the runtime runs with `$user`/`$pass` bound from the caller's credentials. */
export interface AuthQuery {
  sql: string;
  /** What binds to each `?`, in order. */
  binds: readonly ('user' | 'pass')[];
  /** The column of the stored password, which the server verifies; null when the SQL compares $pass itself. */
  passwordColumn: string | null;
}

/** Live sessions per user and backend when backend.xml sets no `max_sessions` (docs/internals/contract.md §10). */
export const DEFAULT_MAX_SESSIONS = 50;

/** The authentication schemes a backend may name in `auth_scheme` (each one a module under runtime/auth/). */
export const AUTH_SCHEMES = ['Basic', 'Bearer'] as const;

/**
 * The console role of a backend whose backend.xml names none: a role no application means anything by, so
 * that holding an application role (`admin`) never opens the console by accident (docs/internals/contract.md §6).
 */
export const DEFAULT_CONSOLE_ROLE = 'xmlrest-operator';
export type AuthSchemeName = (typeof AUTH_SCHEMES)[number];

/** A backend's settings (backend.xml), as the generator reads them and the runtime serves them. */
export interface BackendSettings {
  name: string;
  authScheme: AuthSchemeName | null;
  /** Basic: returns user_id, role_name. Bearer: returns sub, aud. */
  authQuery: AuthQuery | null;
  /** Whether credentials are checked against the default user tables (no custom AuthQuery). */
  defaultTables: boolean;
  /**
   * What a user id is: `integer` (the default tables') or `text`. A token's `sub` must be exactly the
   * canonical text of one, so that the database never converts `"1abc"` into user 1.
   */
  uidType: 'integer' | 'text';
  tokenLifetime: number;
  /** Seconds of clock difference allowed when checking exp and nbf. */
  clockSkew: number;
  /** Replace a plain-text password with its hash on the next successful login (default tables only). */
  rehashPlaintext: boolean;
  /** How long a successful password check is remembered, in seconds; 0 never. */
  credentialCacheSeconds: number;
  issuer: string;
  iatUnit: 's' | 'ms';
  /** The role of the backend's console operators (DEFAULT_CONSOLE_ROLE unless backend.xml names one). */
  consoleRole: string;
  /** Status for a protected call with no Authorization header: the seed's 403, or 401 with a challenge. */
  absentCredentialsStatus: 403 | 401;
  /** Identity providers whose tokens a Bearer backend accepts beside its own (docs/internals/contract.md §9). */
  issuers: readonly IssuerSettings[];
  /** Whether callers may present API keys (`api_keys="on"`, docs/internals/contract.md §10). */
  apiKeys: boolean;
  /**
   * Sessions (docs/internals/contract.md §10): seconds a refresh token may go unused before its session ends
   * (`refresh_lifetime`), or null when the backend issues no refresh tokens.
   */
  refreshLifetime: number | null;
  /** Seconds a session lasts at most, however often refreshed (`session_lifetime`, default 30 days). */
  sessionLifetime: number;
  /**
   * Live sessions a user may hold on the backend (`max_sessions`); a new one ends the oldest past it. Absent:
   * DEFAULT_MAX_SESSIONS.
   */
  maxSessions?: number;
  /**
   * On a backend with sessions and its own AuthQuery (`RolesQuery` in backend.xml): the roles the user holds now
   * (`aud`, a row per role; no row when the backend no longer admits the user), `$uid` bound to `?`. Every refresh
   * asks it, so that a session never outlives its user in tables no trigger of xmlrest watches.
   */
  rolesQuery?: { sql: string };
  /** Where the backend's events go (docs/internals/contract.md §12, `Webhook` in backend.xml); absent when none. */
  webhooks?: readonly WebhookSettings[];
  /** A tenant backend's tenant (docs/internals/contract.md §14, `<Tenant>`); absent on a backend without tenants. */
  tenant?: TenantSettings;
  /** `POST {base}/<backend>/batch` (docs/internals/contract.md §15, `batch="on"`); absent when off, the default. */
  batch?: BatchSettings;
  /**
   * `POST {base}/<backend>/mcp`, the backend's resources as MCP tools (docs/internals/contract.md §16, `mcp="on"`);
   * absent when off, the default.
   */
  mcp?: true;
}
