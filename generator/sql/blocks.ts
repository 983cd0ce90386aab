import { Unread } from './block-query.js';
import type { Statement } from './block-shapes.js';
import { WriteReader } from './block-writes.js';
import type { Token } from './tokens.js';

export type { Assignment, Block, InsertInto, JoinKind, Statement, TableRef } from './block-shapes.js';

/**
 * A statement's query blocks: each `select` (every subquery, derived table, CTE body and union arm its own),
 * `insert`/`replace`, `update` and `delete`, with the table references each names in its own scope and the
 * conditions that filter them. What the tenant proof (generator/analyse/tenancy.ts) reads. Structure only:
 * expressions stay opaque token runs, split only at `and` (terms.ts) and opened only where a query begins.
 * A closed list of forms: anything else makes the statement unread, which the proof refuses; it never throws.
 */

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
