import type Koa from 'koa';
import { type AuditEntry, type AuditTrail, recordedAddress, recordedParams } from './audit/index.js';
import type { Guard } from './auth/guard.js';
import { presentedKey } from './auth/keys/api-key.js';
import { type Principal, principalName } from './auth/scheme.js';
import { type CredentialRules, credentialsOf, screenLogin } from './auth/transport/transport.js';
import type { FieldReader } from './body.js';
import { validateRead } from './conditional/reads.js';
import { expectedVersion, mismatched } from './conditional/versions.js';
import type {
  Caller,
  EventPayload,
  ExpectedVersion,
  ListQuery,
  ListSpec,
  Operation,
  ParamSpecs,
  PluginContext,
  Queryable,
  RateLimit,
  RequestScope,
  Roles,
  SqlValue,
  ValidatorKind,
} from './contract.js';
import type { Database } from './db/index.js';
import { forbidden } from './errors.js';
import type { EventRow, Events } from './events/index.js';
import { claimedAttempt } from './idempotency/request.js';
import { countCall, type RateLimiter } from './limits/index.js';
import type { Lists } from './lists/index.js';
import { readParams } from './params.js';
import type { RequestState } from './request-log.js';
import { canonicalTenant } from './tenants/canonical.js';
import { withTenant } from './tenants/triggers.js';

/** What every request of one mounted route shares. */
export interface ScopeOptions {
  guard: Guard;
  db: Database;
  readFields: FieldReader;
  /** Most query-string and body fields one request may carry. */
  maxParams: number;
  /** What a login checks before the password: the transport rule, no other site's page. */
  credentials: CredentialRules;
  limiter: RateLimiter;
  /** The route's rate limit (docs/internals/contract.md §10), and its name in the callers' keys; none for most routes. */
  limit?: { rule: RateLimit; route: string } | undefined;
  /** Where `emit` writes (docs/internals/contract.md §12). */
  events: Events;
  /** The route's audit (`audit="true"`, docs/internals/contract.md §12); none for most routes. */
  audit?: AuditRoute | undefined;
  /** Filters, sorts and pages (docs/internals/contract.md §11), with the server's cursor key. */
  lists: Lists;
  /** The operation's success status: what an Idempotency-Key's record answers again (docs/internals/contract.md §15). */
  status: number;
  /** The operation's answer as JSON text, when its module writes it (docs/internals/contract.md §17): the record's text too. */
  json?: Operation['json'] | undefined;
  /** Validators on reads (docs/internals/contract.md §15): off (ETAGS=off), a `<Validator>` runs nothing. */
  etags?: boolean | undefined;
  /** An operation of a batch (runtime/batch/): its statements and emits join the batch's one transaction. */
  joined?: JoinedTransaction | undefined;
}

/**
 * A batch's transaction, which its operations join (docs/internals/contract.md §15): their statements run on its
 * connection, their events wait in its list, written when the batch commits, and their `transaction` is a part of it.
 */
export interface JoinedTransaction {
  db: Queryable;
  events: EventRow[];
}

/** An audited operation: where its rows go, and what they say of it. */
export interface AuditRoute {
  trail: AuditTrail;
  backend: string;
  resource: string;
  version: string;
  method: string;
  /** Its success status: what a write's row, written in its transaction, says. */
  status: number;
  /** The parameters whose values its rows keep (the module's `AuditRule`); every other one is left out. */
  keeps: ReadonlySet<string>;
}

/** What an audited request leaves in `ctx.state` for its row. */
interface AuditState {
  userId?: string;
  keyPrefix?: string;
  requestId: string;
  /** The parameters as the operation read them. */
  auditParams?: Readonly<Record<string, unknown>>;
  /** Its row was written in its transaction: nothing more to record after the answer. */
  audited?: boolean;
  /** The caller's tenant, on a tenant backend's route (`caller`). */
  tenant?: string;
}

/**
 * The row of an audited call, from what the request left in its state: in its recorded form at once (values
 * cut, secrets left out), so that a row waiting for the database holds a few KB whatever the request carried.
 */
