/**
 * A SQL-aware scan of one statement, enough to find placeholders, the kind of
 * statement and the names of its result columns. It is not a SQL parser: the
 * database remains the judge of the statement itself.
 */

export type Placeholder =
  | { kind: 'param'; name: string }
  | { kind: 'uid' }
  | { kind: 'ref'; step: string; row: number; column: string };

export interface Token {
  type: 'word' | 'quoted' | 'string' | 'number' | 'punct' | 'placeholder' | 'comment' | 'space';
  text: string;
  /** Offset in the scanned text. */
  start: number;
  placeholder?: Placeholder;
}

/** The table column a parameter is compared with or stored in; `table` is null when the text does not say. */
export type ParamTarget = { kind: 'column'; table: string | null; column: string } | { kind: 'limit' };

export interface SqlProblem {
  offset: number;
  message: string;
}

export interface ScannedSql {
  /** The statement with every placeholder replaced by `?`, trimmed, without a trailing `;`. */
  sql: string;
  /** What binds to each `?`, in order. */
  placeholders: Placeholder[];
  /** Where each placeholder stood in the scanned text. */
  placeholderOffsets: number[];
  /** For request parameters whose column the text shows (`col = $p`, `insert ... values`), that column. */
  paramTargets: Record<string, ParamTarget>;
  statement: 'read' | 'write';
  /** Result column names of a read; null when they cannot be known from the text (`*`). */
  columns: string[] | null;
  problems: SqlProblem[];
}

const IDENT = /[A-Za-z0-9_$\u0080-\uffff]/;
const IDENT_START = /[A-Za-z_\u0080-\uffff]/;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*/;
/** `$[step][row].column`: an earlier step's result (seed §2.1 rule 2). */
const REFERENCE = /^\$\[([A-Za-z_][A-Za-z0-9_]*)\]\[(\d+)\]\.([A-Za-z_][A-Za-z0-9_]*)/;

/** Splits SQL into tokens; `$` inside strings, backtick identifiers and comments stays text. */
export function tokenize(text: string, problems: SqlProblem[]): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  const push = (type: Token['type'], end: number, placeholder?: Placeholder) => {
    tokens.push(placeholder ? { type, text: text.slice(i, end), start: i, placeholder } : { type, text: text.slice(i, end), start: i });
    i = end;
  };
  while (i < text.length) {
    const c = text[i]!;
    const next = text[i + 1] ?? '';
    if (/\s/.test(c)) {
      let end = i + 1;
      while (end < text.length && /\s/.test(text[end]!)) end++;
      push('space', end);
    } else if (c === "'" || c === '"' || c === '`') {
      push(c === '`' ? 'quoted' : 'string', endOfQuoted(text, i, c, problems));
    } else if ((c === '-' && next === '-' && /[\s]|^$/.test(text[i + 2] ?? '')) || c === '#') {
      const end = text.indexOf('\n', i);
      push('comment', end === -1 ? text.length : end);
    } else if (c === '/' && next === '*') {
      // MySQL runs /*! ... */, MariaDB also /*M! ... */; /*+ ... */ are optimiser hints. All would hide SQL from this scan.
      if (text[i + 2] === '!' || text[i + 2] === '+' || text.startsWith('/*M!', i)) {
        problems.push({ offset: i, message: 'executable comments (/*! ... */, /*M! ... */ and hints) are not supported' });
      }
      const close = text.indexOf('*/', i + 2);
      if (close === -1) problems.push({ offset: i, message: 'unterminated comment' });
      push('comment', close === -1 ? text.length : close + 2);
    } else if (c === '$' && !(tokens.length > 0 && tokens.at(-1)!.type === 'word' && tokens.at(-1)!.start + tokens.at(-1)!.text.length === i)) {
      const rest = text.slice(i);
      const reference = REFERENCE.exec(rest);
      const name = NAME.exec(rest.slice(1));
      if (reference) {
        push('placeholder', i + reference[0].length, { kind: 'ref', step: reference[1]!, row: Number(reference[2]), column: reference[3]! });
      } else if (rest.startsWith('$[')) {
        problems.push({ offset: i, message: 'malformed step reference: write $[step][row].column' });
        push('punct', i + 1);
      } else if (name) {
        const placeholder: Placeholder = name[0] === 'uid' ? { kind: 'uid' } : { kind: 'param', name: name[0] };
        push('placeholder', i + 1 + name[0].length, placeholder);
      } else {
        problems.push({ offset: i, message: "'$' must be followed by a parameter name" });
        push('punct', i + 1);
      }
    } else if (IDENT_START.test(c) || c === '$') {
      let end = i + 1;
      while (end < text.length && IDENT.test(text[end]!)) end++;
      push('word', end);
    } else if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(next))) {
      let end = i + 1;
      while (end < text.length && /[0-9A-Za-z_.]/.test(text[end]!)) end++;
      push('number', end);
    } else {
      push('punct', i + 1);
    }
  }
  return tokens;
}

