import type { Queryable, SqlValue } from './db/index.js';

/**
 * The contract between the generator and the runtime, written once: the
 * shapes that generated modules export and the server mounts, and the
 * settings, parameter specs and error body both sides speak of. The
 * generator's IR (generator/ir.ts) builds on these types; nothing here
 * knows XML.
 */

/** A request parameter as the client sent it (query string, form or JSON body). */
export type ParamValue = string | number | boolean | null;

/**
 * What a request parameter must be, from the column it meets (the generator
 * reads it from the database). `any` (no known type, or a column type with no
 * check of its own) takes any scalar and is bound as text: a JSON number or
 * boolean as its text (`0`, `true`), as a form would send it, never as a number.
 */
export interface ParamSpec {
  kind: 'integer' | 'bigint' | 'decimal' | 'number' | 'string' | 'date' | 'datetime' | 'time' | 'enum' | 'any';
  nullable: boolean;
  unsigned?: boolean;
  /** Most characters (code points), from the column. */
  maxLength?: number;
  /** Most bytes of UTF-8: credentials (user name 255, password 1,024) are bounded in bytes. */
  maxBytes?: number;
  values?: readonly string[];
  /** Read from the body only, never the query string (a token request's fields, credentials among them). */
  from?: 'body';
  /**
   * A secret (docs/contract.md §12): named like one (`pw`, `pin`, `otp`, `cvv`), meeting a password column, or
   * reaching a password argument. The generator decides it; the audit keeps only the values its `AuditRule` names.
   */
  secret?: true;
  /** May be left out (a list's filters, sort, limit and cursor, docs/contract.md §11): then absent from the parameters, never a 400. */
  optional?: true;
  /** The least and most an `integer` may be (a list's `limit`). */
  min?: number;
  max?: number;
}
export type ParamSpecs = Readonly<Record<string, ParamSpec>>;

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export const HTTP_METHODS: readonly HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** What a generated handler is handed for one request. */
export interface RequestScope {
  /**
   * The role guard: authenticates the Authorization header against the
   * backend and checks that the user holds one of `roles` (any role at all
   * for `'*'`). Returns `$uid`. Throws 403 or 401 per docs/contract.md §4, §8.
   */
  authenticate(roles: Roles): Promise<string>;
  /**
   * Reads, checks and converts the parameters `specs` names; a missing one or a value of the
   * wrong type is a 400 naming it. The body wins over the query string.
   */
  params<Params>(specs: ParamSpecs): Promise<Params>;
  /** Autocommit statements, for a request with one read step. */
  readonly db: Queryable;
  /** One connection, one transaction: for a request that writes or has several steps. */
  transaction<T>(work: (db: Queryable) => Promise<T>): Promise<T>;
  readonly plugin: PluginContext;
  /**
   * Records an event in the outbox for `db`, the request's own transaction (docs/contract.md §12): its row is
   * written as that transaction commits, with the COMMIT, and delivered to the backend's webhooks only if it
   * did. `key` says which row the event is about (the payload's `key`) and orders the deliveries of events
   * about one row (events whose type starts with the same word and whose key is equal).
   */
  emit<Event extends EventPayload>(db: Queryable, type: Event['type'], data: Event['data'], key?: SqlValue): Promise<void>;
  /**
   * A list step's statement for this request (docs/contract.md §11): the filters it sent, the sort, and for a
   * paged list the cursor `after` (checked: a forged, foreign or stale one is a 400) and `limit`.
   */
  list(spec: ListSpec, params: object): ListQuery;
}

/**
 * A read step that is a list (docs/contract.md §11), in fixed pieces the generator checked against the
 * database; the runtime puts together the statement a request needs (runtime/lists/statement.ts), every
 * value a `?` parameter. The pieces are SQL from the resource file, never from a request.
 */
export interface ListSpec {
  /** The statement up to where the list's conditions go; its own WHERE condition, when it has one, comes first. */
  readonly sql: string;
  /** Whether `sql` has a WHERE clause: the conditions then join it with `and`. */
  readonly where: boolean;
  /** What follows the conditions (a list without Page or Sort may keep its GROUP BY, ORDER BY, LIMIT); usually empty. */
  readonly tail: string;
  /** Each a condition added when its parameter is sent, `uses` times `?` for its value. */
  readonly filters: readonly { readonly param: string; readonly sql: string; readonly uses: number }[];
  /** The orders a caller may ask for by name (`?sort=-price`), and the one used when none is asked for. */
  readonly sort: {
    readonly param: string;
    readonly allow: Readonly<Record<string, ListOrderTerm>>;
    readonly default: { readonly name: string; readonly desc: boolean } | null;
  } | null;
  /** Keyset pages: a page of `size` rows unless `limit` asks for another number (at most `max`), in the key's order. */
  readonly page: { readonly size: number; readonly max: number; readonly key: readonly ListOrderTerm[] } | null;
}