export function auditEntry(ctx: Koa.Context, route: AuditRoute, status: number, at: Date): AuditEntry {
  const state = ctx.state as AuditState;
  return {
    at,
    backend: route.backend,
    resource: route.resource,
    version: route.version,
    method: route.method,
    userId: state.userId ?? null,
    keyPrefix: state.keyPrefix ?? null,
    status,
    requestId: state.requestId,
    address: recordedAddress(ctx.ip),
    params: recordedParams(state.auditParams, route.keeps),
    tenant: state.tenant ?? null,
  };
}

/**
 * What a generated handler runs with (contract.ts `RequestScope`): the role
 * guard, the parameters, the database and the plug-in context of one
 * request. A class rather than an object of closures: one small allocation
 * per request on the hot path.
 */
export class Scope implements RequestScope {
  /** What this run of the request's transaction emitted: written by its commit, then looked for by this server. */
  private events: EventRow[] = [];

  constructor(
    private readonly ctx: Koa.Context,
    private readonly options: ScopeOptions,
  ) {}

  get db(): Queryable {
    // Traced, each statement is a child span of the request's (runtime/tracing/).
    const joined = this.options.joined;
    if (joined !== undefined) return joined.db;
    const trace = (this.ctx.state as RequestState).trace;
    return trace === undefined ? this.options.db : trace.statements(this.options.db);
  }

  async authenticate(roles: Roles): Promise<string> {
    return (await this.identify(roles)).userId;
  }

  /**
   * `$uid` and `$tenant` of a tenant backend's route (docs/internals/contract.md §14): the caller authenticated as
   * `authenticate` does (the same limits, the same state), then its tenant, read where its roles were read (no query
   * here), canonical for the backend's tenant type; a caller without one is refused, 403 `no_tenant`.
   */
  async caller(roles: Roles): Promise<Caller> {
    const principal = await this.identify(roles);
    const settings = this.options.guard.backend.tenant;
    const tenant = settings === undefined ? undefined : canonicalTenant(settings.type, principal.tenant);
    if (tenant === undefined) throw forbidden('no_tenant');
    this.ctx.state.tenant = tenant;
    return { uid: principal.userId, tenant };
  }

  private async identify(roles: Roles): Promise<Principal> {
    const { authorization, apiKey } = credentialsOf(this.ctx);
    // A tool call's caller was authenticated by this guard for the MCP request it came in (runtime/mcp/context.ts).
    const known = (this.ctx.state as AuthenticatedState).authenticated;
    const principal =
      known !== undefined ? this.options.guard.admit(known, roles) : await this.options.guard.identify(authorization, roles, this.ctx.ip, apiKey);
    this.ctx.state.userId = principal.userId;
    if (principal.issuer !== undefined) {
      // The log, the audit and cursors name an outside issuer's user with its issuer (auth/scheme.ts); `$uid` stays the claim.
      this.ctx.state.userId = principalName(principal);
      this.ctx.state.issuer = principal.issuer;
    }
    // Counted once the caller is known (a refused caller costs the limit nothing): per user, or per API key, a
    // key with a rate of its own against that on every route it calls (docs/internals/contract.md §10).
    const limit = this.options.limit;
    if (principal.keyId !== undefined) {
      this.ctx.state.keyId = principal.keyId;
      // The audit names the key by its first 8 characters, as `xmlrest key list` shows it (never the key).
      if (this.options.audit !== undefined) this.ctx.state.keyPrefix = presentedKey(authorization, apiKey)?.slice(0, 8);
      // A key's own rate counts its calls on every route; the route's own limit still counts them there too.
      if (principal.rate) await countCall(this.options.limiter, `key|${principal.keyId}`, principal.rate, this.ctx);
      if (limit !== undefined) await countCall(this.options.limiter, `${limit.route}|k|${principal.keyId}`, limit.rule, this.ctx);
    } else if (limit !== undefined) await countCall(this.options.limiter, callerKey(limit.route, principal), limit.rule, this.ctx);
    return principal;
  }

