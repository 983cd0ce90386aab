import { type Condition, nameOf, readCondition } from './terms.js';
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
  /** Blocks nested in this one: subqueries, derived tables, CTE bodies, union arms after the first. */
  children: Block[];
}

export type Statement = { blocks: Block[] } | { unread: string; offset: number };

class Unread {
  constructor(
    readonly form: string,
    readonly offset: number,
  ) {}
}

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

const CLAUSES = ['from', 'where', 'group', 'having', 'window', 'order', 'limit', 'for', 'lock', 'into', 'returning'];
const ARM_ENDS = ['union', 'intersect', 'except', 'on'];
const JOINS = ['join', 'inner', 'cross', 'straight_join', 'natural', 'left', 'right'];
/** Words that end a table reference rather than alias it. */
const NOT_ALIAS = new Set([...CLAUSES, ...ARM_ENDS, ...JOINS, 'outer', 'using', 'set', 'values', 'value', 'select', 'partition', 'use', 'ignore', 'force']);
const SELECT_MODIFIERS = [
  'all',
  'distinct',
  'distinctrow',
  'high_priority',
  'straight_join',
  'sql_small_result',
  'sql_big_result',
  'sql_buffer_result',
  'sql_cache',
];
SELECT_MODIFIERS.push('sql_no_cache', 'sql_calc_found_rows');
const WRITE_MODIFIERS = ['low_priority', 'delayed', 'high_priority', 'quick', 'ignore'];

type Stop = (at: number) => boolean;
/** Where an expression ends at depth 0, by context (built once: a statement is read in microseconds). */
const ITEM_END = new Set([...CLAUSES, ...ARM_ENDS]);
const CLAUSE_END = new Set([...CLAUSES, ...ARM_ENDS, 'set']);
const ON_END = new Set([...CLAUSES, ...ARM_ENDS, ...JOINS, 'set', 'using']);
const SET_END = new Set(CLAUSES);
const VALUES_END = new Set(['on', 'returning']);
const ODKU_END = new Set(['returning']);
/** Words an expression cannot end with. */
const MISPLACED = new Set(['select', 'table', 'into', 'lateral']);
const DANGLING = new Set([
  'and',
  'or',
  'xor',
  'not',
  'between',
  'like',
  'rlike',
  'regexp',
  'is',
  'in',
  'case',
  'when',
  'then',
  'else',
  'div',
  'mod',
  'escape',
  'interval',
  'binary',
  'collate',
  'distinct',
  'exists',
  'any',
  'some',
  'all',
]);

class Reader {
  i = 0;
  readonly blocks: Block[] = [];
  /** Each token's lower-case text when it is a word (keywords are compared without regard to case). */
  private readonly words: (string | undefined)[];
  private readonly itemEnd: Stop = this.stopAt(ITEM_END);
  private readonly clauseEnd: Stop = this.stopAt(CLAUSE_END);
  private readonly onEnd: Stop = this.stopAt(ON_END);
  constructor(readonly t: readonly Token[]) {
    this.words = t.map((token) => (token.type === 'word' ? token.text.toLowerCase() : undefined));
  }

  private word(k = 0): string | undefined {
    return this.words[this.i + k];
  }
  private is(...words: string[]): boolean {
    return words.includes(this.word() ?? '\0');
  }
  private punct(text: string, k = 0): boolean {
    const token = this.t[this.i + k];
    return token?.type === 'punct' && token.text === text;
  }
  private eat(...words: string[]): boolean {
    return this.is(...words) && ++this.i > 0;
  }
  private expect(text: string): void {
    if (this.word() === text || this.punct(text)) this.i++;
    else this.fail(`${this.t[this.i]?.text ?? 'the end'} where ${text} was expected`);
  }
  fail(form: string): never {
    throw new Unread(form, this.t[Math.min(this.i, this.t.length - 1)]?.start ?? 0);
  }
  private block(kind: Block['kind']): Block {
    const block: Block = { kind, offset: this.t[this.i]?.start ?? 0, refs: [], where: null, items: [], sets: [], deletes: [], insert: null, children: [] };
    this.blocks.push(block);
    return block;
  }
  private queryAhead(k = 0): boolean {
    return ['select', 'with'].includes(this.word(k) ?? '');
  }

