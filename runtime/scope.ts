import type Koa from 'koa';
import type { Guard } from './auth/guard.js';
import { type CredentialRules, screenLogin } from './auth/transport.js';
import type { FieldReader } from './body.js';
import type { ListQuery, ListSpec, ParamSpecs, PluginContext, Queryable, RateLimit, RequestScope, Roles } from './contract.js';
import type { Database } from './db/index.js';
import { countCall, type RateLimiter } from './limits/index.js';
import type { Lists } from './lists/index.js';
import { readParams } from './params.js';

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
  /** The route's rate limit (docs/contract.md §10), and its name in the callers' keys; none for most routes. */
  limit?: { rule: RateLimit; route: string } | undefined;
  /** Filters, sorts and pages (docs/contract.md §11), with the server's cursor key. */
  lists: Lists;
}

/**
 * What a generated handler runs with (contract.ts `RequestScope`): the role
 * guard, the parameters, the database and the plug-in context of one
 * request. A class rather than an object of closures: one small allocation
 * per request on the hot path.
 */
export class Scope implements RequestScope {
  constructor(
    private readonly ctx: Koa.Context,
    private readonly options: ScopeOptions,
  ) {}

  get db(): Queryable {
    return this.options.db;
  }

  async authenticate(roles: Roles): Promise<string> {
    const apiKey = this.ctx.headers['x-api-key'];
    const principal = await this.options.guard.identify(this.ctx.headers.authorization, roles, this.ctx.ip, typeof apiKey === 'string' ? apiKey : undefined);
    const userId = principal.userId;
    this.ctx.state.userId = userId;
    // Counted once the caller is known (a refused caller costs the limit nothing): per user, or per API key, a
    // key with a rate of its own against that on every route it calls (docs/contract.md §10).
    const limit = this.options.limit;
    if (principal.keyId !== undefined) {
      this.ctx.state.keyId = principal.keyId;
      // A key's own rate counts its calls on every route; the route's own limit still counts them there too.
      if (principal.rate) await countCall(this.options.limiter, `key|${principal.keyId}`, principal.rate, this.ctx);
      if (limit !== undefined) await countCall(this.options.limiter, `${limit.route}|k|${principal.keyId}`, limit.rule, this.ctx);
    } else if (limit !== undefined) await countCall(this.options.limiter, `${limit.route}|u|${userId}`, limit.rule, this.ctx);
    return userId;
  }

  params<Params>(specs: ParamSpecs): Promise<Params> {
    try {
      const { query, body } = this.options.readFields(this.ctx, this.options.maxParams);
      // A request without a body (most GETs) is read at once, with no promise of its own to wait on.
      if (body instanceof Promise) return body.then((parsed) => readParams<Params>(query, parsed, specs));
      return Promise.resolve(readParams<Params>(query, body, specs));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  transaction<T>(work: (db: Queryable) => Promise<T>): Promise<T> {
    return this.options.db.transaction(work);
  }

  list(spec: ListSpec, params: object): ListQuery {
    const ctx = this.ctx;
    const state = ctx.state as { backend: string; resource: string; userId?: string };
    return this.options.lists.open(spec, params, {
      // HEAD is answered as GET: its cursors are GET's.
      route: `${state.backend} ${state.resource} GET`,
      user: state.userId,
      path: ctx.path,
      link: (value) => ctx.set('Link', value),
    });
  }

  get plugin(): PluginContext {
    const { guard, credentials } = this.options;
    const ctx = this.ctx;
    const limits = guard.credentials.loginGuard(ctx.ip);
    return {
      backend: guard.backend,
      requestId: String(ctx.state.requestId),
      signToken: (claims) => {
        if (guard.tokens === null) throw new Error(`backend "${guard.backend.name}" has no JWT key: set JWT_SECRET`);
        return guard.tokens.sign(claims);
      },
      issueToken: async (claims) => {
        if (guard.tokens === null) throw new Error(`backend "${guard.backend.name}" has no JWT key: set JWT_SECRET`);
        if (guard.sessions === null) return guard.tokens.sign(claims);
        // A session begins: its refresh token goes into the answer beside the step's output (routes.ts).
        const pair = await guard.sessions.begin(claims.sub, claims.aud);
        ctx.state.refreshToken = pair.refreshToken;
        return pair.token;
      },
      verifyPassword: (user, supplied, stored) => guard.credentials.verifyPassword(user, supplied, stored, ctx.ip),
      // A plug-in that checks credentials (the token generator) is a login: the same rules as token shape A.
      login: {
        begin: (user) => {
          screenLogin(ctx, credentials);
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
