import type { IncomingMessage, OutgoingHttpHeader, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type Koa from 'koa';
import type { CheckedOperation } from './operations.js';

/**
 * The headers a request run inside another (a batch's operation, an MCP tool call: runtime/mcp/context.ts) does not
 * inherit from the request that carries it: its body's, and the preconditions, which are its own.
 */
export const NOT_INHERITED: ReadonlySet<string> = new Set([
  'content-length',
  'transfer-encoding',
  'content-type',
  'content-encoding',
  'if-match',
  'if-none-match',
  'idempotency-key',
]);

/** A request run inside another, as its route is to see it. */
export interface InnerRequest {
  method: string;
  /** The route's path, as registered, and its query string ('' for none). */
  path: string;
  querystring: string;
  /** Its own headers, in lower case (If-Match, If-None-Match, Idempotency-Key), over the outer request's. */
  headers: Readonly<Record<string, string>>;
  /** A write's fields: its body, already parsed. */
  body: Record<string, unknown> | undefined;
}

/**
 * The context of a request run inside another (a batch's operation, docs/internals/contract.md §15; an MCP tool
 * call, §16): a Koa context of the server's own app, made as Koa makes one for a request (`createContext`), over a
 * Node request and response that stand on the outer request's own: its credentials, address and socket, seen with
 * the inner request's method, path, query string and headers, its body already parsed (body.ts's FieldReader takes
 * a body it finds parsed as it is). What the route sets on its answer (status, headers: Link, RateLimit fields;
 * body) lands on the inner response, never the outer one; whether that answer has gone, and `close`, are the outer
 * request's (an audited route's row, a plug-in's login, wait for them). `state` is the inner request's own.
 *
 * Plain objects, not objects described over the live ones: measured on a batch of 50 inserts, describing them cost
 * some 30 µs an operation, and the live request and response, made prototypes, slowed Node's own writes of every
 * answer after (V8 gives a prototype a shape of its own).
 */
export function innerContext(ctx: Koa.Context, inner: InnerRequest, state: Record<string, unknown>): Koa.Context {
  // Copied but for those, rather than copied whole and those deleted after: adding names to a copy of Node's
  // headers cost more than the copy (self time in a CPU profile of the bench's tools/call).
  const headers: Record<string, string | string[] | undefined> = {};
  const outer = ctx.req;
  const own = outer.headers;
  for (const name in own) if (!NOT_INHERITED.has(name)) headers[name] = own[name];
  for (const name in inner.headers) headers[name] = inner.headers[name];
  if (inner.body !== undefined) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = '0';
  }
  // What Koa and the routes read of a Node request, the outer request's own but for what the inner one says.
  const req = {
    headers,
    rawHeaders: [] as string[],
    method: inner.method,
    url: inner.querystring === '' ? inner.path : `${inner.path}?${inner.querystring}`,
    socket: outer.socket,
    connection: outer.socket,
    httpVersion: outer.httpVersion,
    httpVersionMajor: outer.httpVersionMajor,
    httpVersionMinor: outer.httpVersionMinor,
  };
  const res = new InnerAnswer(ctx.res);
  const sub = ctx.app.createContext(req as unknown as IncomingMessage, res as unknown as ServerResponse) as Koa.Context;
  sub.state = state;
  if (inner.body !== undefined) (sub.request as typeof sub.request & { body?: unknown }).body = inner.body;
  return sub;
}

/**
 * The context one operation of a batch runs with (docs/internals/contract.md §15): the batch request's own (its
 * credentials, its address, its request id), seen as the operation's method, path and query string, with the
 * operation's body already parsed and its own If-Match and If-None-Match. What a handler sets on its answer (a
 * status, headers: Link, RateLimit fields) stays on this context, never the batch's answer; its state is its own,
 * as a lone request's, with what routes.ts sets before a lone request's handler (the backend, the route).
 */
export function operationContext(ctx: Koa.Context, operation: CheckedOperation, body: Record<string, unknown> | undefined): Koa.Context {
  const { method, path, querystring, headers, route } = operation;
  const state = { requestId: ctx.state.requestId, backend: ctx.state.backend, resource: route.label, route: route.path };
  return innerContext(ctx, { method, path, querystring, headers, body }, state);
}

/**
 * What Koa and the routes do with a Node response, for an inner request: its status and headers kept here (they
 * are its answer's, never the outer request's), whether the answer has gone and its `close` the outer request's.
 * Koa's response keeps the body itself.
 */
class InnerAnswer {
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

  get closed(): boolean {
    return this.outer.closed;
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
