import { isOperator, NOT_ALIASES, type ParamTarget, type Token, unquote } from './tokens.js';

const COMPARISON = new Set(['=', '<', '>', '!']);
/** Words that follow a table name but are never its alias (tables.ts reads tables with them too). */
export const NOT_TABLE_ALIASES = new Set([
  'where',
  'on',
  'join',
  'inner',
  'left',
  'right',
  'outer',
  'cross',
  'natural',
  'straight_join',
  'set',
  'values',
  'value',
  'group',
  'order',
  'limit',
  'using',
  'having',
  'union',
  'for',
  'lock',
  'select',
  'window',
  'partition',
  'force',
  'use',
  'ignore',
  'intersect',
  'except',
]);

/**
 * Which column each request parameter meets, read from the shapes where the
 * text says so: `col <op> $p`, `$p <op> col`, `col like $p`, `set col = $p`,
 * `insert into t (a, b) values ($x, $y)`, and `limit`/`offset $p`. Anything
 * else leaves the parameter untyped; the first sighting of a name wins.
 */
export function findParamTargets(tokens: Token[]): Record<string, ParamTarget> {
  const { tables, onlyTable } = tablesOf(tokens);
  const word = (token: Token | undefined) => (token && (token.type === 'word' || token.type === 'quoted') ? unquote(token) : undefined);

  const targets: Record<string, ParamTarget> = {};
  const set = (name: string, target: ParamTarget) => {
    if (!(name in targets)) targets[name] = target;
  };
  /** The column reference ending at index `last` (`col`, `t.col`), walking backwards. */
  const columnEndingAt = (last: number): ParamTarget | undefined => {
    const column = word(tokens[last]);
    if (column === undefined || (tokens[last]!.type === 'word' && NOT_ALIASES.has(column.toLowerCase()))) return undefined;
    if (tokens[last - 1]?.text === '.') {
      const qualifier = word(tokens[last - 2]);
      return qualifier === undefined ? undefined : { kind: 'column', table: tables.get(qualifier.toLowerCase()) ?? null, column };
    }
    return { kind: 'column', table: onlyTable, column };
  };
  const columnStartingAt = (first: number): ParamTarget | undefined => {
    const head = word(tokens[first]);
    if (head === undefined) return undefined;
    if (tokens[first + 1]?.text === '.') {
      const column = word(tokens[first + 2]);
      return column === undefined ? undefined : { kind: 'column', table: tables.get(head.toLowerCase()) ?? null, column };
    }
    return { kind: 'column', table: onlyTable, column: head };
  };

  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token.placeholder?.kind !== 'param') continue;
    const name = token.placeholder.name;
    const before = tokens[i - 1];
    if (before?.type === 'word' && (before.text.toLowerCase() === 'limit' || before.text.toLowerCase() === 'offset')) {
      set(name, { kind: 'limit' });
      continue;
    }
    if (
      before?.type === 'punct' &&
      before.text === ',' &&
      tokens
        .slice(0, i)
        .reverse()
        .find((t) => t.type === 'word')
        ?.text.toLowerCase() === 'limit'
    ) {
      set(name, { kind: 'limit' });
      continue;
    }
    // col <op> $p, col like $p
    let k = i - 1;
    while (k >= 0 && tokens[k]!.type === 'punct' && COMPARISON.has(tokens[k]!.text)) k--;
    if (k < i - 1 || (tokens[k]?.type === 'word' && tokens[k]!.text.toLowerCase() === 'like' && k-- >= 0)) {
      const target = columnEndingAt(k);
      if (target) {
        set(name, target);
        continue;
      }
    }
    // $p <op> col
    let m = i + 1;
    while (m < tokens.length && tokens[m]!.type === 'punct' && COMPARISON.has(tokens[m]!.text)) m++;
    if (m > i + 1) {
      const target = columnStartingAt(m);
      if (target) set(name, target);
    }
  }

  // insert into t (a, b) values ($x, $y)
  const into = tokens.findIndex((token) => token.type === 'word' && token.text.toLowerCase() === 'into');
  const valuesAt = tokens.findIndex((token) => token.type === 'word' && (token.text.toLowerCase() === 'values' || token.text.toLowerCase() === 'value'));
  if (into !== -1 && valuesAt > into && onlyTable) {
    const open = tokens.findIndex((token, index) => index > into && token.text === '(');
    if (open !== -1 && open < valuesAt) {
      const columns: string[] = [];
      for (let i = open + 1; i < valuesAt && tokens[i]!.text !== ')'; i++) {
        const column = word(tokens[i]);
        if (column !== undefined) columns.push(column);
      }
      let index = 0;
      let depth = 0;
      let expression: Token[] = [];
      for (let i = valuesAt + 2; i < tokens.length; i++) {
        const token = tokens[i]!;
        if (token.text === '(') depth++;
        if (token.text === ')' && depth-- === 0) {
          if (expression.length === 1 && expression[0]!.placeholder?.kind === 'param' && columns[index]) {
            set(expression[0]!.placeholder.name, { kind: 'column', table: onlyTable, column: columns[index]! });
          }
          break;
        }
        if (token.text === ',' && depth === 0) {
          if (expression.length === 1 && expression[0]!.placeholder?.kind === 'param' && columns[index]) {
            set(expression[0]!.placeholder.name, { kind: 'column', table: onlyTable, column: columns[index]! });
          }
          index++;
          expression = [];
        } else expression.push(token);
      }
    }
  }
  return targets;
}

/**
 * The tables a statement names after FROM, JOIN, UPDATE and INTO, by their aliases and names (lower case), and
 * the one table when it names only one: what a column reference (`o.created_on`, `created_on`) is a column of.
 */
export function tablesOf(tokens: Token[]): { tables: Map<string, string>; onlyTable: string | null } {
  const tables = new Map<string, string>();
  const tableNames: string[] = [];
  const word = (token: Token | undefined) => (token && (token.type === 'word' || token.type === 'quoted') ? unquote(token) : undefined);
  for (let i = 0; i < tokens.length; i++) {
    const keyword = tokens[i]!.type === 'word' ? tokens[i]!.text.toLowerCase() : '';
    if (keyword !== 'from' && keyword !== 'join' && keyword !== 'update' && keyword !== 'into') continue;
    let j = i + 1;
    let table = word(tokens[j]);
    if (table === undefined) continue;
    while (tokens[j + 1]?.text === '.' && word(tokens[j + 2]) !== undefined) {
      j += 2;
      table = word(tokens[j])!;
    }
    tableNames.push(table);
    tables.set(table.toLowerCase(), table);
    let aliasAt = j + 1;
    if (tokens[aliasAt]?.type === 'word' && tokens[aliasAt]!.text.toLowerCase() === 'as') aliasAt++;
    const alias = word(tokens[aliasAt]);
    const hasAlias = alias !== undefined && !NOT_TABLE_ALIASES.has(alias.toLowerCase());
    if (hasAlias) tables.set(alias.toLowerCase(), table);
    // `from a, b`: a second table this scan does not follow, so an unqualified column could be either's.
    if (tokens[hasAlias ? aliasAt + 1 : j + 1]?.text === ',' && keyword === 'from') tableNames.push('');
  }
  const onlyTable = new Set(tableNames.map((name) => name.toLowerCase())).size === 1 ? tableNames[0]! : null;
  return { tables, onlyTable };
}
