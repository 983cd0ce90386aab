/**
 * The SQL tokenizer: enough of SQL to tell placeholders from strings, quoted
 * identifiers and comments. It is not a SQL parser: the database remains the
 * judge of the statement itself.
 */
import type { ParamTarget } from '../ir.js';

export type { ParamTarget };

export type Placeholder =
  | { kind: 'param'; name: string }
  | { kind: 'uid' }
  /** `$tenant`: the caller's tenant on a tenant backend (docs/internals/contract.md §14). */
  | { kind: 'tenant' }
  | { kind: 'ref'; step: string; row: number; column: string }
  /** `$claim.<name>`: a claim of an outside issuer's token, in that issuer's UserQuery (docs/internals/contract.md §9). */
  | { kind: 'claim'; name: string };

export interface Token {
  type: 'word' | 'quoted' | 'string' | 'number' | 'punct' | 'placeholder' | 'comment' | 'space';
  text: string;
  /** Offset in the scanned text. */
  start: number;
  placeholder?: Placeholder;
}

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
/** `$[step][row].column`: an earlier step's result (docs/internals/seed.md §2.1 rule 2). */
const REFERENCE = /^\$\[([A-Za-z_][A-Za-z0-9_]*)\]\[(\d+)\]\.([A-Za-z_][A-Za-z0-9_]*)/;
/** `$claim.<name>`: a top-level claim of a token (an Issuer's UserQuery). */
const CLAIM = /^\$claim\.([A-Za-z_][A-Za-z0-9_]*)/;

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
      const claim = CLAIM.exec(rest);
      if (reference) {
        push('placeholder', i + reference[0].length, { kind: 'ref', step: reference[1]!, row: Number(reference[2]), column: reference[3]! });
      } else if (claim) {
        push('placeholder', i + claim[0].length, { kind: 'claim', name: claim[1]! });
      } else if (rest.startsWith('$[')) {
        problems.push({ offset: i, message: 'malformed step reference: write $[step][row].column' });
        push('punct', i + 1);
      } else if (name) {
        const placeholder: Placeholder = name[0] === 'uid' ? { kind: 'uid' } : name[0] === 'tenant' ? { kind: 'tenant' } : { kind: 'param', name: name[0] };
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

export function isName(token: Token): boolean {
  return token.type === 'word' || token.type === 'quoted' || token.type === 'string';
}

export function isOperator(token: Token | undefined): boolean {
  return token !== undefined && token.type === 'punct' && token.text !== ')';
}

/** `col`, `t.col` or `db.t.col`. */
export function isColumnReference(item: Token[]): boolean {
  return item.every((token, i) => (i % 2 === 0 ? token.type === 'word' || token.type === 'quoted' : token.text === '.')) && item.length % 2 === 1;
}

export function unquote(token: Token): string {
  if (token.type === 'quoted') return token.text.slice(1, -1).replaceAll('``', '`');
  if (token.type === 'string') return token.text.slice(1, -1).replaceAll(token.text[0]! + token.text[0]!, token.text[0]!);
  return token.text;
}

/** Words that end an expression but are never an implicit alias. */
export const NOT_ALIASES = new Set([
  'null',
  'true',
  'false',
  'end',
  'and',
  'or',
  'not',
  'is',
  'unknown',
  'between',
  'like',
  'in',
  'div',
  'mod',
  'xor',
  'then',
  'else',
  'when',
  'case',
]);
