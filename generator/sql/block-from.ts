import { NOT_ALIAS, QueryReader } from './block-query.js';
import type { Block, JoinKind, TableRef } from './block-shapes.js';
import { nameOf, readCondition } from './terms.js';

/** The reader's FROM clause (generator/sql/blocks.ts): table references, joins and their conditions, derived tables. */
export abstract class FromReader extends QueryReader {
  /** `ref (, ref | join ref [on …|using (…)])*` into `block.refs`. */
  protected refs(block: Block, ctes: readonly string[], first: TableRef['source']): void {
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

  protected joinKind(): JoinKind | undefined {
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
  protected factor(block: Block, ctes: readonly string[], source: TableRef['source'], join: JoinKind | null): TableRef {
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
}
