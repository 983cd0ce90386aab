import type { Condition } from './terms.js';
import type { Token } from './tokens.js';

/**
 * The shapes of a statement's query blocks (blocks.ts reads them): apart from the reader's modules, which all
 * speak of them, so that none of those imports another to name a shape.
 */

export type JoinKind = 'inner' | 'left' | 'right' | 'cross' | 'straight' | 'natural';

export interface TableRef {
  schema: string | null;
  /** The table's name (a derived table's: its alias). */
  name: string;
  alias: string | null;
  /** Token start of the name, for `file:line:col`. */
  offset: number;
  source: 'from' | 'join' | 'comma' | 'target' | 'derived' | 'cte';
  join: JoinKind | null;
  on: Condition | null;
  using: string[] | null;
}

/** `[q.]col = value` of an update's or `insert … set`'s set list, or of `on duplicate key update`. */
export interface Assignment {
  qualifier: string | null;
  column: string;
  value: Token[];
  offset: number;
}

export interface InsertInto {
  table: TableRef;
  /** The column list, null when the statement names none. */
  columns: string[] | null;
  /** `values` rows, each item a token run; null for the `set` and `select` forms. */
  rows: Token[][][] | null;
  /** `insert … select`: each union arm. */
  select: Block[] | null;
  odku: Assignment[];
}

export interface Block {
  kind: 'select' | 'insert' | 'replace' | 'update' | 'delete';
  offset: number;
  /** The references this block reads in its own scope (an insert's target is `insert.table`, not here). */
  refs: TableRef[];
  where: Condition | null;
  /** A select's list, one token run per item. */
  items: Token[][];
  /** An update's or `insert … set`'s assignments. */
  sets: Assignment[];
  /** A delete's deleted references (among `refs`). */
  deletes: TableRef[];
  insert: InsertInto | null;
  /** Blocks nested in this one: the arms of its subqueries and derived tables, and (a query's first arm) its CTE bodies. */
  children: Block[];
}

export type Statement = { blocks: Block[] } | { unread: string; offset: number };
