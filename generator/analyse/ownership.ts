import { DEFAULT_USER_TABLES } from '../../runtime/auth/users/user-tables.js';
import type { Diagnostics } from '../diagnostics.js';
import type { Backend, Operation, Project, SqlStep } from '../ir.js';
import { readStatement } from '../sql/blocks.js';
import { columnsNamed, sourceColumn } from '../sql/tables.js';
import { tablesOf } from '../sql/targets.js';
import { comparison } from '../sql/terms.js';
import { type Token, tokenize, unquote } from '../sql/tokens.js';
import type { TableColumn } from '../types/columns.js';
import type { TypeSnapshot } from '../types/snapshot.js';
import { type AttributeRule, type RawAttribute, rule } from './elements.js';
import { VALIDATOR_STEPS } from './step-sources.js';

/**
 * Who owns the rows a protected request reads (OWASP API1, broken object-level
 * authorization): a protected Request whose read step reads a table that holds
 * rows per user, without binding `$uid`, likely returns every user's rows to
 * whoever holds the role. That is a warning at the step's `file:line:col`
 * (`npm run generate`), an error with `--strict`, unless the Request says it
 * is meant: `owner="shared"`.
 *
 * A table holds rows per user when a column of it references the backend's user
 * table (a foreign key to its id), or is named as the backend's user id column
 * (`user_id` on the default tables; the column an AuthQuery takes the id from).
 * The database says which columns those are when it types the statement; the
 * answer is kept beside the types in generated/column-types.json (`owners`), so
 * that a machine without a database gives the same warnings. The text counts
 * too: a column of that name that the statement names.
 *
 * A step is bound to its caller when it binds `$uid`, or reads a value of an
 * earlier step that is (`$[order][0].insertId` of an insert that wrote `$uid`).
 * A step that binds `$uid` must compare it with an owner column of each table
 * of users' rows it reads, directly or through joins of two columns
 * (`uidColumns`): `join usr u on u.user_id = $uid where o.order_id = $id`
 * binds `$uid` and still reads anyone's order.
 */

/** A Request's `owner` (one row of its attribute table; Request attributes read by request.ts). */
interface RequestOwner {
  owner?: 'shared';
}
const REQUEST_ATTRIBUTES: readonly AttributeRule<RequestOwner>[] = [
  rule<RequestOwner, 'owner'>(
    'owner',
    'owner',
    (value) => (value === 'shared' ? 'shared' : undefined),
    (value) => `owner is shared (every caller the request admits may read every user's rows), not "${value}"`,
  ),
];
/** The names this table reads, which the schema must give the element too (test/unit/reference.test.ts). */
export const REQUEST_ATTRIBUTE_NAMES: readonly string[] = REQUEST_ATTRIBUTES.map((attribute) => attribute.name);

/** `owner="shared"`, or undefined when absent or wrong (the diagnostic says why). */
export function readOwner(attribute: RawAttribute | undefined, diagnostics: Diagnostics): 'shared' | undefined {
  if (attribute === undefined) return undefined;
  const target: RequestOwner = {};
  const row = REQUEST_ATTRIBUTES.find((candidate) => candidate.name === attribute.name)!;
  if (!row.apply(attribute.value, target)) diagnostics.error(attribute.at, row.error(attribute.value));
  return target.owner;
}

/** Where a backend's user ids live: the table (when known) and the column. */
export interface UserIdentity {
  table: string | null;
  column: string;
}

/** The default tables' `usr.user_id`, or the table and column a backend's own AuthQuery takes its user id from. */
export function userIdentity(backend: Backend): UserIdentity {
  if (backend.defaultTables || backend.authQuery === null) return { table: DEFAULT_USER_TABLES.users, column: DEFAULT_USER_TABLES.userId };
  const source = sourceColumn(backend.authQuery.sql, backend.authScheme === 'Basic' ? 'user_id' : 'sub');
  return source ?? { table: null, column: 'user_id' };
}

