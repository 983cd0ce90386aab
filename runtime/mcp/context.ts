import type Koa from 'koa';
import type { Principal } from '../auth/scheme.js';
import { innerContext } from '../batch/context.js';
import type { AuthenticatedState } from '../scope.js';

/** A tool call's request as its route is to see it. */
export interface ToolRequest {
  method: string;
  /** The route's path, as registered, and its query string ('' for none). */
  path: string;
  querystring: string;
  /** Its own headers, in lower case (If-Match, Idempotency-Key), over the MCP request's. */
  headers: Record<string, string>;
  /** A write's arguments: its body, already parsed. */
  body: Record<string, unknown> | undefined;
  /** Who the route's guard found the MCP request's credentials to be, when it did (its route checks its roles). */
  principal: Principal | undefined;
}

/** What the caller is known by, copied to the MCP request once its first call has found out, for its log line. */
const CALLER = ['userId', 'keyId', 'issuer'] as const;

/**
 * The context a tool call runs its route with (docs/internals/contract.md §16): the context of a request run
 * inside the MCP request (runtime/batch/context.ts `innerContext`, which a batch's operations are made with too):
 * its credentials, address, socket and request id, seen with the call's method, path, query string and headers,
 * its body already parsed; what the route sets on its answer lands on the call's response.
 */
export function toolContext(ctx: Koa.Context, call: ToolRequest): Koa.Context {
  // `untagged`: a GET's answer is its text alone, no ETag made for headers that reach no one (conditional/reads.ts).
  const state: Record<string, unknown> & AuthenticatedState = { requestId: ctx.state.requestId, trace: ctx.state.trace, untagged: true };
  // Checked once per MCP request, not once more per call: the guard that checked them is the route's own.
  if (call.principal !== undefined) state.authenticated = call.principal;
  return innerContext(ctx, call, state);
}

/** Who the call's route found the caller to be, on the MCP request's state for its log line, unless it says already. */
export function callerFound(ctx: Koa.Context, sub: Koa.Context): void {
  for (const name of CALLER) if (ctx.state[name] === undefined && sub.state[name] !== undefined) ctx.state[name] = sub.state[name];
}