  statement(): void {
    if (this.is('select', 'with') || this.punct('(')) this.query([], null);
    else if (this.is('insert', 'replace')) this.insert();
    else if (this.is('update')) this.update();
    else if (this.is('delete')) this.delete();
    else this.fail(`a statement beginning with ${this.t[this.i]?.text ?? 'nothing'}`);
    if (this.punct(';')) this.i++;
    if (this.i < this.t.length) this.fail(`${this.t[this.i]!.text} after the statement`);
  }

  /** `[with …] arm (union|intersect|except [all|distinct] arm)*`; each arm's blocks are children of `parent`. */
  private query(ctes: readonly string[], parent: Block | null): Block[] {
    let visible = ctes;
    const bodies: Block[] = [];
    if (this.eat('with')) {
      const recursive = this.eat('recursive');
      const defined: { name: string; start: number }[] = [];
      do {
        const name = nameOf(this.t[this.i]);
        if (name === undefined) this.fail('a with clause the reader does not know');
        this.i++;
        if (this.punct('(')) this.names();
        this.expect('as');
        if (!this.punct('(')) this.fail('a with clause the reader does not know');
        defined.push({ name, start: ++this.i });
        this.skipParenthesised();
      } while (this.punct(',') && ++this.i);
      const after = this.i;
      defined.forEach((cte, k) => {
        // A recursive with's bodies see every name of it; a plain one's see the earlier ones only.
        const seen = [...ctes, ...(recursive ? defined : defined.slice(0, k)).map((d) => d.name)];
        this.i = cte.start;
        bodies.push(...this.query(seen, null));
        this.expect(')');
      });
      this.i = after;
      visible = [...ctes, ...defined.map((d) => d.name)];
    }
    const arms = this.arm(visible);
    while (this.eat('union', 'intersect', 'except')) {
      this.eat('all', 'distinct');
      arms.push(...this.arm(visible));
    }
    if (this.is('order', 'limit')) this.tail(arms.at(-1)!, visible);
    parent?.children.push(...arms);
    arms[0]!.children.push(...bodies);
    return arms;
  }

  /**
   * One arm, or every arm of a parenthesised union: `insert … (select a, $tenant union select b, 2)` writes the rows
   * of each, so each must be seen where an arm's select list is read.
   */
  private arm(ctes: readonly string[]): Block[] {
    if (!this.punct('(')) return [this.select(ctes)];
    this.i++;
    if (!this.queryAhead()) this.fail('a parenthesised form the reader does not know');
    const arms = this.query(ctes, null);
    this.expect(')');
    return arms;
  }

  private select(ctes: readonly string[]): Block {
    const block = this.block('select');
    this.expect('select');
    while (this.eat(...SELECT_MODIFIERS));
    do block.items.push(this.expression(block, ctes, this.itemEnd, true));
    while (this.punct(',') && ++this.i);
    if (this.eat('from')) this.refs(block, ctes, 'from');
    this.tail(block, ctes);
    return block;
  }

  /** `where`, `group by`, `having`, `window`, `order by`, `limit`, `for update|share`, `lock in share mode`. */
  private tail(block: Block, ctes: readonly string[]): void {
    const stop = this.clauseEnd;
    for (;;) {
      if (this.eat('where')) {
        if (block.where) this.fail('a second where');
        block.where = readCondition(this.expression(block, ctes, stop, false));
      } else if (this.is('group', 'order') && this.word(1) === 'by') {
        this.i += 2;
        this.expression(block, ctes, stop, false);
      } else if (this.eat('having', 'window', 'limit')) this.expression(block, ctes, stop, false);
      else if (this.eat('for')) {
        if (!this.eat('update', 'share')) this.fail(`for ${this.t[this.i]?.text ?? ''}`);
        if (this.eat('of')) this.targetNames();
        if (this.eat('skip')) this.expect('locked');
        else if (this.eat('wait') && this.t[this.i]?.type === 'number') this.i++;
        else this.eat('nowait');
      } else if (this.is('lock') && this.word(1) === 'in') {
        this.i += 2;
        this.expect('share');
        this.expect('mode');
      } else if (this.is('into')) this.fail('select … into');
      else if (this.is('returning')) this.fail('returning');
      else return;
    }
  }

