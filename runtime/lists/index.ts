import { createHash } from 'node:crypto';
import type { BackendModule, ListOrderTerm, ListQuery, ListSpec, SqlValue } from '../contract.js';
import { badRequest } from '../errors.js';
import type { CursorKey } from './cursor.js';
import { defaultSort, keysetValues, type ListShape, listStatement, orderOf } from './statement.js';

/**
 * Lists that scale (docs/internals/contract.md §11): optional filters, a sort chosen by name, keyset pages. The runtime's
 * whole part of it is `Lists.open`: a request's statement from the list's fixed pieces (statement.ts), its
 * values in that statement's order, and after the rows the next page's cursor (cursor.ts) and Link header.
 */
export { CursorKey } from './cursor.js';
export { keysetCondition, listStatement } from './statement.js';

/** The backends with a paged route: each signs its cursors with the server's key (JWT_SECRET). */
export function pagedBackends(backends: readonly BackendModule[]): string[] {
  return backends
    .filter((backend) => backend.resources.some((resource) => Object.values(resource.operations).some((operation) => operation?.pages)))
    .map((backend) => backend.name);
}

/** What a list needs of the request it answers. */
export interface ListRequest {
  /** The route, as the cursor is bound to it: backend, resource and version, method. */
  route: string;
  /** The caller, on a protected route: another user's cursor does not open. */
  user: string | undefined;
  /** The caller's outside issuer (docs/internals/contract.md §9), when it has one: nor does a user's of another issuer. */
  issuer?: string | undefined;
  /** The caller's tenant on a tenant backend (docs/internals/contract.md §14): another tenant's cursor does not open. */
  tenant?: string | undefined;
  /** The path the request was sent to, for the Link header. */
  path: string;
  link(value: string): void;
}

const FORGED =
  "Parameter 'after' is not a cursor of this list: it was changed, made for another list or user, or the list has changed since; start again without it";

export class Lists {
  /** The server's cursor key, made on first use (a server with no paged route needs no JWT_SECRET for it). */
  constructor(private readonly key: () => CursorKey) {}

  open(spec: ListSpec, params: object, request: ListRequest): ListQuery {
    const values = params as Record<string, unknown>;
    // A filter sent as JSON null is not sent: the Link header could not send it on either.
    const filters = spec.filters.filter((filter) => values[filter.param] !== undefined && values[filter.param] !== null);
    const asked = spec.sort && typeof values[spec.sort.param] === 'string' ? (values[spec.sort.param] as string) : undefined;
    let sort = asked ?? defaultSort(spec);
    let after: unknown[] | undefined;
    // An outside user's issuer is a member of its own: no user id of the backend, or of another issuer, makes the same binding.
    const binding = spec.page ? cursorBinding(request, fingerprint(spec)) : '';
    if (spec.page && typeof values.after === 'string') {
      const opened = this.key().open(values.after, binding);
      const cursor = opened === undefined ? undefined : parseCursor(opened);
      if (!cursor) throw badRequest(FORGED);
      // The cursor remembers its sort: a page goes on in the order it began with.
      if (asked !== undefined && asked !== cursor.sort) {
        throw badRequest(
          `Parameter '${spec.sort?.param ?? 'sort'}' is not the sort its cursor 'after' was made for (${cursor.sort || 'none'}): send that one, or none`,
        );
      }
      sort = cursor.sort;
      after = cursor.values;
    }
    const order = orderOf(spec, sort);
    if (after !== undefined && !fits(after, order)) throw badRequest(FORGED);
    const limit = spec.page ? (typeof values.limit === 'number' ? values.limit : spec.page.size) : undefined;
    const shape: ListShape = { filters, order, after: after !== undefined, limit: limit !== undefined };
    const page = limit === undefined ? undefined : { limit, sort, binding, key: this.key(), request };
    return new ListPage(statementOf(spec, shape, sort), shape, values, after, page);
  }
}

/** What a paged list needs after its rows: how many make a page, and how to say where the next begins. */
interface Paging {
  limit: number;
  /** The sort the cursor remembers ('' for none). */
  sort: string;
  binding: string;
  key: CursorKey;
  request: ListRequest;
}

/** One request's list: its statement and values, then its page. */
class ListPage implements ListQuery {
  next: string | null = null;

  constructor(
    readonly sql: string,
    private readonly shape: ListShape,
    private readonly params: Record<string, unknown>,
    private readonly after: unknown[] | undefined,
    private readonly paging: Paging | undefined,
  ) {}