/** One term of a list's order: its SQL, the result column that holds its value, and what that value is in a row. */
export interface ListOrderTerm {
  readonly sql: string;
  readonly column: string;
  readonly desc: boolean;
  readonly type: 'number' | 'string' | 'Date';
}

/** A list's statement for one request, and (paged) what comes after its rows. */
export interface ListQuery {
  readonly sql: string;
  /** The statement's values: the step's own (`head`, as its text binds them), then the filters', the cursor's and the limit. */
  values(...head: SqlValue[]): SqlValue[];
  /** The page of `rows` (the statement reads one row more than the page, to know whether another follows); sets `next` and the Link header. */
  page<Row>(rows: Row[]): Row[];
  /** The cursor of the next page, or null on the last page. */
  readonly next: string | null;
}

/** What a webhook receives as its body: the Standard Webhooks payload (docs/contract.md §12). */
export interface EventPayload {
  type: string;
  /** When the request emitted it, ISO 8601. */
  timestamp: string;
  /** The value of its Emit's `key`, when it has one: which row the event is about (a number or a text). */
  key?: string | number | null;
  data: object;
}

export type Handler = (scope: RequestScope) => Promise<object>;

/** Who may call a protected operation: a holder of any of these roles, or (`'*'`) any authenticated caller. */
export type Roles = '*' | readonly string[];

/** Who may call an operation (docs/contract.md §8): anyone (`null`, a public method), or `Roles`. */
export type Access = Roles | null;

/** A role name: the generator's identifiers (letters, digits and _ . : -), at most 64 like the role column. */
export const ROLE_NAME = /^[A-Za-z0-9_.:-]{1,64}$/;

export type AuthCheck = { ok: true; access: Access } | { ok: false; message: string };

/**
 * An `auth` value (docs/contract.md §8), checked the same way at every door
 * that reads or writes one: the generator reading a resource file, the
 * console, `xmlrest resource auth`. Role names separated by white space
 * (any one of them admits; a name given twice counts once), or `*` alone
 * (any authenticated caller); on a Request, and there only, exactly `""`
 * makes the method public. A value with no role name in it (`" "`, or `""`
 * on a Resource) is a mistake, never "public": a resource is public by
 * having no `auth` at all.
 */
export function parseAuth(value: string, on: 'Resource' | 'Request'): AuthCheck {
  if (value === '' && on === 'Request') return { ok: true, access: null };
  const words = value.split(/\s+/).filter((word) => word !== '');
  if (words.length === 0) return { ok: false, message: 'auth holds no role name' };
  if (words.includes('*')) {
    if (words.length === 1) return { ok: true, access: '*' };
    return { ok: false, message: `auth is * alone (any authenticated caller) or role names, not both: "${value}"` };
  }
  if (!words.every((word) => ROLE_NAME.test(word))) {
    return { ok: false, message: `auth is role names (letters, digits, _ . : -) separated by spaces, or *, not "${value}"` };
  }
  return { ok: true, access: [...new Set(words)] };
}

/** The `auth` text of an access, as a file is written with it: the roles separated by one space, `*`, or `""` (a public Request). */
export function authText(access: Access): string {
  return access === null ? '' : access === '*' ? '*' : access.join(' ');
}

export interface Operation {
  /** Status of a successful response. */
  status: number;
  /** Who may call it; the handler's own guard checks the same set, hard-wired. */
  access: Access;
  /** At most this many calls per caller in each window (docs/contract.md §10), when the file sets `rate_limit`. */
  rateLimit?: RateLimit;
  /** Every call is written to xmlrest_api_audit (`audit="true"`, docs/contract.md §12), keeping what its rule says. */
  audit?: AuditRule;
  /** It answers pages whose cursors the server signs (docs/contract.md §11): the server needs its key (JWT_SECRET). */
  pages?: true;
  handler: Handler;
}

/**
 * What an audited operation's rows keep of its parameters, decided when generating (docs/contract.md §12): the
 * values of `keeps`, every other parameter's written as `[FILTERED]`. The generator never lists a secret.
 */
export interface AuditRule {
  keeps: readonly string[];
}

/** `rate_limit="<n>/<s|m|h>"`: at most `limit` calls per caller in each window of `seconds`. */
export interface RateLimit {
  limit: number;
  seconds: number;
}

const RATE_UNITS = { s: 1, m: 60, h: 3600 } as const;

