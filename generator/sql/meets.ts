import { tablesOf } from './targets.js';
import { NOT_ALIASES, type Token, tokenize, unquote } from './tokens.js';

/** A table column a statement compares a value with or writes it to; `table` null when the text does not say. */
export interface ColumnMet {
  table: string | null;
  column: string;
}

const COMPARISON = new Set(['=', '<', '>', '!']);
/** Words before a parenthesis that opens no function call: the value inside is a list item, not a function's argument. */
const NOT_FUNCTIONS = new Set(['values', 'value', 'in', 'exists', 'any', 'all', 'some', 'select', 'from', 'where', 'and', 'or', 'not', 'on', 'using', 'into']);

/**
 * Every column each request parameter meets, through the functions around it: `pass_word = sha2($pw, 256)`,
 * `sha2(concat($salt, $pw)) = pass_word`, `insert into t (a, pin_hash) values ($a, sha2($pin))`, `set col = $p`.
 * Wider than `findParamTargets` (which types a parameter, so only where it meets the column bare): this one
 * says what a parameter's value is compared with or becomes (generator/secrets.ts: a password column's makes
 * it a secret). `tokens` are a statement's significant tokens (no spaces, no comments).
 */
export function columnsMet(tokens: readonly Token[]): Map<string, ColumnMet[]> {
  const { tables, onlyTable } = tablesOf([...tokens]);
  const word = (token: Token | undefined) => (token && (token.type === 'word' || token.type === 'quoted') ? unquote(token) : undefined);
  const isWord = (token: Token | undefined, ...words: string[]) => token?.type === 'word' && words.includes(token.text.toLowerCase());
  // Each token's innermost open parenthesis, and each parenthesis's match.
  const parent: (number | undefined)[] = [];
  const close = new Map<number, number>();
  const open: number[] = [];
  for (const [i, token] of tokens.entries()) {
    parent.push(open.at(-1));
    if (token.type === 'punct' && token.text === '(') open.push(i);
    if (token.type === 'punct' && token.text === ')' && open.length > 0) close.set(open.pop()!, i);
  }
  const columnEndingAt = (last: number): ColumnMet | undefined => {
    const column = word(tokens[last]);
    if (column === undefined || (tokens[last]!.type === 'word' && NOT_ALIASES.has(column.toLowerCase()))) return undefined;
    if (tokens[last - 1]?.text !== '.') return { table: onlyTable, column };
    const qualifier = word(tokens[last - 2]);
    return qualifier === undefined ? undefined : { table: tables.get(qualifier.toLowerCase()) ?? null, column };
  };
  const columnStartingAt = (first: number): ColumnMet | undefined => {
    const head = word(tokens[first]);
    if (head === undefined || (tokens[first]!.type === 'word' && NOT_ALIASES.has(head.toLowerCase()))) return undefined;
    if (tokens[first + 1]?.text !== '.') return { table: onlyTable, column: head };
    const column = word(tokens[first + 2]);
    return column === undefined ? undefined : { table: tables.get(head.toLowerCase()) ?? null, column };
  };
  /** The column compared with, or set to, the expression from `start` to `end`. */
  const compared = (start: number, end: number): ColumnMet | undefined => {
    let k = start - 1;
    while (k >= 0 && tokens[k]!.type === 'punct' && COMPARISON.has(tokens[k]!.text)) k--;
    if (k < start - 1 || (isWord(tokens[k], 'like') && k-- >= 0)) return columnEndingAt(k);
    let m = end + 1;
    while (m < tokens.length && tokens[m]!.type === 'punct' && COMPARISON.has(tokens[m]!.text)) m++;
    if (m > end + 1 || isWord(tokens[m], 'like')) return columnStartingAt(isWord(tokens[m], 'like') ? m + 1 : m);
    return undefined;
  };
  /** The column of an `insert into t (a, b) values (x, y)` that the tuple's item from `start` (its parenthesis `paren`) goes to. */
  const inserted = (paren: number, start: number): ColumnMet | undefined => {
    const before = tokens[paren - 1];
    const tuple = isWord(before, 'values', 'value') || (before?.text === ',' && tokens[paren - 2]?.text === ')' && parent[paren] === undefined);
    const into = tokens.findIndex((token) => isWord(token, 'into'));
    if (!tuple || into === -1 || into > paren || onlyTable === null) return undefined;
    const columnsOpen = tokens.findIndex((token, index) => index > into && token.text === '(');
    if (columnsOpen === -1 || columnsOpen >= paren) return undefined;
    const columns: string[] = [];
    for (let i = columnsOpen + 1; i < (close.get(columnsOpen) ?? columnsOpen); i++) if (tokens[i]!.text !== ',') columns.push(word(tokens[i]) ?? '');
    let index = 0;
    for (let i = paren + 1; i < start; i++) if (parent[i] === paren && tokens[i]!.text === ',') index++;
    const column = columns[index];
    return column ? { table: onlyTable, column } : undefined;
  };

  const met = new Map<string, ColumnMet[]>();
  for (const [i, token] of tokens.entries()) {
    if (token.placeholder?.kind !== 'param') continue;
    const found: ColumnMet[] = [];
    // The parameter, then each function call (or bare parenthesis) around it, outwards.
    let start = i;
    let end = i;
    for (;;) {
      const column = compared(start, end);
      if (column) found.push(column);
      const paren = parent[start];
      if (paren === undefined) break;
      const name = tokens[paren - 1];
      if (name?.type === 'word' && !NOT_FUNCTIONS.has(name.text.toLowerCase())) {
        // A function's argument: what the call's value meets, the parameter's value meets (hashed, cast, joined).
        start = paren - 1;
      } else if (name?.type === 'word' || name?.text === ',') {
        // An item of a list (`values (...)`, `in (...)`): the column an insert puts it in, and no further.
        const into = inserted(paren, start);
        if (into) found.push(into);
        if (isWord(name, 'in')) {
          // `col in (...)`, `col not in (...)`: compared with the column before.
          const column = columnEndingAt(isWord(tokens[paren - 2], 'not') ? paren - 3 : paren - 2);
          if (column) found.push(column);
        }
        if (name.type === 'word' || into) break;
        start = paren;
      } else start = paren;
      end = close.get(paren) ?? tokens.length - 1;
    }
    met.set(token.placeholder.name, [...(met.get(token.placeholder.name) ?? []), ...found]);
  }
  return met;
}

/**
 * The significant tokens of a statement whose placeholders are already `?` (a step's `sql`, an AuthQuery's), each
 * `?` given back the name of what binds to it, in order; undefined when the count of `?` is not the count of names.
 */
export function namedTokens(sql: string, names: readonly (string | null)[]): Token[] | undefined {
  const tokens = tokenize(sql, []).filter((token) => token.type !== 'space' && token.type !== 'comment');
  const marks = tokens.filter((token) => token.type === 'punct' && token.text === '?');
  if (marks.length !== names.length) return undefined;
  let next = 0;
  return tokens.map((token) => {
    if (token.type !== 'punct' || token.text !== '?') return token;
    const name = names[next++];
    return name === null || name === undefined ? token : { ...token, type: 'placeholder', placeholder: { kind: 'param', name } };
  });
}
