import type { Block, TableRef } from './block-shapes.js';
import { SELECT_MODIFIERS } from './columns.js';
import { nameOf, readCondition } from './terms.js';
import type { Token } from './tokens.js';

/**
 * The reader of generator/sql/blocks.ts, its first part: the cursor over a statement's significant tokens, the words
 * that end each kind of expression, and what a query reads (`with`, union arms, `select`, its clauses, and the
 * opaque expressions within, where every `(select` is read as a query). Its FROM clause is block-from.ts, writes
 * block-writes.ts; blocks.ts is the whole.
 */

export class Unread {
  constructor(
    readonly form: string,
    readonly offset: number,
  ) {}
}

export const CLAUSES = ['from', 'where', 'group', 'having', 'window', 'order', 'limit', 'for', 'lock', 'into', 'returning'];
export const ARM_ENDS = ['union', 'intersect', 'except', 'on'];
export const JOINS = ['join', 'inner', 'cross', 'straight_join', 'natural', 'left', 'right'];
/** Words that end a table reference rather than alias it. */
export const NOT_ALIAS = new Set([
  ...CLAUSES,
  ...ARM_ENDS,
  ...JOINS,
  'outer',
  'using',
  'set',
  'values',
  'value',
  'select',
  'partition',
  'use',
  'ignore',
  'force',
]);
/** The words between `select` and its list, as the column reader knows them (columns.ts). */
const SELECT_OPTIONS = [...SELECT_MODIFIERS];
export const WRITE_MODIFIERS = ['low_priority', 'delayed', 'high_priority', 'quick', 'ignore'];

export type Stop = (at: number) => boolean;
/** Where an expression ends at depth 0, by context (built once: a statement is read in microseconds). */
const ITEM_END = new Set([...CLAUSES, ...ARM_ENDS]);
const CLAUSE_END = new Set([...CLAUSES, ...ARM_ENDS, 'set']);
export const ON_END = new Set([...CLAUSES, ...ARM_ENDS, ...JOINS, 'set', 'using']);
export const SET_END = new Set(CLAUSES);
export const VALUES_END = new Set(['on', 'returning']);
export const ODKU_END = new Set(['returning']);
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

export abstract class QueryReader {
  i = 0;
  readonly blocks: Block[] = [];
  /** Each token's lower-case text when it is a word (keywords are compared without regard to case). */
  protected readonly words: (string | undefined)[];
  protected readonly itemEnd: Stop = this.stopAt(ITEM_END);
  protected readonly clauseEnd: Stop = this.stopAt(CLAUSE_END);
  protected readonly onEnd: Stop = this.stopAt(ON_END);
  constructor(readonly t: readonly Token[]) {
    this.words = t.map((token) => (token.type === 'word' ? token.text.toLowerCase() : undefined));
  }

  protected word(k = 0): string | undefined {
    return this.words[this.i + k];
  }
  protected is(...words: string[]): boolean {
    return words.includes(this.word() ?? '\0');
  }
  protected punct(text: string, k = 0): boolean {
    const token = this.t[this.i + k];
    return token?.type === 'punct' && token.text === text;
  }
  protected eat(...words: string[]): boolean {
    return this.is(...words) && ++this.i > 0;
  }
  protected expect(text: string): void {
    if (this.word() === text || this.punct(text)) this.i++;
    else this.fail(`${this.t[this.i]?.text ?? 'the end'} where ${text} was expected`);
  }
  fail(form: string): never {
    throw new Unread(form, this.t[Math.min(this.i, this.t.length - 1)]?.start ?? 0);
  }
  protected block(kind: Block['kind']): Block {
    const block: Block = { kind, offset: this.t[this.i]?.start ?? 0, refs: [], where: null, items: [], sets: [], deletes: [], insert: null, children: [] };
    this.blocks.push(block);
    return block;
  }
  protected queryAhead(k = 0): boolean {
    return ['select', 'with'].includes(this.word(k) ?? '');
  }

  /** A stop at depth 0: any of `words` (never `left(`/`right(`, functions), or a `;`. */
  protected stopAt(words: ReadonlySet<string>): Stop {
    return (at) => {
      const w = this.words[at];
      if (w === undefined) return this.t[at]!.type === 'punct' && this.t[at]!.text === ';';
      return words.has(w) && !((w === 'left' || w === 'right') && this.t[at + 1]?.text === '(');
    };
  }

  /** `(a, b, …)`: names (possibly none, for index hints). */
  protected names(empty = false): string[] {
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

  protected skipParenthesised(): void {
    for (let depth = 1; depth > 0; this.i++) {
      if (this.i >= this.t.length) this.fail('unbalanced parentheses');
      if (this.punct('(')) depth++;
      else if (this.punct(')')) depth--;
    }
  }

  /** `ref (, ref | join ref [on …|using (…)])*` into `block.refs`: block-from.ts. */
  protected abstract refs(block: Block, ctes: readonly string[], first: TableRef['source']): void;
  /** `a[.*], b[.*]` of `for update of` and a multi-table delete: block-writes.ts. */
  protected abstract targetNames(): { name: string; offset: number }[];

  /** `[with …] arm (union|intersect|except [all|distinct] arm)*`; each arm's blocks are children of `parent`. */
  protected query(ctes: readonly string[], parent: Block | null): Block[] {
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
  protected arm(ctes: readonly string[]): Block[] {
    if (!this.punct('(')) return [this.select(ctes)];
    this.i++;
    if (!this.queryAhead()) this.fail('a parenthesised form the reader does not know');
    const arms = this.query(ctes, null);
    this.expect(')');
    return arms;
  }

  protected select(ctes: readonly string[]): Block {
    const block = this.block('select');
    this.expect('select');
    while (this.eat(...SELECT_OPTIONS));
    do block.items.push(this.expression(block, ctes, this.itemEnd, true));
    while (this.punct(',') && ++this.i);
    if (this.eat('from')) this.refs(block, ctes, 'from');
    this.tail(block, ctes);
    return block;
  }

  /** `where`, `group by`, `having`, `window`, `order by`, `limit`, `for update|share`, `lock in share mode`. */
  protected tail(block: Block, ctes: readonly string[]): void {
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

  /**
   * An opaque expression up to `stop`, a `)` at depth 0, or (`commas`) a `,` at depth 0. Every `(select`/`(with`
   * inside is read as a query whose arms become `block`'s children; any other place a query could hide is refused.
   */
  protected expression(block: Block, ctes: readonly string[], stop: Stop, commas: boolean): Token[] {
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
}