function endOfQuoted(text: string, start: number, quote: string, problems: SqlProblem[]): number {
  for (let i = start + 1; i < text.length; i++) {
    const c = text[i];
    // Backslash escapes apply inside strings (default sql_mode), not inside backtick identifiers.
    if (c === '\\' && quote !== '`') {
      i++;
    } else if (c === quote) {
      if (text[i + 1] === quote) i++;
      else return i + 1;
    }
  }
  problems.push({ offset: start, message: `unterminated ${quote === '`' ? 'identifier' : 'string'}` });
  return text.length;
}

const READ_STARTS = new Set(['select', 'with', 'show', 'describe', 'desc', 'explain', 'values', 'table']);

export function scanSql(text: string): ScannedSql {
  const problems: SqlProblem[] = [];
  const tokens = tokenize(text, problems);
  const significant = tokens.filter((token) => token.type !== 'space' && token.type !== 'comment');

  // One statement per step: a `;` may only end the text.
  let end = significant.length;
  if (significant.at(-1)?.text === ';' && significant.at(-1)?.type === 'punct') end--;
  for (const token of significant.slice(0, end)) {
    if (token.type === 'punct' && token.text === ';') {
      problems.push({ offset: token.start, message: 'one statement per Sql step: split it into several steps' });
    }
    if (token.type === 'punct' && token.text === '?') {
      problems.push({ offset: token.start, message: "use $name parameters, not '?'" });
    }
  }
  const lastKept = significant[end - 1];
  const cut = lastKept ? lastKept.start + lastKept.text.length : 0;

  const placeholders: Placeholder[] = [];
  const placeholderOffsets: number[] = [];
  let sql = '';
  for (const token of tokens) {
    if (token.start >= cut) break;
    if (token.placeholder) {
      placeholders.push(token.placeholder);
      placeholderOffsets.push(token.start);
      sql += '?';
    } else {
      sql += token.text;
    }
  }
  const first = significant.find((token) => token.text !== '(');
  const statement = first && first.type === 'word' && READ_STARTS.has(first.text.toLowerCase()) ? 'read' : 'write';
  if (!first) problems.push({ offset: 0, message: 'the statement is empty' });
  const columns = statement === 'read' ? resultColumns(text, significant.slice(0, end), problems) : null;
  const paramTargets = findParamTargets(significant.slice(0, end));
  return { sql: dedent(sql), placeholders, placeholderOffsets, paramTargets, statement, columns, problems };
}

const SELECT_MODIFIERS = new Set([
  'distinct', 'all', 'distinctrow', 'high_priority', 'straight_join', 'sql_small_result', 'sql_big_result',
  'sql_buffer_result', 'sql_cache', 'sql_no_cache', 'sql_calc_found_rows',
]);
const SELECT_LIST_ENDS = new Set(['from', 'into', 'where', 'group', 'having', 'order', 'limit', 'union', 'window', 'for', 'lock', 'intersect', 'except']);
/** Words that end an expression but are never an implicit alias. */
const NOT_ALIASES = new Set(['null', 'true', 'false', 'end', 'and', 'or', 'not', 'is', 'unknown', 'between', 'like', 'in', 'div', 'mod', 'xor', 'then', 'else', 'when', 'case']);

/**
 * Names of the columns the first SELECT returns: the alias after `as`, an
 * implicit alias, or the column of a plain (qualified) column reference.
 */
function resultColumns(text: string, tokens: Token[], problems: SqlProblem[]): string[] | null {
  const selectAt = tokens.findIndex((token) => token.type === 'word' && token.text.toLowerCase() === 'select');
  if (selectAt === -1) return null;
  // A leading WITH clause holds SELECTs of its own; only the top-level SELECT names the result.
  let depth = 0;
  let start = -1;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token.text === '(') depth++;
    else if (token.text === ')') depth--;
    else if (depth === 0 && token.type === 'word' && token.text.toLowerCase() === 'select') {
      start = i + 1;
      break;
    }
  }
  if (start === -1) return null;
  while (start < tokens.length && tokens[start]!.type === 'word' && SELECT_MODIFIERS.has(tokens[start]!.text.toLowerCase())) start++;

  const items: Token[][] = [[]];
  depth = 0;
  for (let i = start; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (depth === 0 && token.type === 'word' && SELECT_LIST_ENDS.has(token.text.toLowerCase())) break;
    if (token.text === '(') depth++;
    if (token.text === ')') depth--;
    if (depth === 0 && token.type === 'punct' && token.text === ',') items.push([]);
    else items.at(-1)!.push(token);
  }
  const names: string[] = [];
  for (const item of items) {
    const last = item.at(-1);
    const beforeLast = item.at(-2);
    if (!last) continue;
    if (last.text === '*') return null;
    if (beforeLast?.type === 'word' && beforeLast.text.toLowerCase() === 'as' && isName(last)) {
      names.push(unquote(last));
    } else if (isColumnReference(item)) {
      names.push(unquote(last));
    } else if (item.length >= 2 && isName(last) && !NOT_ALIASES.has(last.text.toLowerCase()) && beforeLast?.text !== '.' && !isOperator(beforeLast)) {
      names.push(unquote(last));
    } else {
      const source = text.slice(item[0]!.start, last.start + last.text.length);
      problems.push({ offset: item[0]!.start, message: `result column "${source}" has no name: give the column an alias` });
    }
  }
  return names;
}