/** The text the snapshot keeps an identity as, so that a backend whose user table changed is asked again. */
export function identityText(identity: UserIdentity): string {
  return `${identity.table ?? '?'}.${identity.column}`;
}

/**
 * Whether a column makes its table's rows belong to users: it references the user table's id column, or has its
 * name (not a bare `id`, which every table has: by name only the user table's own `id` counts).
 */
export function ownsRows(table: string, column: TableColumn & { references?: string }, identity: UserIdentity): boolean {
  if (identity.table !== null && column.references?.toLowerCase() === `${identity.table}.${identity.column}`.toLowerCase()) return true;
  if (column.name.toLowerCase() !== identity.column.toLowerCase()) return false;
  return identity.column.toLowerCase() !== 'id' || table.toLowerCase() === identity.table?.toLowerCase();
}

/** Warns about every protected read that reads rows per user without binding `$uid`, unless its Request says `owner="shared"`. */
export function lintUnownedReads(
  project: Project,
  snapshot: TypeSnapshot,
  keyOf: (file: string, method: string, step: string) => string,
  diagnostics: Diagnostics,
): void {
  for (const backend of project.backends) {
    const identity = userIdentity(backend);
    const known = identityText(identity);
    // On a tenant backend the proof keeps every read to the caller's tenant: what leaks is the other users' rows in it.
    const within = backend.tenant ? " of the caller's tenant" : '';
    for (const resource of backend.resources) {
      for (const operation of resource.operations) {
        if (operation.access === null || operation.owner === 'shared') continue;
        const bound = boundSteps(operation);
        // A GET's <Validator> is read as a step is: a 304 tells a caller what it read (that a row is there, its version).
        const validator = operation.validator && VALIDATOR_STEPS.get(operation.validator);
        for (const step of validator === undefined ? operation.steps : [...operation.steps, validator]) {
          if (step.kind !== 'sql' || step.statement !== 'read') continue;
          const bindsUid = step.binds.some((bind) => bind.kind === 'uid');
          if (bound.has(step.id) && !bindsUid) continue;
          const entry = snapshot[keyOf(resource.source, operation.method, step.id)];
          const facts = entry?.sql === step.sql && entry.owners?.user === known ? entry.owners.tables : {};
          let owned = ownedTables(step, facts, identity);
          if (owned.length === 0) continue;
          const describe = (tables: typeof owned) =>
            tables.map(({ table, columns }) => `${table} (${columns.map((column) => `${table}.${column}`).join(', ')})`).join(' and ');
          if (!bindsUid) {
            const top = topLevelTables(step.sql);
            // Read only inside a subquery (a filter, a count): the rows may not reach the answer, and the message says so.
            const inner = owned.every(({ table }) => !top.has(table.toLowerCase()));
            diagnostics.warn(
              step.at,
              inner
                ? `step "${step.id}" of protected ${operation.method} reads ${describe(owned)}, whose rows belong to users, in a subquery only, without binding $uid: if the subquery returns their values, every caller it admits reads every user's${within}; if it only filters or counts (and so tells what others did), write owner="shared" on the Request`
                : `step "${step.id}" of protected ${operation.method} reads ${describe(owned)}, whose rows belong to users, without binding $uid: every caller it admits reads every user's rows${within}. Bind $uid to return the caller's own, or write owner="shared" on the Request if that is meant`,
            );
            continue;
          }
          // $uid is bound: each table of users' rows must meet it at an owner column (directly, or through a join).
          const reached = uidColumns(step);
          if (reached === null) continue;
          owned = owned.filter(({ table, columns }) => !columns.some((column) => reached.has(`${table}.${column}`.toLowerCase())));
          if (owned.length === 0) continue;
          diagnostics.warn(
            step.at,
            `step "${step.id}" of protected ${operation.method} binds $uid, but not to ${describe(owned)}, whose rows belong to users: every caller it admits reads other users' rows${within} there. Compare $uid with that column (or join it to one that is), or write owner="shared" on the Request if that is meant`,
          );
        }
      }
    }
  }
}

