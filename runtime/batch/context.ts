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

/**
 * The context one operation of a batch runs with (docs/internals/contract.md §15): the batch request's own (its
 * credentials, its address, its request id), seen as the operation's method, path and query string, with the
 * operation's body already parsed (body.ts's FieldReader takes a body it finds parsed as it is) and its own
 * If-Match and If-None-Match. What a handler sets on its answer (a status, headers: Link, RateLimit fields) stays
 * on this context, never the batch's answer; its state is its own, as a lone request's.
 */
export function operationContext(ctx: Koa.Context, operation: CheckedOperation, body: Record<string, unknown> | undefined): Koa.Context {
  const headers: Record<string, string | string[] | undefined> = { ...ctx.headers };
  for (const name of NOT_INHERITED) delete headers[name];
  Object.assign(headers, operation.headers);
  // A body to read: the FieldReader looks for one by these headers, then finds it parsed.
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = '0';
  }
  const url = operation.querystring === '' ? operation.path : `${operation.path}?${operation.querystring}`;
  const fixed = (value: unknown): PropertyDescriptor => ({ value, enumerable: true, writable: true, configurable: true });
  const req = Object.create(ctx.req, { headers: fixed(headers), method: fixed(operation.method), url: fixed(url) });
  const location = { method: fixed(operation.method), path: fixed(operation.path), querystring: fixed(operation.querystring), url: fixed(url) };
  const request = Object.create(ctx.request, { ...location, req: fixed(req), headers: fixed(headers), body: fixed(body) });
  const answer: Record<string, string> = {};
  const set = (field: string | Record<string, string>, value?: string) => {
    if (typeof field === 'string') answer[field.toLowerCase()] = String(value);
    else for (const [name, text] of Object.entries(field)) answer[name.toLowerCase()] = String(text);
  };
  const state = { requestId: ctx.state.requestId, backend: ctx.state.backend, resource: operation.route.label, route: operation.route.path };
  return Object.create(ctx, {
    ...location,
    req: fixed(req),
    request: fixed(request),
    headers: fixed(headers),
    header: fixed(headers),
    get: fixed((name: string) => {
      const value = headers[name.toLowerCase()];
      return Array.isArray(value) ? value.join(', ') : (value ?? '');
    }),
    state: fixed(state),
    set: fixed(set),
    append: fixed(set),
    remove: fixed((name: string) => delete answer[name.toLowerCase()]),
    response: fixed(Object.create(ctx.response, { set: fixed(set), status: fixed(undefined), body: fixed(undefined) })),
    status: fixed(undefined),
    body: fixed(undefined),
  }) as Koa.Context;
}