function isName(token: Token): boolean {
  return token.type === 'word' || token.type === 'quoted' || token.type === 'string';
}

function isOperator(token: Token | undefined): boolean {
  return token !== undefined && token.type === 'punct' && token.text !== ')';
}

/** `col`, `t.col` or `db.t.col`. */
function isColumnReference(item: Token[]): boolean {
  return item.every((token, i) => (i % 2 === 0 ? token.type === 'word' || token.type === 'quoted' : token.text === '.')) && item.length % 2 === 1;
}

function unquote(token: Token): string {
  if (token.type === 'quoted') return token.text.slice(1, -1).replaceAll('``', '`');
  if (token.type === 'string') return token.text.slice(1, -1).replaceAll(token.text[0]! + token.text[0]!, token.text[0]!);
  return token.text;
}

/** Removes the indentation the XML file gave the statement, keeping its line structure. */
function dedent(sql: string): string {
  const lines = sql.replace(/\r\n?/g, '\n').split('\n');
  while (lines.length > 0 && lines[0]!.trim() === '') lines.shift();
  while (lines.length > 0 && lines.at(-1)!.trim() === '') lines.pop();
  const indents = lines.slice(1).filter((line) => line.trim() !== '').map((line) => /^[ \t]*/.exec(line)![0].length);
  const indent = indents.length > 0 ? Math.min(...indents) : 0;
  return lines.map((line, i) => (i === 0 ? line.trim() : line.slice(indent).trimEnd())).join('\n');
}

const COMPARISON = new Set(['=', '<', '>', '!']);
const NOT_TABLE_ALIASES = new Set([
  'where', 'on', 'join', 'inner', 'left', 'right', 'outer', 'cross', 'natural', 'straight_join', 'set', 'values', 'value',
  'group', 'order', 'limit', 'using', 'having', 'union', 'for', 'lock', 'select', 'window', 'partition', 'force', 'use', 'ignore',
]);

/**
 * Which column each request parameter meets, read from the shapes where the
 * text says so: `col <op> $p`, `$p <op> col`, `col like $p`, `set col = $p`,
 * `insert into t (a, b) values ($x, $y)`, and `limit`/`offset $p`. Anything
 * else leaves the parameter untyped; the first sighting of a name wins.
 */
function findParamTargets(tokens: Token[]): Record<string, ParamTarget> {
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

  const targets: Record<string, ParamTarget> = {};
  const set = (name: string, target: ParamTarget) => {
    if (!(name in targets)) targets[name] = target;
  };
  /** The column reference ending at index `last` (`col`, `t.col`), walking backwards. */
  const columnEndingAt = (last: number): ParamTarget | undefined => {
    const column = word(tokens[last]);
    if (column === undefined || tokens[last]!.type === 'word' && NOT_ALIASES.has(column.toLowerCase())) return undefined;
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
    if (before?.type === 'punct' && before.text === ',' && tokens.slice(0, i).reverse().find((t) => t.type === 'word')?.text.toLowerCase() === 'limit') {
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
