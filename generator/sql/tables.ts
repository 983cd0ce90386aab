import { NOT_TABLE_ALIASES } from './targets.js';
import { type SqlProblem, type Token, tokenize, unquote } from './tokens.js';

/**
 * Which tables a statement reads, and where a query's user id comes from: what
 * the lint for unowned reads (generator/analyse/ownership.ts) needs of the
 * text. Like the rest of sql/, a scan, not a parser: it follows `from` and
 * `join` (comma lists too) at any depth where a statement is (the top level, a
 * subquery), never inside a function's arguments (`extract(year from d)`).
 */

function significant(sql: string): Token[] {
  const problems: SqlProblem[] = [];
  return tokenize(sql, problems).filter((token) => token.type !== 'space' && token.type !== 'comment');
}

const word = (token: Token | undefined) => (token && (token.type === 'word' || token.type === 'quoted') ? unquote(token) : undefined);
const isKeyword = (token: Token | undefined, ...words: string[]) => token?.type === 'word' && words.includes(token.text.toLowerCase());

/** Words that end a `from` clause (its list of tables, joins and their conditions). */
const CLAUSE_ENDS = new Set(['where', 'group', 'having', 'order', 'limit', 'union', 'window', 'for', 'lock', 'into', 'intersect', 'except', 'returning']);

/** The tables of a statement's `from` and `join` clauses, in order of first mention, each with the aliases it goes by. */
export function tablesOf(sql: string): { table: string; aliases: string[] }[] {
  return tablesIn(significant(sql));
}

function tablesIn(tokens: readonly Token[]): { table: string; aliases: string[] }[] {
  const found = new Map<string, Set<string>>();
  /** For each open parenthesis, whether a statement begins inside it (a subquery) rather than a function's arguments. */
  const open: boolean[] = [];
  /** The depths (open parentheses) at which a `from` clause is being read: a comma there begins another table. */
  const fromAt = new Set<number>();
  /** Reads the table named at `j` (and its alias); returns the index after them. */
  const table = (j: number): number => {
    let name = word(tokens[j]);
    if (name === undefined) return j;
    while (tokens[j + 1]?.text === '.' && word(tokens[j + 2]) !== undefined) {
      j += 2;
      name = word(tokens[j])!;
    }
    const aliases = found.get(name) ?? new Set<string>();
    found.set(name, aliases);
    let next = j + 1;
    if (isKeyword(tokens[next], 'as')) next++;
    const alias = word(tokens[next]);
    if (alias !== undefined && (tokens[next]!.type === 'quoted' || !NOT_TABLE_ALIASES.has(alias.toLowerCase()))) {
      aliases.add(alias);
      next++;
    }
    return next;
  };
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token.type === 'punct' && token.text === '(') {
      open.push(isKeyword(tokens[i + 1], 'select', 'with', 'values', 'table'));
      continue;
    }
    if (token.type === 'punct' && token.text === ')') {
      fromAt.delete(open.length);
      open.pop();
      continue;
    }
    // Only where a statement is: never inside a function's arguments (`extract(year from d)`).
    if (open.length > 0 && !open.at(-1)) continue;
    const depth = open.length;
    if (isKeyword(token, 'from', 'join')) {
      if (token.text.toLowerCase() === 'from') fromAt.add(depth);
      i = table(i + 1) - 1;
    } else if (fromAt.has(depth) && token.type === 'punct' && token.text === ',') {
      i = table(i + 1) - 1;
    } else if (token.type === 'word' && CLAUSE_ENDS.has(token.text.toLowerCase())) fromAt.delete(depth);
  }
  return [...found].map(([name, aliases]) => ({ table: name, aliases: [...aliases] }));
}

/**
 * The columns a statement's text names of each of its tables (`o.user_id`, or `user_id` when it reads one table),
 * among `columns` (compared without regard to case): what the text alone shows of who owns a table's rows.
 */
export function columnsNamed(sql: string, columns: readonly string[]): Map<string, string[]> {
  const wanted = new Set(columns.map((column) => column.toLowerCase()));
  const tokens = significant(sql);
  const tables = tablesIn(tokens);
  const byAlias = new Map<string, string>();
  for (const { table, aliases } of tables) {
    byAlias.set(table.toLowerCase(), table);
    for (const alias of aliases) byAlias.set(alias.toLowerCase(), table);
  }
  const only = tables.length === 1 ? tables[0]!.table : undefined;
  const named = new Map<string, Set<string>>();
  for (let i = 0; i < tokens.length; i++) {
    const column = word(tokens[i]);
    if (column === undefined || !wanted.has(column.toLowerCase()) || tokens[i + 1]?.text === '(') continue;
    const qualified = tokens[i - 1]?.text === '.';
    const table = qualified ? byAlias.get((word(tokens[i - 2]) ?? '').toLowerCase()) : only;
    if (table === undefined) continue;
    if (!named.has(table)) named.set(table, new Set());
    named.get(table)!.add(column);
  }
  return new Map([...named].map(([table, set]) => [table, [...set]]));
}

/**
 * Where an auth query's user id comes from: the table and column behind the result column `alias` (`user_id` on
 * Basic, `sub` on Bearer), through a `cast(...)` or `convert(...)` around it; undefined when the text does not say.
 */
export function sourceColumn(sql: string, alias: string): { table: string; column: string } | undefined {
  const tokens = significant(sql);
  const select = tokens.findIndex((token) => isKeyword(token, 'select'));
  if (select === -1) return undefined;
  // The select list's items, split at top-level commas, up to the first top-level `from`.
  const items: Token[][] = [[]];
  let depth = 0;
  for (let i = select + 1; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token.text === '(') depth++;
    if (token.text === ')') depth--;
    if (depth === 0 && isKeyword(token, 'from')) break;
    if (depth === 0 && token.text === ',') items.push([]);
    else items.at(-1)!.push(token);
  }
  const tables = tablesOf(sql);
  const resolve = (qualifier: string | undefined): string | undefined => {
    if (qualifier === undefined) return tables.length === 1 ? tables[0]!.table : undefined;
    const lower = qualifier.toLowerCase();
    return tables.find(({ table, aliases }) => table.toLowerCase() === lower || aliases.some((name) => name.toLowerCase() === lower))?.table;
  };
  for (const item of items) {
    // Its name: an alias (`... as sub`, `... sub`), a lone column, or a qualified one's column.
    const last = word(item.at(-1));
    const before = item.at(-2);
    const aliased = before !== undefined && (isKeyword(before, 'as') || before.text === ')' || before.type === 'word' || before.type === 'quoted');
    const name = item.length === 1 || aliased ? last : item.length === 3 && item[1]!.text === '.' ? word(item[2]) : undefined;
    if (name?.toLowerCase() !== alias.toLowerCase()) continue;
    // The first column reference in the expression: `t.col`, or a lone word that is no function, type or keyword.
    for (let i = 0; i < item.length; i++) {
      const head = word(item[i]);
      if (head === undefined) continue;
      if (item[i + 1]?.text === '.' && word(item[i + 2]) !== undefined) {
        const table = resolve(head);
        return table === undefined ? undefined : { table, column: word(item[i + 2])! };
      }
      if (item[i + 1]?.text === '(' || isKeyword(item[i], 'as', 'char', 'signed', 'unsigned', 'integer', 'using', 'utf8mb4', 'binary')) continue;
      const table = resolve(undefined);
      return table === undefined ? undefined : { table, column: head };
    }
  }
  return undefined;
}