/** A rate as `rate_limit` and `xmlrest key create --rate` write it (`100/m`), or undefined when it is not one. */
export function parseRateLimit(text: string): RateLimit | undefined {
  const match = /^([1-9][0-9]{0,8})\/([smh])$/.exec(text);
  return match ? { limit: Number(match[1]), seconds: RATE_UNITS[match[2] as keyof typeof RATE_UNITS] } : undefined;
}

/** The text of a rate, as written: `100/m`. */
export function rateText(rate: RateLimit): string {
  const unit = Object.entries(RATE_UNITS).find(([, seconds]) => seconds === rate.seconds)?.[0] ?? 's';
  return `${rate.limit}/${unit}`;
}

export interface ResourceModule {
  name: string;
  version: string;
  /** The resource's `auth` attribute as written (`customer admin`, `*`), or null; a Request's own `auth` may replace it. */
  auth: string | null;
  /** Relative POSIX path of the XML file it was generated from. */
  source: string;
  operations: Partial<Record<HttpMethod, Operation>>;
}

/** A query the runtime runs with `$user`/`$pass` bound from the caller's credentials. */
export interface AuthQuery {
  sql: string;
  /** What binds to each `?`, in order. */
  binds: readonly ('user' | 'pass')[];
  /** The column of the stored password, which the server verifies; null when the SQL compares $pass itself. */
  passwordColumn: string | null;
}

/** Live sessions per user and backend when backend.xml sets no `max_sessions` (docs/contract.md §10). */
export const DEFAULT_MAX_SESSIONS = 50;

/** The authentication schemes a backend may name in `auth_scheme` (each one a module under runtime/auth/). */
export const AUTH_SCHEMES = ['Basic', 'Bearer'] as const;

/**
 * The console role of a backend whose backend.xml names none: a role no application means anything by, so
 * that holding an application role (`admin`) never opens the console by accident (docs/contract.md §6).
 */
export const DEFAULT_CONSOLE_ROLE = 'xmlrest-operator';
export type AuthSchemeName = (typeof AUTH_SCHEMES)[number];

/** The algorithms an outside issuer's tokens may use (docs/contract.md §9): public keys only, never HS* or `none`. */
export const ISSUER_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;
export type IssuerAlgorithm = (typeof ISSUER_ALGORITHMS)[number];

/** Where a claim is in a token's payload: the names from the top, such as `['realm_access', 'roles']`. */
export type ClaimPath = readonly string[];

/** How a role claim holds its names: a JSON array, one string split at spaces or commas, or a string holding a JSON array. */
export type RoleFormat = 'array' | 'space' | 'comma' | 'json';

/**
 * An identity provider whose access tokens a Bearer backend accepts beside
 * its own (docs/contract.md §9, an `Issuer` in backend.xml). Its tokens are
 * told apart by `iss`, verified with the provider's public keys (JWKS), and
 * their roles and user id read from the claims these settings name.
 */
export interface IssuerSettings {
  /** The token's `iss`, matched exactly. */
  iss: string;
  /** The token's `aud` (a string or an array) must hold one of these. */
  audience: readonly string[];
  /** Where the keys are: a JWKS URL, or an OpenID Provider's discovery document naming one (read at start). */
  keys: { jwksUri: string } | { discovery: string };
  algorithms: readonly IssuerAlgorithm[];
  /** Seconds of clock difference allowed for exp, nbf and iat. */
  clockSkew: number;
  roles: { path: ClaimPath; format: RoleFormat };
  /** Provider role names to ours; a name may map to several. */
  roleMap: readonly { from: string; to: string }[];
  /** Only mapped roles count: a provider's role without a `Role` mapping is dropped. */
  mapOnly: boolean;
  /** The claim whose value is `$uid` (checked against the backend's id type), unless a user query maps it. */
  user: ClaimPath;
  /** Maps the token to a local user id (`user_id` of its first row); `binds` are the top-level claims for each `?`. */
  userQuery: { sql: string; binds: readonly string[] } | null;
}

/**
 * Why a URL is not one the server may fetch an issuer's keys or discovery
 * document from, or undefined when it is: https, or plain http to this machine
 * only (a provider beside the server, or in a test). Anything else would send
 * the server's requests, and trust the answers, over the open network. The
 * generator checks `jwks_uri` and `discovery` with it; the server, the
 * `jwks_uri` a discovery document names.
 */
export function keyUrlProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'is not a URL';
  }
  if (url.username !== '' || url.password !== '') return 'holds credentials';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol !== 'http:') return `is https (or http to a loopback address), not ${url.protocol.slice(0, -1)}`;
  return isLoopbackHost(url.hostname) ? undefined : 'is http to a host that is not loopback: use https';
}

