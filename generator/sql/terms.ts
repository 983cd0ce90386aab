import type { Token } from './tokens.js';
import { unquote } from './tokens.js';

/**
 * A condition's top-level AND terms, and the one term shape that keeps a table reference to the caller's tenant
 * (docs/internals/contract.md §14; the proof is generator/analyse/tenancy.ts). Safety comes from exactness: a
 * term proves a reference only when it is literally `q.col = $tenant`, so `… is true`, `not …`, `… collate x`,
 * `<=>`, `in ($tenant)` and `binary …` prove nothing, and a condition holding an `or` proves nothing at all.
 */

/** One top-level AND term of a condition (parentheses around a pure AND already flattened). */
export interface Term {
  tokens: readonly Token[];
  offset: number;
}

/** A `where`/`on` condition: its tokens, its AND terms, or `'disjunction'` (no term counts) and why. */
export interface Condition {
  tokens: readonly Token[];
  terms: Term[] | 'disjunction';
  /** What made it a disjunction, for messages: `an or`, `a not`, … */
  why?: string;
}

const keyword = (token: Token | undefined, ...words: string[]) => token?.type === 'word' && words.includes(token.text.toLowerCase());
const punct = (token: Token | undefined, text: string) => token?.type === 'punct' && token.text === text;
/** Two one-character tokens written together (`||`, `&&`, `:=`, `!=`). */
const pair = (a: Token | undefined, b: Token | undefined, text: string) =>
  a !== undefined && b !== undefined && a.text + b.text === text && a.type === 'punct' && b.type === 'punct' && a.start + 1 === b.start;

/** Words after `not` that make it a comparison (`not in`, `not like`), not a negation of the term. */
const NOT_COMPARISON = new Set(['in', 'like', 'between', 'regexp', 'rlike', 'exists', 'sounds']);

/**
 * Splits `tokens` at depth 0 on `and`/`&&`, where `(…)` and `case … end` are brackets and the `and` of a pending
 * `between` pairs with it. Depth 0 holding `or`, `xor`, `||` (logical or in MariaDB's default sql_mode; taken
 * as one in every mode), `:=`, or a `not`/`!` that negates makes it a disjunction.
 */
export function readCondition(tokens: readonly Token[]): Condition {
  const terms: Term[] = [];
  let depth = 0;
  let betweens = 0;
  let start = 0;
  const close = (end: number) => {
    const term = tokens.slice(start, end);
    if (term.length > 0) terms.push(...flattened(term));
    start = end;
  };
  for (let i = 0; i < tokens.length; i++) {
    // A word after a dot is a name (`d.end`, `d.case`, `o.or`: MariaDB takes even reserved words there), never a
    // keyword: read as one, `d.end` would close a case that is not open and hide an `or` after it.
    const token = punct(tokens[i - 1], '.') && tokens[i]!.type === 'word' ? { ...tokens[i]!, type: 'quoted' as const } : tokens[i]!;
    const next = tokens[i + 1];
    if (punct(token, '(') || keyword(token, 'case')) depth++;
    else if (punct(token, ')') || keyword(token, 'end')) depth--;
    // An `end` the reader pairs with no `case` is a column named end to the database: its brackets are not ours.
    if (depth < 0) return { tokens, terms: 'disjunction', why: 'an end without its case' };
    if (depth !== 0 || punct(token, ')') || keyword(token, 'end')) {
      if (pair(token, next, ':=')) return { tokens, terms: 'disjunction', why: 'an assignment (:=)' };
      continue;
    }
    if (keyword(token, 'or')) return { tokens, terms: 'disjunction', why: 'an or' };
    if (keyword(token, 'xor')) return { tokens, terms: 'disjunction', why: 'an xor' };
    if (pair(token, next, '||')) return { tokens, terms: 'disjunction', why: 'an or (||)' };
    if (pair(token, next, ':=')) return { tokens, terms: 'disjunction', why: 'an assignment (:=)' };
    if (keyword(token, 'not') && !keyword(tokens[i - 1], 'is') && !keyword(next, ...NOT_COMPARISON)) {
      return { tokens, terms: 'disjunction', why: 'a not' };
    }
    if (punct(token, '!') && !pair(token, next, '!=')) return { tokens, terms: 'disjunction', why: 'a not (!)' };
    if (keyword(token, 'between')) betweens++;
    else if (keyword(token, 'and') && betweens > 0) betweens--;
    else if (keyword(token, 'and')) {
      close(i);
      start = i + 1;
    } else if (pair(token, next, '&&')) {
      close(i);
      start = i + 2;
      i++;
    }
  }
  if (depth !== 0) return { tokens, terms: 'disjunction', why: 'a case without its end' };
  close(tokens.length);
  return { tokens, terms };
}