/**
 * The tables a read step reads that hold rows per user, by the database's facts (made from this very statement's
 * tables) and the statement's own text; the text is scanned only when it names the user id column at all, so that a
 * run over 1,000 resources costs next to nothing.
 */
function ownedTables(step: SqlStep, facts: Readonly<Record<string, readonly string[]>>, identity: UserIdentity): { table: string; columns: string[] }[] {
  const owned = new Map(Object.entries(facts).map(([table, columns]) => [table, new Set(columns)]));
  if (step.sql.toLowerCase().includes(identity.column.toLowerCase())) {
    for (const [table, columns] of columnsNamed(step.sql, [identity.column])) {
      const byText = columns.filter((column) => ownsRows(table, { name: column } as TableColumn, identity));
      if (byText.length > 0) owned.set(table, new Set([...(owned.get(table) ?? []), ...byText]));
    }
  }
  return [...owned]
    .filter(([, columns]) => columns.size > 0)
    .map(([table, columns]) => ({ table, columns: [...columns].sort() }))
    .sort((a, b) => (a.table < b.table ? -1 : a.table > b.table ? 1 : 0));
}

/** The steps bound to the caller: binding `$uid`, or a value of an earlier bound step. */
function boundSteps(operation: Operation): Set<string> {
  const bound = new Set<string>();
  for (const step of operation.steps) {
    const binds = step.kind === 'sql' ? step.binds : step.args.map((arg) => arg.bind);
    if (binds.some((bind) => bind.kind === 'uid' || (bind.kind === 'ref' && bound.has(bind.step)))) bound.add(step.id);
  }
  return bound;
}

/**
 * The columns `$uid` meets in a statement, as `table.column` in lower case: those it is compared with by `=`, and every
 * column an equality of two columns joins to one of those (`o.user_id = u.user_id`). Null when some `$uid` stands
 * where this scan cannot tell the column (`in ($uid)`, a function's argument, a column of no known table): the step
 * then counts as bound, as it did before, rather than raise an alarm the text does not support.
 */
export function uidColumns(step: Pick<SqlStep, 'sql' | 'binds'>): Set<string> | null {
  // The step's text holds a `?` for each bind, in order.
  const tokens: Token[] = tokenize(step.sql, []).filter((token) => token.type !== 'space' && token.type !== 'comment');
  let binds = 0;
  const { tables, onlyTable } = tablesOf(tokens);
  const word = (token: Token | undefined) => (token && (token.type === 'word' || token.type === 'quoted') ? unquote(token) : undefined);
  /** The column whose last token is at `last` (`col`, `t.col`), with its table; undefined when it is none or its table is not known. */
  const columnEndingAt = (last: number): string | undefined => {
    const column = word(tokens[last]);
    if (column === undefined) return undefined;
    const table = tokens[last - 1]?.text === '.' ? tables.get(word(tokens[last - 2])?.toLowerCase() ?? '') : onlyTable;
    return table ? `${table}.${column}`.toLowerCase() : undefined;
  };
  const columnStartingAt = (first: number): { name: string; last: number } | undefined => {
    const last = tokens[first + 1]?.text === '.' ? first + 2 : first;
    if (tokens[last + 1]?.text === '.' || (tokens[last + 1]?.type === 'punct' && tokens[last + 1]!.text === '(')) return undefined;
    const name = columnEndingAt(last);
    return name === undefined ? undefined : { name, last };
  };
  /** `=` alone, not the end of `<=`, `>=`, `!=` nor the start of `<=>`. */
  const equals = (at: number) =>
    tokens[at]?.type === 'punct' && tokens[at]!.text === '=' && !['<', '>', '!'].includes(tokens[at - 1]?.text ?? '') && tokens[at + 1]?.text !== '>';
  const met = new Set<string>();
  const joined: [string, string][] = [];
  const whole = uidTerms(tokens, step.binds);
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    const bind = token.type === 'punct' && token.text === '?' ? step.binds[binds++] : undefined;
    // A `col = $uid` under `or` or `not`, or inside a larger expression (`(o.user_id = $uid or 1)`), keeps no row to the caller.
    if (bind?.kind === 'uid' && (equals(i - 1) || equals(i + 1)) && whole !== undefined && !whole.has(token.start)) continue;
    if (bind?.kind === 'uid') {
      const column = equals(i - 1) ? columnEndingAt(i - 2) : equals(i + 1) ? columnStartingAt(i + 2)?.name : undefined;
      if (column === undefined) return null;
      met.add(column);
    } else if (equals(i)) {
      const left = columnEndingAt(i - 1);
      const right = columnStartingAt(i + 1);
      if (left !== undefined && right !== undefined) joined.push([left, right.name]);
    }
  }
  // Every column joined to one $uid meets, until nothing more joins.
  for (let grown = true; grown; ) {
    grown = false;
    for (const [a, b] of joined) {
      if (met.has(a) !== met.has(b)) {
        met.add(a);
        met.add(b);
        grown = true;
      }
    }
  }
  return met;
}

