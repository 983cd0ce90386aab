import type Koa from 'koa';
import { type Operation, type Queryable, type SqlValue, type ValidatorKind, VERSION_VALUE } from '../contract.js';
import { digestTag, noneMatchHolds, versionTag } from './tags.js';

/**
 * Validators on reads (docs/internals/contract.md §15): a GET's strong ETag, its 304, and the Cache-Control and
 * Vary of both. The route (routes.ts) asks `readAnswer` once per route when it is built, and the answer's text
 * then costs one SHA-256 of the string it sends anyway: no second stringify, no lookup per request.
 */

/**
 * What a `<Validator>` throws when the request's If-None-Match holds its tag: the route answers 304. One object
 * made once, not an Error: a 304 is the expected end of such a request, and a stack trace would cost more than
 * the statement it saved.
 */
export const NOT_MODIFIED: { readonly notModified: true } = Object.freeze({ notModified: true as const });

/** The headers of a GET's 200 and 304, fixed per route: who may cache it, and what it varies with. */
export interface ReadHeaders {
  cacheControl: string;
  /** Credential headers, on a protected route: a shared cache never gives one caller's answer to another. */
  vary: string | undefined;
}

/**
 * A GET route's answer with ETags: `headers` for its 200 and 304. Protected (any access but public):
 * `private, no-cache`, varying with the credentials; public: `no-cache`, or `public, max-age=<n>` with `max_age`.
 */
export function readHeaders(operation: Pick<Operation, 'access' | 'maxAge'>): ReadHeaders {
  if (operation.access !== null) return { cacheControl: 'private, no-cache', vary: 'Authorization, X-API-Key' };
  const cacheControl = operation.maxAge === undefined ? 'no-cache' : `public, max-age=${operation.maxAge}`;
  return { cacheControl, vary: undefined };
}

/** The request's tag as its `<Validator>` made it (`validate`), if it did. */
interface TagState {
  etag?: string;
  /** A tool call's route (runtime/mcp/context.ts): its answer's headers reach no client, and no If-None-Match is its. */
  untagged?: true;
}

/**
 * Answers a GET's 2xx: its tag (the validator's, else a digest of exactly the text sent), its cache headers, and
 * 304 with no body when the request's If-None-Match holds the tag.
 */
export function answerRead(ctx: Koa.Context, headers: ReadHeaders, status: number, text: string): void {
  const state = ctx.state as TagState;
  // A tool call answers the text alone: the digest nobody reads was some 4 µs of a call (a CPU profile of the bench).
  if (state.untagged === true) {
    answerText(ctx, status, text);
    return;
  }
  const tag = state.etag ?? digestTag(text);
  setReadHeaders(ctx, headers, tag);
  if (noneMatchHolds(ctx.req.headers['if-none-match'], tag)) {
    ctx.status = 304;
    return;
  }
  answerText(ctx, status, text);
}

function answerText(ctx: Koa.Context, status: number, text: string): void {
  // Koa's response and Node's, not the context's delegates (a hop each through one shared getter) nor `ctx.set`.
  const response = ctx.response;
  response.status = status;
  ctx.res.setHeader('Content-Type', 'application/json; charset=utf-8');
  response.body = text;
}

/** The 304 a `<Validator>` ended the request with (NOT_MODIFIED), with the tag it made. */
export function answerNotModified(ctx: Koa.Context, headers: ReadHeaders): void {
  setReadHeaders(ctx, headers, (ctx.state as TagState).etag as string);
  ctx.status = 304;
}

function setReadHeaders(ctx: Koa.Context, headers: ReadHeaders, tag: string): void {
  const res = ctx.res;
  res.setHeader('ETag', tag);
  res.setHeader('Cache-Control', headers.cacheControl);
  if (headers.vary === undefined) return;
  // Appended, not set, when CORS already varies the answer with Origin; set as it is otherwise (most answers).
  if (res.hasHeader('Vary')) ctx.vary(headers.vary);
  else res.setHeader('Vary', headers.vary);
}

/** What a rows validator's tag depends on besides its rows: the same rows for two callers are two tags. */
export interface ValidatorContext {
  backend: string;
  /** `<name>@<version>`. */
  resource: string;
  userId: string | undefined;
  tenant: string | undefined;
  query: string;
}

/**
 * Runs a GET's `<Validator>` (`RequestScope.validate`) on `db` (autocommit, outside any transaction) and keeps its
 * tag in `ctx.state.etag`; throws NOT_MODIFIED when the request's If-None-Match holds it. A `version` validator
 * without one canonical version (no row, several, a value that is no unsigned integer) makes no tag: the handler
 * goes on and its 200 is tagged with a digest of its bytes.
 */
export async function validateRead(
  ctx: Koa.Context,
  db: Queryable,
  sql: string,
  values: readonly SqlValue[],
  kind: ValidatorKind,
  route: ValidatorContext,
): Promise<void> {
  const rows = await db.select<Record<string, unknown>>(sql, values);
  const tag = kind === 'version' ? versionOf(rows) : digestTag(validatorText(route, rows));
  if (tag === undefined) return;
  (ctx.state as TagState).etag = tag;
  if (noneMatchHolds(ctx.req.headers['if-none-match'], tag)) throw NOT_MODIFIED;
}

/** The tag of the one row's one column, when it is a canonical unsigned integer. */
export function versionOf(rows: readonly Record<string, unknown>[]): string | undefined {
  if (rows.length !== 1) return undefined;
  const cells = Object.values(rows[0] as Record<string, unknown>);
  if (cells.length !== 1) return undefined;
  const [value] = cells;
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? versionTag(value) : undefined;
  if (typeof value === 'bigint') return value >= 0n && value <= 18446744073709551615n ? versionTag(value) : undefined;
  // mysql2 answers a BIGINT past 2^53 as its digits (bigNumberStrings).
  if (typeof value === 'string' && VERSION_VALUE.test(value) && BigInt(value) <= 18446744073709551615n) return versionTag(value);
  return undefined;
}

/**
 * The stable text a rows validator's digest is made of: a JSON array, so that no value's text runs into the next.
 * The method is always GET: HEAD is answered as GET, with GET's tags.
 */
export function validatorText(route: ValidatorContext, rows: readonly unknown[]): string {
  return JSON.stringify([route.backend, route.resource, 'GET', route.userId ?? null, route.tenant ?? null, route.query, rows], bigints);
}

function bigints(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}
