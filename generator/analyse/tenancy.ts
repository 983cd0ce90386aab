import { type Assignment, type Block, readStatement, type Statement, type TableRef } from '../sql/blocks.js';
import { type Condition, comparison, isTenant, nameOf, provesTenant, type Term } from '../sql/terms.js';
import { type SqlProblem, type Token, tokenize } from '../sql/tokens.js';

/**
 * The tenant proof (issue 43, docs/internals/contract.md §14): every reference of a statement to a tenant table is
 * kept to the caller's tenant by a literal `<alias>.<column> = $tenant` among the top-level AND terms of its own
 * block's `where` or of its join's `on`; writes set the column to `$tenant` and nothing else. Pure: the facts (which
 * tables have the column, their unique keys, views) come from the database through the caller. Cascades
 * (`on delete cascade` into tenant tables) need facts this function is not given, and are not proven here.
 */

export interface TenantFacts {
  /** The tenant column, as backend.xml names it. */
  column: string;
  /**
   * Tables the statement names that have the column (lower case) -> whether every unique key of it includes the
   * column, and the column's collation when it is text (a tenant backend of text tenants needs it to compare exactly).
   */
  tables: Readonly<Record<string, { uniqueOk: boolean; collation?: string }>>;
  /** Views the statement names (lower case): refused (their tenants cannot be told). */
  views: readonly string[];
  /**
   * The stored routines of the database the statement calls (lower case): refused, as their statements are
   * beyond the proof. Absent in facts made before they were asked: such facts are stale (tenant-proof.ts).
   */
  routines?: readonly string[];
}

export interface TenantProblem {
  offset: number;
  message: string;
}

function read(text: string): Statement {
  const problems: SqlProblem[] = [];
  const all = tokenize(text, problems);
  if (problems.length > 0) return { unread: problems[0]!.message, offset: problems[0]!.offset };
  const doubt = all.find((token) => lexicalDoubt(token) !== undefined);
  if (doubt) return { unread: lexicalDoubt(doubt)!, offset: doubt.start };
  const significant = all.filter((token) => token.type !== 'space' && token.type !== 'comment');
  const session = significant.findIndex((token, k) => SESSION_COUNTS.has(token.text.toLowerCase()) && significant[k + 1]?.text === '(');
  if (session !== -1) {
    const token = significant[session]!;
    return { unread: `${token.text}(), the count of whatever statement the pooled connection ran before, another tenant's too`, offset: token.start };
  }
  return readStatement(significant);
}

/** Functions that answer of the connection's previous statement: on a pooled connection, maybe another caller's. */
const SESSION_COUNTS = new Set(['found_rows', 'row_count']);

/** MariaDB's numbers: `12`, `1.5`, `1.`, `.5`, `1e5` (its sign is the next token), `0x1f`, `0b101`. */
const NUMBER = /^(?:(?:\d+\.?\d*|\.\d+)(?:e\d*)?|0x[0-9a-f]+|0b[01]+)$/i;
/**
 * The punctuation the reader knows: anything else is refused, a control character (it lexes differently there) and
 * `{ }` (MariaDB's ODBC escape `{x expr}` nests an expression in brackets the reader does not count).
 */
const PUNCTUATION = new Set([...'(),.;=<>!+-*/%&|^~:?@']);
/** The whitespace MariaDB's lexer skips, and the characters after `--` that make it a comment there. */
const SPACE = /^[ \t\n\r\f\v]+$/;

/**
 * Where the tokenizer and MariaDB's lexer could part, which a proof over the tokenizer's reading cannot trust:
 * a number run into a word (`1.5or 1` is `1.5 or 1` to MariaDB, one number to the tokenizer), a space the
 * tokenizer skips that MariaDB reads as a name's letter (U+00A0), a `--` comment by one reading and not the other
 * (`--` then U+00A0 or DEL), a control character, a backslash in a string (its end depends on the server's
 * sql_mode).
 */