/**
 * Where the statement compares `$uid` as a whole AND term of a `where` or an `on` (`[q.]col = $uid`, either way
 * round), by the offset of its `?`: the query blocks' reading the tenant proof uses (generator/sql/blocks.ts, terms.ts),
 * so that a `$uid` under `or` or `not` binds nothing. Undefined when the statement is of a form that reading leaves
 * unread: then every `$uid =` counts, as before it.
 */
function uidTerms(tokens: readonly Token[], binds: Pick<SqlStep, 'binds'>['binds']): Set<number> | undefined {
  let bind = 0;
  // The blocks' reader knows placeholders, not `?`: each `?` is its bind again.
  const marked = tokens.map((token): Token => {
    if (token.type !== 'punct' || token.text !== '?') return token;
    const uid = binds[bind++]?.kind === 'uid';
    return { ...token, type: 'placeholder', placeholder: uid ? { kind: 'uid' } : { kind: 'param', name: '?' } };
  });
  const statement = readStatement(marked);
  if ('unread' in statement) return undefined;
  const whole = new Set<number>();
  for (const block of statement.blocks) {
    for (const condition of [block.where, ...block.refs.map((ref) => ref.on)]) {
      if (condition === null || condition.terms === 'disjunction') continue;
      for (const term of condition.terms) {
        const other = comparison(term)?.other;
        if (other?.type === 'placeholder' && other.placeholder?.kind === 'uid') whole.add(other.start);
      }
    }
  }
  return whole;
}

/**
 * The tables a statement reads outside any parentheses (its own FROM and JOINs, not a subquery's), in lower case.
 * A table only a subquery reads may filter or count without any of its rows reaching the answer.
 */
export function topLevelTables(sql: string): Set<string> {
  const tokens: Token[] = tokenize(sql, []).filter((token) => token.type !== 'space' && token.type !== 'comment');
  const word = (token: Token | undefined) => (token && (token.type === 'word' || token.type === 'quoted') ? unquote(token) : undefined);
  const tables = new Set<string>();
  let depth = 0;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token.type === 'punct' && token.text === '(') depth++;
    else if (token.type === 'punct' && token.text === ')') depth--;
    else if (depth === 0 && token.type === 'word' && ['from', 'join'].includes(token.text.toLowerCase())) {
      let j = i + 1;
      let table = word(tokens[j]);
      while (table !== undefined && tokens[j + 1]?.text === '.' && word(tokens[j + 2]) !== undefined) {
        j += 2;
        table = word(tokens[j]);
      }
      if (table !== undefined) tables.add(table.toLowerCase());
    }
  }
  return tables;
}
