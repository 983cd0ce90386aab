import { FromReader } from './block-from.js';
import { ODKU_END, SET_END, type Stop, Unread, VALUES_END, WRITE_MODIFIERS } from './block-query.js';
import type { Assignment, Block, InsertInto, TableRef } from './block-shapes.js';
import { nameOf } from './terms.js';
import type { Token } from './tokens.js';

/** The reader's writes (generator/sql/blocks.ts): `insert`/`replace`, `update`, `delete`, their targets and assignments. */
export abstract class WriteReader extends FromReader {
  /** `[q.]col = value, …` */
  protected assignments(block: Block, stop: Stop): Assignment[] {
    const list: Assignment[] = [];
    do {
      const offset = this.t[this.i]?.start ?? 0;
      let column = nameOf(this.t[this.i]) ?? this.fail('an assignment the reader does not know');
      let qualifier: string | null = null;
      this.i++;
      if (this.punct('.')) {
        qualifier = column;
        column = nameOf(this.t[++this.i]) ?? this.fail('an assignment the reader does not know');
        this.i++;
      }
      this.expect('=');
      list.push({ qualifier, column, offset, value: this.expression(block, [], stop, true) });
    } while (this.punct(',') && ++this.i);
    return list;
  }

  protected insert(): void {
    const block = this.block(this.word() as 'insert' | 'replace');
    this.i++;
    while (this.eat(...WRITE_MODIFIERS));
    this.eat('into');
    const table = this.factorName();
    const insert: InsertInto = { table, columns: null, rows: null, select: null, odku: [] };
    block.insert = insert;
    if (this.eat('partition')) this.names();
    if (this.punct('(') && !this.queryAhead(1)) insert.columns = this.names(true);
    const stop = this.stopAt(VALUES_END);
    if (this.eat('values', 'value')) {
      insert.rows = [];
      do {
        this.expect('(');
        const row: Token[][] = [];
        while (!this.punct(')')) {
          row.push(this.expression(block, [], stop, true));
          if (!this.punct(')')) this.expect(',');
        }
        this.i++;
        insert.rows.push(row);
      } while (this.punct(',') && ++this.i);
    } else if (this.eat('set')) block.sets = this.assignments(block, stop);
    else if (this.queryAhead() || this.punct('(')) insert.select = this.query([], block);
    else this.fail('an insert the reader does not know');
    if (this.is('on') && this.word(1) === 'duplicate') {
      this.i += 2;
      this.expect('key');
      this.expect('update');
      insert.odku = this.assignments(block, this.stopAt(ODKU_END));
    }
    if (this.is('returning')) this.fail('returning');
  }

  /** An insert's target, or a single-table delete's: `[schema.]name`. */
  protected factorName(): TableRef {
    const at = this.t[this.i];
    let name = nameOf(at) ?? this.fail('a table name');
    let schema: string | null = null;
    this.i++;
    if (this.punct('.')) {
      schema = name;
      name = nameOf(this.t[++this.i]) ?? this.fail('a table name');
      this.i++;
    }
    return { schema, name, alias: null, offset: at!.start, source: 'target', join: null, on: null, using: null };
  }

  protected update(): void {
    const block = this.block('update');
    this.i++;
    while (this.eat(...WRITE_MODIFIERS));
    this.refs(block, [], 'target');
    this.expect('set');
    block.sets = this.assignments(block, this.stopAt(SET_END));
    this.tail(block, []);
  }

  protected delete(): void {
    const block = this.block('delete');
    this.i++;
    while (this.eat(...WRITE_MODIFIERS));
    const fromFirst = this.eat('from');
    const start = this.i;
    const targets = this.targetNames();
    if (!fromFirst || this.is('using')) {
      if (!this.eat(fromFirst ? 'using' : 'from')) this.fail('a delete the reader does not know');
      this.refs(block, [], 'from');
      block.deletes = targets.map(({ name, offset }) => {
        const found = block.refs.filter((ref) => (ref.alias ?? ref.name).toLowerCase() === name.toLowerCase());
        if (found.length !== 1) throw new Unread(`a deleted table (${name}) the reader cannot place`, offset);
        return found[0]!;
      });
    } else {
      this.i = start;
      this.refs(block, [], 'target');
      if (block.refs.length !== 1) this.fail('a delete the reader does not know');
      block.deletes = [...block.refs];
    }
    this.tail(block, []);
  }

  /** `a[.*], b[.*]` of a multi-table delete. */
  protected targetNames(): { name: string; offset: number }[] {
    const names: { name: string; offset: number }[] = [];
    do {
      const name = nameOf(this.t[this.i]);
      if (name === undefined) return names;
      names.push({ name, offset: this.t[this.i]!.start });
      this.i++;
      if (this.punct('.') && this.punct('*', 1)) this.i += 2;
    } while (this.punct(',') && ++this.i);
    return names;
  }
}