function lexicalDoubt(token: Token): string | undefined {
  if (token.type === 'number' && !NUMBER.test(token.text)) return `a number run into a word (${token.text})`;
  if (token.type === 'space' && !SPACE.test(token.text)) return 'a space character other than space, tab or newline';
  if (token.type === 'punct' && !PUNCTUATION.has(token.text)) return `a character the reader does not know (${JSON.stringify(token.text)})`;
  // `'a\' or 1 -- '` is one string by default and a string, an `or` and a comment under NO_BACKSLASH_ESCAPES.
  if (token.type === 'string' && token.text.includes('\\')) return 'a backslash in a string (read otherwise under NO_BACKSLASH_ESCAPES)';
  if (token.type === 'comment' && token.text.startsWith('--') && token.text.length > 2 && !SPACE.test(token.text[2]!)) {
    return 'a -- comment not followed by a space, tab or newline';
  }
  return undefined;
}

const baseTable = (ref: TableRef) => ref.source !== 'derived' && ref.source !== 'cte' && ref.schema === null;

/** Base table names (lower case, CTE names excluded) the statement names, or 'unread'; what facts must be asked for. */
export function namedTables(text: string): string[] | { unread: string } {
  const statement = read(text);
  if ('unread' in statement) return { unread: statement.unread };
  const names = new Set<string>();
  for (const block of statement.blocks) {
    for (const ref of [...block.refs, ...(block.insert ? [block.insert.table] : [])]) if (baseTable(ref)) names.add(ref.name.toLowerCase());
  }
  return [...names];
}

/** Every unproven reference of the statement (empty: proven). `text` is the Sql element's text with $placeholders. */
export function proveTenancy(text: string, facts: TenantFacts): TenantProblem[] {
  const statement = read(text);
  if ('unread' in statement) {
    const message = `the tenant proof cannot read this statement (${statement.unread}): write it in a form the proof reads, or mark the step as crossing tenants`;
    return [{ offset: statement.offset, message }];
  }
  const problems: TenantProblem[] = routineCalls(text, facts.routines ?? []);
  const tenantTable = (ref: TableRef) => baseTable(ref) && Object.hasOwn(facts.tables, ref.name.toLowerCase());
  for (const block of statement.blocks) {
    for (const ref of block.refs) {
      const problem = refused(ref, facts) ?? (tenantTable(ref) ? unfiltered(block, ref, facts.column) : undefined);
      if (problem) problems.push(problem);
    }
    for (const set of block.sets) if (block.kind === 'update') problems.push(...moves(block, set, facts, tenantTable));
    if (block.insert) problems.push(...inserted(block, facts));
  }
  return problems.sort((a, b) => a.offset - b.offset);
}

/** Each call of one of the database's stored routines: a statement of its own, which no proof here reads. */
function routineCalls(text: string, routines: readonly string[]): TenantProblem[] {
  if (routines.length === 0) return [];
  const tokens = tokenize(text, []).filter((token) => token.type !== 'space' && token.type !== 'comment');
  return tokens.flatMap((token, k) => {
    const name = nameOf(token)?.toLowerCase();
    if (name === undefined || !routines.includes(name) || tokens[k + 1]?.text !== '(' || tokens[k - 1]?.text === '.') return [];
    return [
      {
        offset: token.start,
        message: `${nameOf(token)}() is a stored routine of the database, whose own statements the tenant proof cannot read: write what it does in the statement, or mark the step as crossing tenants (tenant="all")`,
      },
    ];
  });
}

const described = (ref: TableRef) => `table ${ref.name}${ref.alias && ref.alias !== ref.name ? ` (alias ${ref.alias})` : ''}`;

function refused(ref: TableRef, facts: TenantFacts): TenantProblem | undefined {
  if (ref.schema !== null) {
    return {
      offset: ref.offset,
      message: `${ref.schema}.${ref.name} names another schema, which the tenant proof cannot see: name tables of the backend's database only`,
    };
  }
  if (baseTable(ref) && facts.views.includes(ref.name.toLowerCase())) {
    return {
      offset: ref.offset,
      message: `view ${ref.name}: the tenants of its rows cannot be told; read its tables, each filtered by ${facts.column} = $tenant`,
    };
  }
  return undefined;
}