/** `(a and b)` as a term is the terms `a` and `b`; any other term is itself (a subquery is never opened). */
function flattened(term: readonly Token[]): Term[] {
  const own: Term = { tokens: term, offset: term[0]!.start };
  if (!punct(term[0], '(') || !punct(term.at(-1), ')') || keyword(term[1], 'select', 'with', 'values', 'table')) return [own];
  let depth = 0;
  for (let i = 0; i < term.length - 1; i++) {
    if (punct(term[i], '(')) depth++;
    else if (punct(term[i], ')')) depth--;
    if (depth === 0) return [own]; // `(a) = (b)`: the first parenthesis closes before the end
  }
  const inner = readCondition(term.slice(1, -1));
  return inner.terms === 'disjunction' || inner.terms.length === 0 ? [own] : inner.terms;
}

/** A name token's text without quotes, or undefined when it is not a name. */
export const nameOf = (token: Token | undefined) => (token && (token.type === 'word' || token.type === 'quoted') ? unquote(token) : undefined);

export const isTenant = (token: Token | undefined) => token?.type === 'placeholder' && token.placeholder?.kind === 'tenant';

/**
 * The column a term compares by `=`, when the term is exactly `[q.]col = <one token>` or `<one token> = [q.]col`:
 * what the matcher and the proof's messages (`compared with $org, not $tenant`) read.
 */
export function comparison(term: Term): { qualifier: string | null; column: string; other: Token; at: number } | undefined {
  const t = term.tokens;
  const equals = t.findIndex((token) => punct(token, '='));
  if (equals === -1) return undefined;
  const left = t.slice(0, equals);
  const right = t.slice(equals + 1);
  // A bare word on the right (`$tenant = org_id`) is the column; on the left it is preferred.
  const onLeft = columnOf(left);
  if (onLeft && single(right) && (right[0]!.type !== 'word' || isTenant(right[0]))) return { ...onLeft, other: right[0]! };
  const onRight = columnOf(right);
  if (onRight && single(left)) return { ...onRight, other: left[0]! };
  return undefined;
}

/** `col` or `q.col`, alone. */
function columnOf(side: readonly Token[]): { qualifier: string | null; column: string; at: number } | undefined {
  if (side.length === 1 && nameOf(side[0]) !== undefined) return { qualifier: null, column: nameOf(side[0])!, at: side[0]!.start };
  if (side.length === 3 && punct(side[1], '.') && nameOf(side[0]) !== undefined && nameOf(side[2]) !== undefined) {
    return { qualifier: nameOf(side[0])!, column: nameOf(side[2])!, at: side[0]!.start };
  }
  return undefined;
}

const single = (side: readonly Token[]) => (side.length === 1 && side[0]!.type !== 'punct' ? side[0] : undefined);

/**
 * Whether `term` is exactly `q.col = $tenant` or `$tenant = q.col` (or, `qualifierOk(null)` allowing it, the bare
 * `col = $tenant`), `col` being the tenant column (case-insensitive) and `qualifierOk(q)` saying q names the
 * reference in the term's own block.
 */
export function provesTenant(term: Term, column: string, qualifierOk: (qualifier: string | null) => boolean): boolean {
  const found = comparison(term);
  return found !== undefined && isTenant(found.other) && found.column.toLowerCase() === column.toLowerCase() && qualifierOk(found.qualifier);
}
