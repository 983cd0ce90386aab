import type { HttpMethod, Operation, RateLimit } from '../contract.js';
import { HTTP_METHODS } from '../contract.js';
import { badRequest, HttpError } from '../errors.js';
import type { ScopeOptions } from '../scope.js';

/**
 * One of a backend's resource routes as a batch runs it (docs/internals/contract.md §15): what routes.ts mounted for
 * it, so that an operation goes through the very handler, options, limit and audit a lone request does.
 */
export interface BatchRoute {
  /** `<name>@<version>`, as the log and the lists' cursors name the route. */
  label: string;
  /** The route's path, as registered. */
  path: string;
  operation: Operation;
  scope: ScopeOptions;
  /** A public limited route counts each client address under this key's prefix (routes.ts); else undefined. */
  byAddress: { route: string; rule: RateLimit } | undefined;
}

/** The backend's resource routes by method and path: nothing else (no token or session door, no docs, no batch). */
export interface BatchRoutes {
  find(method: string, path: string): BatchRoute | undefined;
}

/** An operation checked before any runs: its route, its query string, its body and the headers it may carry. */
export interface CheckedOperation {
  method: HttpMethod;
  route: BatchRoute;
  /** The path as sent, without its query string. */
  path: string;
  querystring: string;
  body: Record<string, unknown> | undefined;
  /** `if-match` and `if-none-match`, in lower case, when sent. */
  headers: Record<string, string>;
}

/** The only headers an operation may carry: its preconditions. Credentials are the batch's own. */
const OPERATION_HEADERS = new Set(['if-match', 'if-none-match']);

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The batch's body, checked whole before any operation runs: `{"operations": [...]}` with 1 to `max` operations,
 * each a method of its route and a path of one of the backend's resource routes, headers only If-Match and
 * If-None-Match. Any fault is a 400 naming the operation's index, and nothing runs.
 */
export function checkOperations(body: unknown, max: number, routes: BatchRoutes): CheckedOperation[] {
  if (!isObject(body) || !Array.isArray(body.operations)) throw badRequest('A batch is {"operations": [...]}');
  const extra = Object.keys(body).find((key) => key !== 'operations');
  if (extra !== undefined) throw badRequest(`A batch is {"operations": [...]}, with no other field: ${JSON.stringify(extra)}`);
  const operations: unknown[] = body.operations;
  if (operations.length === 0 || operations.length > max) throw badRequest(`A batch has 1 to ${max} operations, not ${operations.length}`);
  return operations.map((operation, index) => checkOperation(operation, index, routes));
}

/**
 * What routes.ts refuses of a lone call before its handler runs, refused of a batch's operations before any runs
 * (400): If-Match on a write with no version column (alone it is never ignored, so it is not here either: a client
 * would believe its overwrite conditional), and a POST whose route requires an Idempotency-Key in a batch sent
 * without one (the batch's key is the operations' key).
 */
export function refuseUnrunnable(operations: readonly CheckedOperation[], keyed: boolean): void {
  operations.forEach((operation, index) => {
    const { method, route, headers } = operation;
    if (method !== 'GET' && route.operation.version === undefined && (headers['if-match'] ?? '') !== '') {
      throw badRequest(`Operation ${index}: If-Match is not taken here: this write has no version column to compare`);
    }
    if (!keyed && method === 'POST' && route.operation.idempotency === 'required') {
      throw new HttpError(400, `Operation ${index}: this request requires an Idempotency-Key header: send it with the batch`, {}, 'idempotency_key_required');
    }
  });
}

function checkOperation(operation: unknown, index: number, routes: BatchRoutes): CheckedOperation {
  const refuse = (what: string) => badRequest(`Operation ${index}: ${what}`);
  if (!isObject(operation)) throw refuse('is an object {"method", "path", "body", "headers"}');
  for (const key of Object.keys(operation)) if (!['method', 'path', 'body', 'headers'].includes(key)) throw refuse(`unknown field ${JSON.stringify(key)}`);
  const { method, path, body, headers } = operation;
  if (typeof method !== 'string' || !HTTP_METHODS.includes(method as HttpMethod)) throw refuse(`method is one of ${HTTP_METHODS.join(', ')}`);
  if (typeof path !== 'string' || !path.startsWith('/')) throw refuse('path is a path beginning with /');
  const question = path.indexOf('?');
  const bare = question < 0 ? path : path.slice(0, question);
  const route = routes.find(method, bare);
  // A token or session door, the docs, the batch itself or another backend's path are not resource routes here.
  if (route === undefined) throw refuse(`${method} ${bare} is not a resource route of this backend`);
  if (body !== undefined && !isObject(body)) throw refuse('body is an object');
  const checked: Record<string, string> = {};
  if (headers !== undefined) {
    if (!isObject(headers)) throw refuse('headers is an object');
    for (const [name, value] of Object.entries(headers)) {
      const lower = name.toLowerCase();
      if (!OPERATION_HEADERS.has(lower)) throw refuse(`header ${JSON.stringify(name)} is not taken: only If-Match and If-None-Match`);
      if (typeof value !== 'string') throw refuse(`header ${name} is a string`);
      checked[lower] = value;
    }
  }
  return {
    method: method as HttpMethod,
    route,
    path: bare,
    querystring: question < 0 ? '' : path.slice(question + 1),
    body: body as Record<string, unknown> | undefined,
    headers: checked,
  };
}