/**
 * Whether the qualifier `q` of a term in `block` names `ref` there (and nothing else), or, bare, `ref` is its only
 * reference. Letter case counts, as it does for MariaDB's aliases on Linux (lower_case_table_names=0): there
 * `o.org_id` in a subquery over `items O` is the outer `o`'s column, and filters nothing of `O`.
 */
function resolves(block: Block, ref: TableRef, q: string | null): boolean {
  if (q === null) return block.refs.length === 1 && block.refs[0] === ref;
  const named = block.refs.filter((r) => (r.alias ?? r.name) === q);
  return named.length === 1 && named[0] === ref;
}

const terms = (condition: Condition | null) => (condition && condition.terms !== 'disjunction' ? condition.terms : []);

/** The reference's filter, or a problem naming the table, the fix, and why when a near miss shows it. */
function unfiltered(block: Block, ref: TableRef, column: string): TenantProblem | undefined {
  const proves = (term: Term) => provesTenant(term, column, (q) => resolves(block, ref, q));
  // WHERE always filters (a NULL-extended row fails `=`); an ON only its own join's table, and not a preserved one.
  const onCounts = ref.join !== null && ref.join !== 'right' && ref.join !== 'natural';
  if (terms(block.where).some(proves) || (onCounts && terms(ref.on).some(proves))) return undefined;
  const name = ref.alias ?? ref.name;
  const where = onCounts ? "in its block's where or its join's on" : "in its block's where";
  let message = `${described(ref)} is not kept to the caller's tenant: write ${name}.${column} = $tenant ${where}`;
  const why = reason(block, ref, column, onCounts);
  if (why) message += ` (${why})`;
  return { offset: ref.offset, message };
}

function reason(block: Block, ref: TableRef, column: string, onCounts: boolean): string | undefined {
  if (block.where?.terms === 'disjunction') return `the where holds ${block.where.why}`;
  if (onCounts && ref.on?.terms === 'disjunction') return `its join's on holds ${ref.on.why}`;
  if (ref.join === 'right' && terms(ref.on).some((t) => provesTenant(t, column, (q) => resolves(block, ref, q)))) {
    return 'the on of a right join does not filter its own table';
  }
  let other: string | undefined;
  for (const condition of [block.where, ...block.refs.map((r) => r.on)]) {
    for (const term of terms(condition)) {
      const found = comparison(term);
      if (!found || found.column.toLowerCase() !== column.toLowerCase()) continue;
      const q = found.qualifier;
      if (!isTenant(found.other)) {
        if (resolves(block, ref, q)) return `compared with ${found.other.text}, not $tenant`;
      } else if (q === null && block.refs.length > 1) return `an unqualified ${found.column} with several tables: qualify it`;
      else if (q !== null && !block.refs.some((r) => resolves(block, r, q))) return `the filter names another block's alias (${q})`;
      else if (resolves(block, ref, q)) return `a join's on keeps only its own joined table`;
      else other ??= `only ${q}.${found.column} is filtered: each table needs its own term`;
    }
  }
  if (other) return other;
  if (block.refs.some((r) => r.using?.some((c) => c.toLowerCase() === column.toLowerCase())) || ref.join === 'natural') {
    return `a join using ${column} does not filter by the caller's tenant`;
  }
  const mentions = (block.where?.tokens ?? []).some((t) => nameOf(t)?.toLowerCase() === column.toLowerCase());
  return mentions ? `its filter is not exactly ${ref.alias ?? ref.name}.${column} = $tenant` : undefined;
}

const onlyTenant = (value: readonly Token[]) => value.length === 1 && isTenant(value[0]);