  /** A stop at depth 0: any of `words` (never `left(`/`right(`, functions), or a `;`. */
  private stopAt(words: ReadonlySet<string>): Stop {
    return (at) => {
      const w = this.words[at];
      if (w === undefined) return this.t[at]!.type === 'punct' && this.t[at]!.text === ';';
      return words.has(w) && !((w === 'left' || w === 'right') && this.t[at + 1]?.text === '(');
    };
  }

  /**
   * An opaque expression up to `stop`, a `)` at depth 0, or (`commas`) a `,` at depth 0. Every `(select`/`(with`
   * inside is read as a query whose arms become `block`'s children; any other place a query could hide is refused.
   */
  private expression(block: Block, ctes: readonly string[], stop: Stop, commas: boolean): Token[] {
    const start = this.i;
    let depth = 0;
    for (; this.i < this.t.length; this.i++) {
      const token = this.t[this.i]!;
      const w = this.words[this.i];
      if (w !== undefined) {
        if (depth === 0 && stop(this.i)) break;
        // Where a query could hide outside `(select`/`(with`, or an into/lateral the reader does not follow.
        const misplaced = MISPLACED.has(w) || (w === 'with' && this.word(1) !== 'rollup') || (w === 'values' && !this.punct('(', 1));
        if (misplaced) this.fail(`${token.text} where the reader expects none`);
        continue;
      }
      if (token.type !== 'punct') continue;
      const text = token.text;
      if (depth === 0 && (text === ')' || (commas && text === ',') || text === ';')) break;
      if (text === '@') this.fail('a user or system variable (@)');
      if (text === ':' && this.punct('=', 1)) this.fail('an assignment (:=)');
      if (text === ')') depth--;
      else if (text === '(') {
        const next = this.word(1);
        if (next === 'values' || next === 'table') this.fail(`${next} where the reader expects none`);
        if (next !== 'select' && next !== 'with') depth++;
        else {
          this.i++;
          this.query(ctes, block);
          if (!this.punct(')')) this.fail('a subquery the reader does not know');
        }
      }
    }
    if (depth !== 0) this.fail('unbalanced parentheses');
    if (this.i === start) this.fail(`${this.t[this.i]?.text ?? 'the end'} where an expression was expected`);
    // An expression cut after an operator means a stop word the database reads as a name (`… and window or 1`):
    // the rest belongs to it, so the cut is the reader's mistake, never a filter to trust.
    const last = this.t[this.i - 1]!;
    // `?` is a value: a list's widest statement holds them, and the facts of its tables are asked from that text.
    if (
      (last.type === 'punct' && last.text !== ')' && last.text !== '*' && last.text !== '?') ||
      (last.type === 'word' && DANGLING.has(last.text.toLowerCase()))
    ) {
      this.fail(`an expression cut at ${this.t[this.i]?.text ?? 'the end'}`);
    }
    return this.t.slice(start, this.i);
  }

  /** `ref (, ref | join ref [on …|using (…)])*` into `block.refs`. */
  private refs(block: Block, ctes: readonly string[], first: TableRef['source']): void {
    this.factor(block, ctes, first, null);
    for (;;) {
      if (this.punct(',')) {
        this.i++;
        this.factor(block, ctes, 'comma', null);
        continue;
      }
      const kind = this.joinKind();
      if (kind === undefined) return;
      const ref = this.factor(block, ctes, 'join', kind);
      if (this.eat('on')) ref.on = readCondition(this.expression(block, ctes, this.onEnd, true));
      else if (this.eat('using')) ref.using = this.names();
    }
  }

