import type { Queryable, SqlValue } from '../db/index.js';
import type { Access, Roles } from './access.js';
import type { BackendSettings } from './backend.js';
import type { EventPayload } from './events.js';
import type { ListQuery, ListSpec } from './list.js';
import type { ParamSpecs } from './params.js';
import type { RateLimit } from './rate-limit.js';
import type { ExpectedVersion, ValidatorKind } from './safe-writes.js';
import type { Caller } from './tenant.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export const HTTP_METHODS: readonly HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** What a generated handler is handed for one request. */
export interface RequestScope {
  /**
   * The role guard: authenticates the Authorization header against the
   * backend and checks that the user holds one of `roles` (any role at all
   * for `'*'`). Returns `$uid`. Throws 403 or 401 per docs/internals/contract.md §4, §8.
   */
  authenticate(roles: Roles): Promise<string>;
  /**
   * The guard of a tenant backend's route (docs/internals/contract.md §14): as `authenticate`, and the caller's
   * tenant beside `$uid`. A caller without one (or with one not of the tenant's type) is refused, 403 `no_tenant`.
   */
  caller(roles: Roles): Promise<Caller>;
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
   * Records an event in the outbox for `db`, the request's own transaction (docs/internals/contract.md §12): its row is
   * written as that transaction commits, with the COMMIT, and delivered to the backend's webhooks only if it
   * did. `key` says which row the event is about (the payload's `key`) and orders the deliveries of events
   * about one row (events whose type starts with the same word and whose key is equal).
   */
  emit<Event extends EventPayload>(db: Queryable, type: Event['type'], data: Event['data'], key?: SqlValue): Promise<void>;
  /**
   * A list step's statement for this request (docs/internals/contract.md §11): the filters it sent, the sort, and for a
   * paged list the cursor `after` (checked: a forged, foreign or stale one is a 400) and `limit`.
   */
  list(spec: ListSpec, params: object): ListQuery;
  /**
   * A GET's cheaper validator (`<Validator>`, docs/internals/contract.md §15), called after the guard and the
   * parameters and before any step: runs `sql` (autocommit) and makes the answer's ETag from its rows as `kind`
   * says. When the request's If-None-Match holds that tag, the request ends here: it throws the runtime's
   * not-modified signal, which the route answers 304 (ETag, Cache-Control and Vary, no body). Otherwise the handler
   * goes on, and its 200 carries that tag rather than a digest of its bytes.
   */
  validate(sql: string, values: readonly SqlValue[], kind: ValidatorKind): Promise<void>;
  /**
   * A versioned write's precondition (`version` on the Request, docs/internals/contract.md §15), read before its
   * transaction: the version the request's If-Match names, or null when it sent none. Throws 428
   * (`precondition_required`) when `required` and none was sent; 412 (`precondition_failed`) when If-Match names
   * no version tag (a weak tag, a digest, a list of several). `*` is null here, and the route then answers 412 rather
   * than 404 when there is no row.
   */
  ifMatch(required: boolean): ExpectedVersion;
  /**
   * A versioned write whose statement changed no row: reads the row's version with `sql` (the write's own `where`,
   * made by the generator) in the write's transaction, and throws 412 with the row's current ETag when there is a
   * row (another write moved it on), or 404 when there is none. A write that changed its row answers with the ETag
   * of the version it moved on to (`expected` + 1) when it compared one.
   */
  mismatch(db: Queryable, sql: string, values: readonly SqlValue[]): Promise<never>;
}

export type Handler = (scope: RequestScope) => Promise<object>;

export interface Operation {
  /** Status of a successful response. */
  status: number;
  /** Who may call it; the handler's own guard checks the same set, hard-wired. */
  access: Access;
  /** At most this many calls per caller in each window (docs/internals/contract.md §10), when the file sets `rate_limit`. */
  rateLimit?: RateLimit;
  /** Every call is written to xmlrest_api_audit (`audit="true"`, docs/internals/contract.md §12), keeping what its rule says. */
  audit?: AuditRule;
  /** It answers pages whose cursors the server signs (docs/internals/contract.md §11): the server needs its key (JWT_SECRET). */
  pages?: true;
  /**
   * A POST's Idempotency-Key (docs/internals/contract.md §15): `required` answers 400 to a POST without one. Every
   * POST that runs a transaction takes the header when sent; this only makes it required.
   */
  idempotency?: 'required';
  /**
   * A versioned write (`version` on the Request): the column it compares and moves on, and whether If-Match is
   * required (428 without it). For OpenAPI, the console and batches; the handler itself calls `scope.ifMatch`.
   */
  version?: { column: string; required: boolean };
  /** A public GET's `max_age` (seconds): answered `Cache-Control: public, max-age=<n>` rather than `no-cache`. */
  maxAge?: number;
  /** A GET with a `<Validator>`: for the console, which shows it; the handler itself calls `scope.validate`. */
  validator?: true;
  /**
   * The answer's JSON text, written by the generator for the columns it knows (docs/internals/contract.md §17): byte
   * for byte what `JSON.stringify(answer)` gives, faster. Absent where the answer's shape is not known when
   * generating (a plug-in's output); the runtime then uses `JSON.stringify`. It throws for a value it cannot write in
   * place (one JSON.stringify would leave out or refuses): the runtime then uses `JSON.stringify` for the whole answer
   * (runtime/json-text.ts, `answerJson`). A method, so that each module's own typed answer is taken.
   */
  json?(answer: object): string;
  handler: Handler;
}

/**
 * What an audited operation's rows keep of its parameters, decided when generating (docs/internals/contract.md §12): the
 * values of `keeps`, every other parameter's written as `[FILTERED]`. The generator never lists a secret.
 */
export interface AuditRule {
  keeps: readonly string[];
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

export interface BackendModule extends BackendSettings {
  resources: readonly ResourceModule[];
}

/** What a plug-in (an `Execute` step) may use. */
export interface PluginContext {
  readonly backend: BackendModule;
  readonly requestId: string;
  /**
   * The caller's tenant (docs/internals/contract.md §14) on a tenant backend's route, once the handler has asked for
   * it (`scope.caller`); undefined elsewhere.
   */
  readonly tenant?: string | undefined;
  /**
   * Signs a token with the server's key and this backend's settings. On a tenant backend, `ten` is the tenant it
   * carries: signing does no I/O, so a token signed without one has none (refused at the backend's routes, 403
   * `no_tenant`); `issueToken` reads the user's when not given.
   */
  signToken(claims: { sub: string; aud: string | string[]; ten?: string }): string;
  /**
   * Issues a token as a token request does: on a backend with sessions (`refresh_lifetime`), a session begins,
   * its access token carries `sid`, and the answer gains `refresh_token` beside the step's output.
   */
  issueToken(claims: { sub: string; aud: string | string[]; ten?: string }): Promise<string>;
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
 * The shape of generated modules this runtime serves, a small integer raised when a change of the generator's
 * output needs a runtime that knows it (a field the runtime must read, an export the modules import), and the
 * oldest shape it still serves. A release whose modules keep the last one's shape leaves both as they are: its
 * modules differ from the last release's only in their stamp, and either runtime serves them.
 */
// 2: a tenant backend's handlers call RequestScope.caller (docs/internals/contract.md §14); format 1 modules never do.
// 3: handlers call RequestScope.validate, ifMatch and mismatch, operations carry idempotency, version and maxAge
// (docs/internals/contract.md §15); modules of formats 1 and 2 never do, and are still served.
// 4: operations carry `json`, written with the runtime's jsonRows, jsonString and friends (docs/internals/contract.md
// §17), which an older runtime does not export.
export const MODULE_FORMAT = 4;
export const OLDEST_MODULE_FORMAT = 1;

/** Which xmlrest made a project's modules, and their shape: the project index's `generator` export. */
export interface GeneratorStamp {
  /** The generator's package version (package.json), as its modules' headers name it. */
  version: string;
  /** `MODULE_FORMAT` of the generator that made them. */
  format: number;
}

/** What the project index (`generated/index.ts`) exports. Modules made before the stamp export no `generator`. */
export interface GeneratedIndex {
  backends: readonly BackendModule[];
  generator?: GeneratorStamp;
}
