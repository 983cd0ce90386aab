import type { IncomingMessage, OutgoingHttpHeader, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type Koa from 'koa';
import type { Principal } from '../auth/scheme.js';
import { NOT_INHERITED } from '../batch/context.js';
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
 * The context a tool call runs its route with (docs/internals/contract.md §16): a Koa context of the server's own
 * app, made as Koa makes one for a request (`createContext`), over a Node request and response that stand on the
 * MCP request's own: its credentials, address, socket and request id, seen with the call's method, path, query
 * string and headers, its body already parsed (body.ts's FieldReader takes a body it finds parsed as it is). What
 * the route sets on its answer (status, headers, body) lands on the call's response, never the MCP request's;
 * whether that answer has gone, and `close`, are the MCP request's (an audited route's row waits for them).
 *
 * Batches make theirs with runtime/batch/context.ts, objects described over the live ones; a tool call's are
 * plain (measured on a tool call of the demo's one-row read: the described objects cost some 30 µs a call, and
 * the live request and response, made prototypes, slowed Node's own writes of every answer after).
 */
export function toolContext(ctx: Koa.Context, call: ToolRequest): Koa.Context {
  // Copied but for those, rather than copied whole and those set undefined after: adding names to a copy of
  // Node's headers cost more than the copy (toolContext's self time in a CPU profile of the bench's tools/call).
  const headers: Record<string, string | string[] | undefined> = {};
  const own = ctx.req.headers;
  for (const name in own) if (!NOT_INHERITED.has(name)) headers[name] = own[name];
  for (const name in call.headers) headers[name] = call.headers[name];
  if (call.body !== undefined) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = '0';
  }
  const outer = ctx.req;
  // What Koa and the routes read of a Node request, the MCP request's own but for what the call says. A plain
  // object, not one made with the live request as its prototype: V8 would make that request a prototype, its
  // shape unique, and every read Node's HTTP code makes of it slower for the rest of its life.
  const req = {
    headers,
    rawHeaders: [] as string[],
    method: call.method,
    url: call.querystring === '' ? call.path : `${call.path}?${call.querystring}`,
    socket: outer.socket,
    connection: outer.socket,
    httpVersion: outer.httpVersion,
    httpVersionMajor: outer.httpVersionMajor,
    httpVersionMinor: outer.httpVersionMinor,
  };
  const res = new CallAnswer(ctx.res);
  const sub = ctx.app.createContext(req as unknown as IncomingMessage, res as unknown as ServerResponse) as Koa.Context;
  // `untagged`: a GET's answer is its text alone, no ETag made for headers that reach no one (conditional/reads.ts).
  const state: Record<string, unknown> & AuthenticatedState = { requestId: ctx.state.requestId, trace: ctx.state.trace, untagged: true };
  // Checked once per MCP request, not once more per call: the guard that checked them is the route's own.
  if (call.principal !== undefined) state.authenticated = call.principal;
  sub.state = state;
  if (call.body !== undefined) (sub.request as typeof sub.request & { body?: unknown }).body = call.body;
  return sub;
}

/** Who the call's route found the caller to be, on the MCP request's state for its log line, unless it says already. */
export function callerFound(ctx: Koa.Context, sub: Koa.Context): void {
  for (const name of CALLER) if (ctx.state[name] === undefined && sub.state[name] !== undefined) ctx.state[name] = sub.state[name];
}

/**
 * What Koa and the routes do with a Node response, for a tool call: its status and headers kept here (they are the
 * call's answer's, never the MCP request's), whether the answer has gone and its `close` the MCP request's (an
 * audited route's row waits for them). Koa's response keeps the body itself.
 */
class CallAnswer {
  statusCode = 404;
  statusMessage = '';
  private readonly fields = new Map<string, OutgoingHttpHeader>();

  constructor(private readonly outer: ServerResponse) {}

  get socket() {
    return this.outer.socket;
  }

  get headersSent(): boolean {
    return false;
  }

  get writableFinished(): boolean {
    return this.outer.writableFinished;
  }

  once(event: string, listener: (...args: unknown[]) => void): this {
    this.outer.once(event, listener);
    return this;
  }

  setHeader(name: string, value: OutgoingHttpHeader): this {
    this.fields.set(name.toLowerCase(), value);
    return this;
  }

  getHeader(name: string): OutgoingHttpHeader | undefined {
    return this.fields.get(name.toLowerCase());
  }

  hasHeader(name: string): boolean {
    return this.fields.has(name.toLowerCase());
  }

  removeHeader(name: string): void {
    this.fields.delete(name.toLowerCase());
  }

  getHeaderNames(): string[] {
    return [...this.fields.keys()];
  }

  getHeaders(): OutgoingHttpHeaders {
    return Object.fromEntries(this.fields);
  }
}