function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127(?:\.(?:25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])){3}$/.test(hostname);
}

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
  /** Identity providers whose tokens a Bearer backend accepts beside its own (docs/contract.md §9). */
  issuers: readonly IssuerSettings[];
  /** Whether callers may present API keys (`api_keys="on"`, docs/contract.md §10). */
  apiKeys: boolean;
  /**
   * Sessions (docs/contract.md §10): seconds a refresh token may go unused before its session ends
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
  /** Where the backend's events go (docs/contract.md §12, `Webhook` in backend.xml); absent when none. */
  webhooks?: readonly WebhookSettings[];
}

/**
 * A receiver of a backend's events (a `Webhook` in backend.xml), delivered as the Standard Webhooks
 * specification has it. The secret is never in a file: `secret` names the environment variable holding it.
 */
export interface WebhookSettings {
  /** The event types it receives: names (`order.placed`), a prefix and `.*` (`order.*`), or `*` for every one. */
  events: readonly string[];
  url: string;
  /** The environment variable holding its signing secret, `whsec_` and base64 (several, separated by spaces, while rotating). */
  secret: string;
}

/** An event type (docs/contract.md §12): identifiers of letters, digits and _, separated by full stops, as Standard Webhooks recommends. */
export const EVENT_TYPE = /^[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*$/;

/** Whether a webhook receives events of `type`: one of its patterns names it, or is a prefix of it ending in `.*`, or is `*`. */
export function receives(webhook: WebhookSettings, type: string): boolean {
  return webhook.events.some((pattern) => pattern === '*' || pattern === type || (pattern.endsWith('.*') && type.startsWith(pattern.slice(0, -1))));
}

export interface BackendModule extends BackendSettings {
  resources: readonly ResourceModule[];
}

/**
 * Body of every error response (docs/contract.md §3, §4); `requestId` only
 * on a 500, to quote when reporting it.
 */
export interface ErrorBody {
  message: string;
  status: number;
  requestId?: string;
}

/** The same body as JSON Schema, for the OpenAPI document. */
export const ERROR_BODY_SCHEMA = {
  type: 'object',
  required: ['message', 'status'],
  properties: {
    message: { type: 'string' },
    status: { type: 'integer' },
    requestId: { type: 'string', description: 'Only on 500: quote it when reporting the failure.' },
  },
} as const;

/** What a plug-in (an `Execute` step) may use. */
export interface PluginContext {
  readonly backend: BackendModule;
  readonly requestId: string;
  /** Signs a token with the server's key and this backend's settings. */
  signToken(claims: { sub: string; aud: string | string[] }): string;
  /**
   * Issues a token as a token request does: on a backend with sessions (`refresh_lifetime`), a session begins,
   * its access token carries `sid`, and the answer gains `refresh_token` beside the step's output.
   */
  issueToken(claims: { sub: string; aud: string | string[] }): Promise<string>;
  /**
   * For a plug-in that checks credentials. `verify(user, password, stored)` is a whole login against the
   * stored value the plug-in's query read, as HTTP Basic does one: a verdict remembered for that value
   * answers at once; otherwise the attempt is counted (by the user name when given, and the client address),
   * 429 past the limits, delayed after repeated failures of the name, and the hash checked when a core is
   * free (503 with Retry-After when too many wait). When the query compared the password itself,
   * `begin(user)` holds the attempt's place (429 past the limits; a wait while other checks of the name
   * fill them, 503 when they do not end in time) and `succeeded(user)` says it was right; an attempt begun
   * and not succeeded counts as failed when the request ends. Await them all: with the counters in memory
   * `begin` and `succeeded` mostly answer at once, without a promise; shared in the database, with one.
   */
  readonly login: {
    begin(user?: string): void | Promise<void>;
    succeeded(user?: string): void | Promise<void>;
    verify(user: string | undefined, supplied: string, stored: unknown): Promise<boolean>;
  };
  /**
   * Verifies a password against a stored value (argon2id hash, or plain text from before), remembering a
   * success for the backend's credential_cache seconds like HTTP Basic does; counts nothing (`login.verify` does).
   */
  verifyPassword(user: string, supplied: string, stored: unknown): Promise<boolean>;
}

/**
 * A plug-in: called with the step's `Arg` values, its result is the step's
 * result. Throw an HttpError to answer the client.
 */
export type Plugin<Args extends object, Result> = (args: Args, context: PluginContext) => Result | Promise<Result>;

export type { Queryable, SqlValue };

/**
 * `$[step][row].column` on a plug-in step's result: reads it as rows of
 * objects; anything else, or a missing row, reads as null (docs/contract.md §2).
 */
export function cell(result: unknown, row: number, column: string): unknown {
  if (!Array.isArray(result)) return null;
  const value: unknown = result[row];
  if (typeof value !== 'object' || value === null || !Object.hasOwn(value, column)) return null;
  return (value as Record<string, unknown>)[column] ?? null;
}