  params<Params>(specs: ParamSpecs): Promise<Params> {
    try {
      const { query, body } = this.options.readFields(this.ctx, this.options.maxParams);
      // A request without a body (most GETs) is read at once, with no promise of its own to wait on.
      if (body instanceof Promise) return body.then((parsed) => this.read<Params>(query, parsed, specs));
      return Promise.resolve(this.read<Params>(query, body, specs));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private read<Params>(query: Parameters<typeof readParams>[0], body: Parameters<typeof readParams>[1], specs: ParamSpecs): Params {
    const params = readParams<Params>(query, body, specs);
    // An audited call's row holds the parameters as the operation read them (only those the module keeps, when recorded).
    if (this.options.audit !== undefined) this.ctx.state.auditParams = params;
    return params;
  }

  /**
   * One transaction on the pool, a span of the request's trace when it is traced (runtime/tracing/). It commits
   * with the events its work emitted (runtime/events/ `commit`); each run of it (a deadlock runs it again)
   * emits afresh.
   */
  private run<T>(work: (db: Queryable) => Promise<T>): Promise<T> {
    // A tenant backend with triggers="on" sets @xmlrest_tenant for its writes (runtime/tenants/triggers.ts).
    const tenant = this.options.guard.backend.tenant?.triggers ? (this.ctx.state as { tenant?: string }).tenant : undefined;
    // In a batch, the work runs on the batch's transaction, which commits (or not) when every operation has run.
    const joined = this.options.joined;
    if (joined !== undefined) return tenant === undefined ? work(joined.db) : withTenant(joined.db, tenant, work);
    const attempt = (db: Queryable) => {
      this.events = [];
      return tenant === undefined ? work(db) : withTenant(db, tenant, work);
    };
    const options = { commit: (db: Queryable) => this.options.events.commit(db, this.events) };
    const trace = (this.ctx.state as RequestState).trace;
    const transact = (each: (db: Queryable) => Promise<T>) =>
      trace === undefined ? this.options.db.transaction(each, options) : trace.transaction(this.options.db, each, options);
    // A POST with an Idempotency-Key claims its record first in each attempt and completes it last (runtime/idempotency/).
    if (this.ctx.state.idempotencyKey === undefined) return transact(attempt);
    return claimedAttempt(this.ctx, this.options, attempt).then((claimed) => transact(claimed ?? attempt));
  }

  transaction<T>(work: (db: Queryable) => Promise<T>): Promise<T> {
    const audit = this.options.audit;
    if (audit === undefined) return this.committed(this.run(work));
    // A request that wrote gets its row in its own transaction: the change and its record commit, or roll back,
    // together. One that only read (several Sql steps, so a transaction too) is recorded after its answer.
    const at = new Date();
    let recorded = false;
    return this.committed(
      this.run(async (db) => {
        let wrote = false;
        const watched: Queryable = {
          select: (sql, values) => db.select(sql, values),
          write: (sql, values) => {
            wrote = true;
            return db.write(sql, values);
          },
        };
        const result = await work(watched);
        // Each run of the transaction decides afresh: a deadlocked run's row went with it.
        recorded = wrote;
        if (wrote) await audit.trail.writeIn(db, auditEntry(this.ctx, audit, audit.status, at));
        return result;
      }),
    ).then((result) => {
      if (recorded) (this.ctx.state as AuditState).audited = true;
      return result;
    });
  }

  /** After the commit: events emitted in the transaction are due now, and this server looks for them. */
  private committed<T>(done: Promise<T>): Promise<T> {
    return done.then((result) => {
      if (this.events.length > 0) this.options.events.emitted();
      return result;
    });
  }

  emit<Event extends EventPayload>(_db: Queryable, type: Event['type'], data: Event['data'], key?: SqlValue): Promise<void> {
    try {
      // Written as the transaction commits (`run`): its rows go with the COMMIT, in the same round trip.
      (this.options.joined?.events ?? this.events).push(
        ...this.options.events.event(this.options.guard.backend.name, type, data, key, this.ctx.state.tenant as string | undefined),
      );
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(error);
    }
  }

  list(spec: ListSpec, params: object): ListQuery {
    const ctx = this.ctx;
    const state = ctx.state as { backend: string; resource: string; userId?: string; issuer?: string; tenant?: string };
    return this.options.lists.open(spec, params, {
      // HEAD is answered as GET: its cursors are GET's.
      route: `${state.backend} ${state.resource} GET`,
      user: state.userId,
      issuer: state.issuer,
      tenant: state.tenant,
      path: ctx.path,
      link: (value) => ctx.set('Link', value),
    });
  }

  validate(sql: string, values: readonly SqlValue[], kind: ValidatorKind): Promise<void> {
    if (this.options.etags === false) return Promise.resolve();
    const state = this.ctx.state as { backend: string; resource: string; userId?: string; tenant?: string };
    const route = { backend: state.backend, resource: state.resource, userId: state.userId, tenant: state.tenant, query: this.ctx.querystring };
    return validateRead(this.ctx, this.db, sql, values, kind, route);
  }

  ifMatch(required: boolean): ExpectedVersion {
    return expectedVersion(this.ctx, required);
  }

  mismatch(db: Queryable, sql: string, values: readonly SqlValue[]): Promise<never> {
    return mismatched(this.ctx, db, sql, values);
  }

  get plugin(): PluginContext {
    const { guard, credentials } = this.options;
    const ctx = this.ctx;
    const limits = guard.credentials.loginGuard(ctx.ip);
    /** Whether the request's end settles what the plug-in began. */
    let settledAtEnd = false;
    return {
      backend: guard.backend,
      requestId: String(ctx.state.requestId),
      // The caller's tenant on a tenant backend's route (scope.caller), read-only: a plug-in keeps to it as `$tenant` does.
      tenant: ctx.state.tenant as string | undefined,
      signToken: (claims) => {
        if (guard.tokens === null) throw new Error(`backend "${guard.backend.name}" has no JWT key: set JWT_SECRET`);
        // An answer that carries a token is never kept as an idempotency record (runtime/idempotency/).
        ctx.state.tokenIssued = true;
        return guard.tokens.sign(claims);
      },
      issueToken: async (claims) => {
        ctx.state.tokenIssued = true;
        // On a tenant backend the token carries `ten`: the one given, else the user's, read by `sub` (guard.ts).
        const { token, refreshToken } = await guard.issue(claims.sub, claims.aud, undefined, claims.ten);
        // A session began: its refresh token goes into the answer beside the step's output (routes.ts).
        if (refreshToken !== undefined) ctx.state.refreshToken = refreshToken;
        return token;
      },
      verifyPassword: (user, supplied, stored) => {
        // A password a plug-in checks is a login too: HTTPS when required, no other site's page (the review of issue 40).
        screenLogin(ctx, credentials);
        return guard.credentials.verifyPassword(user, supplied, stored, ctx.ip);
      },
      // A plug-in that checks credentials (the token generator) is a login: the same rules as token shape A.
      login: {
        begin: (user) => {
          screenLogin(ctx, credentials);
          // An attempt the plug-in began and never said succeeded failed: counted when the request ends. A
          // database that cannot count it then is the request's fault no more (the answer is gone): let it be.
          if (!settledAtEnd) {
            const end = () => void Promise.resolve(limits.end()).catch(() => undefined);
            // A client gone before the first begin: its attempt is ended as soon as it is admitted (credentials.ts).
            if (ctx.res.closed) end();
            else ctx.res.once('close', end);
          }
          settledAtEnd = true;
          return limits.begin(user);
        },
        succeeded: limits.succeeded,
        verify: (user, supplied, stored) => {
          screenLogin(ctx, credentials);
          return limits.verify(user, supplied, stored);
        },
      },
    };
  }
}

/**
 * A request whose credentials the route's own guard authenticated already: set only by the MCP endpoint on a tool
 * call's context (runtime/mcp/context.ts), with the principal that guard gave for the very credentials the call
 * carries; the route's roles are still checked by the guard (`admit`).
 */
export interface AuthenticatedState {
  authenticated?: Principal & { keyId?: number; rate?: RateLimit | null };
}

/**
 * A caller's count on a limited route: the backend's own user by id; an outside issuer's by issuer and id, the
 * issuer framed by its length, so that no user id, of the backend or of another issuer, makes the same key.
 */

function callerKey(route: string, principal: Principal): string {
  const { issuer, userId } = principal;
  return issuer === undefined ? `${route}|u|${userId}` : `${route}|i|${issuer.length}|${issuer}|${userId}`;
}