/** An update's assignment that could move a row of a tenant table to another tenant. */
function moves(block: Block, set: Assignment, facts: TenantFacts, tenantTable: (ref: TableRef) => boolean): TenantProblem[] {
  if (set.column.toLowerCase() !== facts.column.toLowerCase() || onlyTenant(set.value)) return [];
  // Any reference the qualifier could name, whatever its letter case: where aliases are not case-sensitive
  // (lower_case_table_names=1), `set o.org_id = …` moves the rows of `orders O`.
  const q = set.qualifier?.toLowerCase();
  const targets = q === undefined ? block.refs : block.refs.filter((r) => (r.alias ?? r.name).toLowerCase() === q);
  if (!targets.some(tenantTable)) return [];
  if (set.qualifier === null && block.refs.length > 1) {
    return [{ offset: set.offset, message: `an unqualified ${set.column} in a multi-table update: qualify it, and set it to $tenant only` }];
  }
  return [{ offset: set.offset, message: `${described(targets[0]!)} would move rows to another tenant: set ${facts.column} to $tenant only, or not at all` }];
}

/** An insert or replace into a tenant table sets the column to `$tenant` in every row and never moves an existing one. */
function inserted(block: Block, facts: TenantFacts): TenantProblem[] {
  const insert = block.insert!;
  const table = insert.table;
  const key = table.name.toLowerCase();
  if (table.schema !== null) return [refused(table, facts)!];
  if (facts.views.includes(key)) return [refused(table, facts)!];
  if (!Object.hasOwn(facts.tables, key)) return [];
  const column = facts.column.toLowerCase();
  const problems: TenantProblem[] = [];
  const problem = (offset: number, why: string) =>
    problems.push({ offset, message: `${block.kind} into table ${table.name} ${why}: set ${facts.column} to $tenant in every row` });
  if (block.kind === 'replace' && !facts.tables[key]!.uniqueOk) {
    problems.push({
      offset: table.offset,
      message: `replace into table ${table.name} can replace another tenant's row through a unique key without ${facts.column}: use insert, or make every unique key include ${facts.column}`,
    });
  }
  if (insert.odku.length > 0 && !facts.tables[key]!.uniqueOk) {
    problems.push({
      offset: table.offset,
      message: `on duplicate key update of table ${table.name} can update another tenant's row through a unique key without ${facts.column}: make every unique key include ${facts.column}, or drop the update`,
    });
  }
  for (const set of insert.odku) {
    if (set.column.toLowerCase() === column && !onlyTenant(set.value)) {
      problems.push({
        offset: set.offset,
        message: `on duplicate key update of table ${table.name} would move a row to another tenant: set ${facts.column} to $tenant only, or not at all`,
      });
    }
  }
  if (insert.rows === null && insert.select === null) {
    const sets = block.sets.filter((set) => set.column.toLowerCase() === column);
    if (sets.length === 0) problem(table.offset, `sets no ${facts.column}`);
    for (const set of sets) if (!onlyTenant(set.value)) problem(set.offset, `sets ${facts.column} to something other than $tenant`);
    return problems;
  }
  const at = insert.columns?.findIndex((name) => name.toLowerCase() === column) ?? -1;
  if (at === -1) {
    problem(table.offset, insert.columns === null ? 'names no column list' : `leaves ${facts.column} out of its column list`);
    return problems;
  }
  for (const row of insert.rows ?? []) {
    if (!onlyTenant(row[at] ?? [])) problem(row[at]?.[0]?.start ?? table.offset, `sets ${facts.column} to something other than $tenant`);
  }
  for (const arm of insert.select ?? []) {
    const item = arm.items[at] ?? [];
    // `$tenant`, `$tenant as org_id` or `$tenant org_id`.
    const ok =
      isTenant(item[0]) &&
      (item.length === 1 || (item.length === 2 && nameOf(item[1]) !== undefined) || (item.length === 3 && item[1]!.text.toLowerCase() === 'as'));
    if (!ok || arm.items.length !== insert.columns!.length) problem(item[0]?.start ?? arm.offset, `selects something other than $tenant for ${facts.column}`);
  }
  return problems;
}