  private joinKind(): JoinKind | undefined {
    const start = this.i;
    let kind: JoinKind | undefined;
    if (this.eat('join')) return 'inner';
    if (this.eat('straight_join')) return 'straight';
    if (this.eat('natural')) kind = 'natural';
    if (this.eat('inner')) kind ??= 'inner';
    else if (this.eat('cross')) kind ??= 'cross';
    else if (this.eat('left')) kind ??= 'left';
    else if (this.eat('right')) kind ??= 'right';
    if (kind === undefined) return undefined;
    this.eat('outer');
    if (!this.eat('join')) {
      this.i = start;
      return undefined;
    }
    return kind;
  }

  /** One table factor: `name [partition (…)] [[as] alias] [index hints]`, `(select …) alias`, `json_table(…) alias`. */
  private factor(block: Block, ctes: readonly string[], source: TableRef['source'], join: JoinKind | null): TableRef {
    const at = this.t[this.i];
    const ref: TableRef = { schema: null, name: '', alias: null, offset: at?.start ?? 0, source, join, on: null, using: null };
    if (this.punct('(')) {
      this.i++;
      if (!this.queryAhead()) this.fail('a parenthesised join');
      this.query(ctes, block);
      this.expect(')');
      ref.source = 'derived';
    } else if (this.word() === 'json_table' && this.punct('(', 1)) {
      this.i += 2;
      this.expression(block, ctes, () => false, false);
      this.expect(')');
      ref.source = 'derived';
    } else {
      const name = nameOf(at);
      if (name === undefined || (at!.type === 'word' && NOT_ALIAS.has(name.toLowerCase())) || this.is('lateral')) {
        this.fail(`${at?.text ?? 'the end'} where a table was expected`);
      }
      this.i++;
      ref.name = name;
      if (this.punct('.')) {
        ref.schema = name;
        ref.name = nameOf(this.t[++this.i]) ?? this.fail('a table name');
        this.i++;
        if (this.punct('.')) this.fail('a three-part table name');
      }
      if (ref.schema === null && ctes.includes(name)) ref.source = 'cte';
      if (this.is('for') && this.word(1) === 'system_time') this.fail('for system_time');
      if (this.eat('partition')) this.names();
    }
    const named = this.eat('as');
    const alias = nameOf(this.t[this.i]);
    if (alias !== undefined && (named || this.t[this.i]!.type === 'quoted' || !NOT_ALIAS.has(alias.toLowerCase()))) {
      ref.alias = alias;
      this.i++;
    } else if (named || ref.source === 'derived') this.fail('a derived table without an alias');
    if (ref.source === 'derived') {
      ref.name = ref.alias!;
      if (this.punct('(')) this.names();
    }
    while (this.is('use', 'ignore', 'force') && ['index', 'key'].includes(this.word(1) ?? '')) {
      this.i += 2;
      if (this.eat('for')) this.eat('join') || (this.eat('order', 'group') && this.eat('by')) || this.fail('an index hint');
      this.names(true);
    }
    block.refs.push(ref);
    return ref;
  }

  /** `(a, b, …)`: names (possibly none, for index hints). */
  private names(empty = false): string[] {
    this.expect('(');
    const names: string[] = [];
    while (!this.punct(')') || (!empty && names.length === 0)) {
      const name = nameOf(this.t[this.i]) ?? this.fail('a list of names');
      names.push(name);
      this.i++;
      if (!this.punct(')')) this.expect(',');
    }
    this.i++;
    return names;
  }

  private skipParenthesised(): void {
    for (let depth = 1; depth > 0; this.i++) {
      if (this.i >= this.t.length) this.fail('unbalanced parentheses');
      if (this.punct('(')) depth++;
      else if (this.punct(')')) depth--;
    }
  }

  /** `[q.]col = value, …` */
  private assignments(block: Block, stop: Stop): Assignment[] {
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

  private insert(): void {
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
  private factorName(): TableRef {
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

  private update(): void {
    const block = this.block('update');
    this.i++;
    while (this.eat(...WRITE_MODIFIERS));
    this.refs(block, [], 'target');
    this.expect('set');
    block.sets = this.assignments(block, this.stopAt(SET_END));
    this.tail(block, []);
  }

  private delete(): void {
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
  private targetNames(): { name: string; offset: number }[] {
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
