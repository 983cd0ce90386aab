import type { SqlValue } from '../db/index.js';

/**
 * A read step that is a list (docs/internals/contract.md §11), in fixed pieces the generator checked against the
 * database; the runtime puts together the statement a request needs (runtime/lists/statement.ts), every
 * value a `?` parameter. The pieces are SQL from the resource file, never from a request.
 */
export interface ListSpec {
  /** The statement up to where the list's conditions go; its own WHERE condition, when it has one, comes first. */
  readonly sql: string;
  /** Whether `sql` has a WHERE clause: the conditions then join it with `and`. */
  readonly where: boolean;
  /** What follows the conditions (a list without Page or Sort may keep its GROUP BY, ORDER BY, LIMIT); usually empty. */
  readonly tail: string;
  /** Each a condition added when its parameter is sent, `uses` times `?` for its value. */
  readonly filters: readonly { readonly param: string; readonly sql: string; readonly uses: number }[];
  /** The orders a caller may ask for by name (`?sort=-price`), and the one used when none is asked for. */
  readonly sort: {
    readonly param: string;
    readonly allow: Readonly<Record<string, ListOrderTerm>>;
    readonly default: { readonly name: string; readonly desc: boolean } | null;
  } | null;
  /** Keyset pages: a page of `size` rows unless `limit` asks for another number (at most `max`), in the key's order. */
  readonly page: { readonly size: number; readonly max: number; readonly key: readonly ListOrderTerm[] } | null;
}

/** One term of a list's order: its SQL, the result column that holds its value, and what that value is in a row. */
export interface ListOrderTerm {
  readonly sql: string;
  readonly column: string;
  readonly desc: boolean;
  readonly type: 'number' | 'string' | 'Date';
}

/** A list's statement for one request, and (paged) what comes after its rows. */
export interface ListQuery {
  readonly sql: string;
  /** The statement's values: the step's own (`head`, as its text binds them), then the filters', the cursor's and the limit. */
  values(...head: SqlValue[]): SqlValue[];
  /** The page of `rows` (the statement reads one row more than the page, to know whether another follows); sets `next` and the Link header. */
  page<Row>(rows: Row[]): Row[];
  /** The cursor of the next page, or null on the last page. */
  readonly next: string | null;
}
