import { Unread } from './block-query.js';
import { WriteReader } from './block-writes.js';
import type { Condition } from './terms.js';
import type { Token } from './tokens.js';

/**
 * A statement's query blocks: each `select` (every subquery, derived table, CTE body and union arm its own),
 * `insert`/`replace`, `update` and `delete`, with the table references each names in its own scope and the
 * conditions that filter them. What the tenant proof (generator/analyse/tenancy.ts) reads. Structure only:
 * expressions stay opaque token runs, split only at `and` (terms.ts) and opened only where a query begins.
 * A closed list of forms: anything else makes the statement unread, which the proof refuses; it never throws.
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

/**
 * Reads `tokens` (significant tokens of `tokenize()`: no spaces, no comments) into blocks, every depth flattened in
 * reading order (a with's bodies before its query), or says which form it cannot read and where.
 */
export function readStatement(tokens: readonly Token[]): Statement {
  const reader = new Reader(tokens);
  try {
    reader.statement();
    return { blocks: reader.blocks };
  } catch (error) {
    if (error instanceof Unread) return { unread: error.form, offset: error.offset };
    // A statement nested deeper than the stack: unread (refused), never a crash of the generator.
    return { unread: 'a statement nested too deeply to read', offset: 0 };
  }
}

/** The whole reader: a statement is a query or one of the writes. */
class Reader extends WriteReader {
  statement(): void {
    if (this.is('select', 'with') || this.punct('(')) this.query([], null);
    else if (this.is('insert', 'replace')) this.insert();
    else if (this.is('update')) this.update();
    else if (this.is('delete')) this.delete();
    else this.fail(`a statement beginning with ${this.t[this.i]?.text ?? 'nothing'}`);
    if (this.punct(';')) this.i++;
    if (this.i < this.t.length) this.fail(`${this.t[this.i]!.text} after the statement`);
  }
}
