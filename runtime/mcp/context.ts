import type { ServerResponse } from 'node:http';
import type Koa from 'koa';

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
}

/** The MCP request's headers a tool call does not inherit: its body's, and the preconditions, which are the call's own. */
const NOT_INHERITED = ['content-length', 'transfer-encoding', 'content-type', 'content-encoding', 'if-match', 'if-none-match', 'idempotency-key'];

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
 * Batches make theirs with runtime/batch/context.ts, one object made with its properties described; this one
 * takes Koa's own path, which V8 keeps fast: the described objects cost some 30 µs a call and slowed every
 * property read the route made of them, which a tool call of a one-row read felt as a third of its time.
 */
export function toolContext(ctx: Koa.Context, call: ToolRequest): Koa.Context {
  const headers: Record<string, string | string[] | undefined> = { ...ctx.req.headers };
  for (const name of NOT_INHERITED) headers[name] = undefined;
  Object.assign(headers, call.headers);
  if (call.body !== undefined) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = '0';
  }
  const req = Object.create(ctx.req) as typeof ctx.req;
  req.headers = headers as typeof req.headers;
  req.method = call.method;
  req.url = call.querystring === '' ? call.path : `${call.path}?${call.querystring}`;
  const real = ctx.res;
  const kept = new Map<string, number | string | string[]>();
  const res = Object.create(real) as Record<string, unknown>;
  res.setHeader = (name: string, value: number | string | string[]) => {
    kept.set(name.toLowerCase(), value);
    return res;
  };
  res.getHeader = (name: string) => kept.get(name.toLowerCase());
  res.hasHeader = (name: string) => kept.has(name.toLowerCase());
  res.removeHeader = (name: string) => void kept.delete(name.toLowerCase());
  res.getHeaderNames = () => [...kept.keys()];
  res.getHeaders = () => Object.fromEntries(kept) as ReturnType<ServerResponse['getHeaders']>;
  // Listeners on the response that closes: the MCP request's.
  res.once = (event: string, listener: (...args: unknown[]) => void) => {
    real.once(event, listener);
    return res;
  };
  const sub = ctx.app.createContext(req, res as unknown as ServerResponse) as Koa.Context;
  sub.state = { requestId: ctx.state.requestId, trace: ctx.state.trace };
  if (call.body !== undefined) (sub.request as typeof sub.request & { body?: unknown }).body = call.body;
  return sub;
}

/** Who the call's route found the caller to be, on the MCP request's state for its log line, unless it says already. */
export function callerFound(ctx: Koa.Context, sub: Koa.Context): void {
  if (ctx.state.userId !== undefined) return;
  for (const name of CALLER) if (sub.state[name] !== undefined) ctx.state[name] = sub.state[name];
}
