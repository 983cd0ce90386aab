import type { ListOrderTerm, ListSpec } from '../contract.js';

/**
 * A list's statement for one request, put together from its fixed pieces (docs/internals/contract.md §11): the step's
 * own statement, each filter the request sent, the keyset condition after a cursor, the order, the limit. Every
 * value is a `?`; the text comes from the resource file only. A list of n filters has 2^n shapes, so the
 * statements are made here rather than one constant each in the module; the generator puts this builder's
 * output for a list's widest shape in the module's comment, and checks it against the database.
 */
export interface ListShape {
  /** The filters the request sent, in the order the spec lists them. */
  filters: readonly ListSpec['filters'][number][];
  /** The order: the sort asked for, then the page's key. */
  order: readonly ListOrderTerm[];
  /** Whether the page goes on after a cursor: the keyset condition. */
  after: boolean;
  /** Whether the statement takes a `limit ?` (a paged list). */
  limit: boolean;
}

export function listStatement(spec: ListSpec, shape: ListShape): string {
  const conditions = shape.filters.map((filter) => filter.sql);
  if (shape.after && shape.order.length > 0) conditions.push(keysetCondition(shape.order));
  let sql = spec.sql;
  for (const [index, condition] of conditions.entries()) sql += index === 0 && !spec.where ? `\nwhere ${condition}` : `\n  and ${condition}`;
  if (spec.tail !== '') sql += `\n${spec.tail}`;
  if (shape.order.length > 0) sql += `\norder by ${shape.order.map((term) => (term.desc ? `${term.sql} desc` : term.sql)).join(', ')}`;
  if (shape.limit) sql += '\nlimit ?';
  return sql;
}

/**
 * The rows after a cursor, in the expanded form `a < ? or (a = ? and b < ?)`, each term by its own direction:
 * MariaDB serves it from an index on (a, b) as ranges, where a row comparison `(a, b) < (?, ?)` makes it read
 * the index from the start and throw away every row before the cursor (900,000 of them, a second, at that depth).
 */
export function keysetCondition(order: readonly ListOrderTerm[]): string {
  const disjuncts = order.map((term, index) =>
    [...order.slice(0, index).map((before) => `${before.sql} = ?`), `${term.sql} ${term.desc ? '<' : '>'} ?`].join(' and '),
  );
  if (disjuncts.length === 1) return disjuncts[0]!;
  return `(${disjuncts.map((disjunct, index) => (index === 0 ? disjunct : `(${disjunct})`)).join(' or ')})`;
}

/** The sort a request gets when it asks for none: the Sort's default (`-created_on`), or '' (the key's order alone). */
export function defaultSort(spec: ListSpec): string {
  const fallback = spec.sort?.default;
  return fallback ? `${fallback.desc ? '-' : ''}${fallback.name}` : '';
}

/**
 * The order of a sort (`-price`, or '' for none): its term, then the page's key as written or turned round
 * whole. Turned round when the sort asks for the other direction than its column has in the key (ascending for
 * a column the key does not hold): `-created_on` on the key `created_on desc, order_id desc` keeps it as it is,
 * `created_on` turns it round, and `price` and `-price` are one order and its reverse, so that one index
 * (price, the key's columns) serves both. Without a page, the sort alone.
 */
export function orderOf(spec: ListSpec, sort: string): ListOrderTerm[] {
  const key = spec.page?.key ?? [];
  if (sort === '' || !spec.sort) return [...key];
  const desc = sort.startsWith('-');
  const term = spec.sort.allow[desc ? sort.slice(1) : sort];
  if (!term) return [...key];
  const reverse = desc !== (key.find((part) => part.sql === term.sql)?.desc ?? false);
  return [{ ...term, desc }, ...key.filter((part) => part.sql !== term.sql).map((part) => (reverse ? { ...part, desc: !part.desc } : part))];
}

/** The values of `keysetCondition`, in its order: a; a, b; a, b, c; ... */
export function keysetValues(values: readonly unknown[]): unknown[] {
  const out: unknown[] = [];
  for (let index = 0; index < values.length; index++) out.push(...values.slice(0, index + 1));
  return out;
}