  values(...head: SqlValue[]): SqlValue[] {
    const values: SqlValue[] = head;
    for (const filter of this.shape.filters) for (let use = 0; use < filter.uses; use++) values.push(this.params[filter.param]);
    if (this.after !== undefined) values.push(...keysetValues(this.after));
    // One row more than the page: whether another page follows, without counting.
    if (this.paging !== undefined) values.push(this.paging.limit + 1);
    return values;
  }

  page<Row>(rows: Row[]): Row[] {
    const paging = this.paging;
    if (paging === undefined || rows.length <= paging.limit) return rows;
    const page = rows.slice(0, paging.limit);
    const last = page.at(-1) as Record<string, unknown>;
    this.next = paging.key.sign(JSON.stringify([paging.sort, ...this.shape.order.map((term) => cursorValue(last, term))]), paging.binding);
    // The same list, filters and limit; the sort is in the cursor: only `after` changes. (Parameter names are
    // names, and a cursor is base64url and a dot: only the values need encoding.)
    let query = '';
    for (const name in this.params) {
      const value = this.params[name];
      if (name !== 'after' && value !== undefined && value !== null) query += `${name}=${encodeURIComponent(String(value))}&`;
    }
    paging.request.link(`<${paging.request.path}?${query}after=${this.next}>; rel="next"`);
    return page;
  }
}

/** A key's value in a cursor: a number, a text, or a time as its milliseconds. */
function cursorValue(row: Record<string, unknown>, term: ListOrderTerm): unknown {
  const value = row[term.column];
  if (value instanceof Date) return value.getTime();
  if (value === null || value === undefined) throw new Error(`list key column ${term.column} is null in a row: a page key must never be null`);
  return value;
}

/** A cursor's payload: the sort it was made in, then the key values, as `page` wrote it. */
function parseCursor(payload: string): { sort: string; values: unknown[] } | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload);
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed) || typeof parsed[0] !== 'string') return undefined;
  return { sort: parsed[0], values: parsed.slice(1) };
}

/**
 * Whether a cursor's values are what the order's columns hold, each converted to what the statement binds: a
 * number, a text, a time. Checked even though the cursor is signed: its values reach SQL as typed parameters only.
 */
function fits(values: unknown[], order: readonly ListOrderTerm[]): boolean {
  if (values.length !== order.length) return false;
  for (const [index, term] of order.entries()) {
    const value = values[index];
    if (term.type === 'number' && !(typeof value === 'number' && Number.isFinite(value))) return false;
    if (term.type === 'string' && typeof value !== 'string') return false;
    if (term.type === 'Date') {
      if (!Number.isSafeInteger(value)) return false;
      values[index] = new Date(value as number);
    }
  }
  return true;
}

/** What a cursor is bound to of its list: the order terms it can take. A list whose order changed refuses older cursors. */
const fingerprints = new WeakMap<ListSpec, string>();
function fingerprint(spec: ListSpec): string {
  let known = fingerprints.get(spec);
  if (known === undefined) {
    known = createHash('sha256')
      .update(JSON.stringify([spec.page?.key ?? [], spec.sort?.allow ?? {}]))
      .digest('base64url')
      .slice(0, 22);
    fingerprints.set(spec, known);
  }
  return known;
}

/** Each shape's statement, made once (up to 256 a list): a request of a shape seen before costs a lookup. */
const statements = new WeakMap<ListSpec, Map<string, string>>();
function statementOf(spec: ListSpec, shape: ListShape, sort: string): string {
  let bySpec = statements.get(spec);
  if (!bySpec) statements.set(spec, (bySpec = new Map()));
  const key = `${shape.filters.map((filter) => spec.filters.indexOf(filter)).join(',')}|${sort}|${shape.after ? 1 : 0}`;
  let sql = bySpec.get(key);
  if (sql !== undefined) return sql;
  sql = listStatement(spec, shape);
  // Bounded: the shapes are the callers' to choose (2^n of n filters), and memory is not.
  if (bySpec.size < 256) bySpec.set(key, sql);
  return sql;
}

/**
 * What a cursor is bound to: the route, the list's order and key, the caller; an outside user's issuer a member of
 * its own, and a tenant backend's caller's tenant another.
 */
function cursorBinding(request: ListRequest, fingerprint: string): string {
  const bound: (string | null | string[])[] = [request.route, fingerprint, request.user ?? null];
  if (request.issuer !== undefined) bound.push(request.issuer);
  // The tenant a member of its own shape (an array), so that no issuer's text stands for it; a list without one binds as before.
  if (request.tenant !== undefined) bound.push(['tenant', request.tenant]);
  return JSON.stringify(bound);
}
