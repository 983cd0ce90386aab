import { selectList } from './columns.js';
import { tablesOf } from './targets.js';
import { isColumnReference, isName, type Token, tokenize, unquote } from './tokens.js';

/**
 * What a list (docs/internals/contract.md §11) needs to know of its step's statement, read from its text with `?`
 * placeholders: where its own WHERE condition is, where what follows the conditions begins (GROUP BY, ORDER BY,
 * LIMIT, ...), the columns it returns and the tables they come from. Not a SQL parser: the database checks the
 * statements a list makes, at generation.
 */
export interface ListText {
  /** Where the WHERE condition begins and ends, and whether it holds a top-level OR (then it goes in parentheses). */
  where: { start: number; end: number; wrap: boolean } | null;
  /** Where the clauses after the conditions begin (text.length when there are none), and the first one's keyword. */
  tail: { start: number; keyword: string | null };
  /** The first top-level UNION, INTERSECT or EXCEPT: conditions added at the end would apply to its last SELECT only. */
  setOperation: { offset: number; keyword: string } | null;
  /** The result columns, each with the column it reads when it is a plain column reference. */
  items: ResultItem[] | null;
  /** Table aliases and names (lower case) to tables; the only table when there is one. */
  tables: Map<string, string>;
  onlyTable: string | null;
  /**
   * Columns the WHERE condition compares with `=` to a value (`o.user_id = ?`), when it is a conjunction: an index's
   * leading columns; with the ordinal of the `?` they meet, if they meet one.
   */
  equalities: { qualifier: string | null; column: string; placeholder: number | null }[];
}

export interface ResultItem {
  name: string | null;
  /** `o.created_on` as `{ qualifier: 'o', column: 'created_on' }`, when the item is a plain column reference. */
  reference: { qualifier: string | null; column: string } | null;
}

/** Clauses that end the WHERE condition: what a list's conditions go before. */
const TAIL = new Set(['group', 'having', 'window', 'order', 'limit', 'offset', 'fetch', 'for', 'lock', 'into', 'procedure', 'returning']);
const SET_OPERATIONS = new Set(['union', 'intersect', 'except', 'minus']);
/** Operators below AND: a condition holding one at its top level is put in parentheses before `and` joins it. */
const BELOW_AND = new Set(['or', 'xor']);

export function readListText(text: string): ListText {
  const tokens = tokenize(text, []).filter((token) => token.type !== 'space' && token.type !== 'comment');
  const { tables, onlyTable } = tablesOf(tokens);
  let depth = 0;
  let selects = 0;
  let where: { at: number; token: Token } | undefined;
  let tail: Token | undefined;
  let setOperation: Token | undefined;
  for (const [index, token] of tokens.entries()) {
    if (token.text === '(') depth++;
    else if (token.text === ')') depth--;
    if (depth !== 0 || token.type !== 'word') continue;
    const word = token.text.toLowerCase();
    if (word === 'select') selects++;
    if (selects === 0) continue;
    if (SET_OPERATIONS.has(word)) {
      setOperation ??= token;
      break;
    }
    if (word === 'where' && where === undefined && tail === undefined) where = { at: index, token };
    else if (TAIL.has(word) && tail === undefined) tail = token;
  }
  const tailStart = tail?.start ?? trimmedEnd(text);
  let whereText: ListText['where'] = null;
  const equalities: ListText['equalities'] = [];
  if (where) {
    const condition = tokens.slice(where.at + 1).filter((token) => token.start < tailStart);
    const first = condition[0];
    const last = condition.at(-1);
    const wrap = orAtTopLevel(condition);
    if (first && last) whereText = { start: first.start, end: last.start + last.text.length, wrap };
    if (!wrap) equalities.push(...equalitiesOf(condition, tokens));
  }
  return {
    where: whereText,
    tail: { start: tailStart, keyword: tail ? tail.text.toLowerCase() : null },
    setOperation: setOperation ? { offset: setOperation.start, keyword: setOperation.text.toLowerCase() } : null,
    items: itemsOf(tokens),
    tables,
    onlyTable,
    equalities,
  };
}

/** Whether a condition holds an OR (or XOR, or `||`) outside parentheses: `and` would bind tighter than it, so it goes in parentheses. */
export function topLevelOr(text: string): boolean {
  return orAtTopLevel(tokenize(text, []).filter((token) => token.type !== 'space' && token.type !== 'comment'));
}

function orAtTopLevel(condition: Token[]): boolean {
  let level = 0;
  for (const [index, token] of condition.entries()) {
    if (token.text === '(') level++;
    else if (token.text === ')') level--;
    else if (level !== 0) continue;
    else if (token.type === 'word' && BELOW_AND.has(token.text.toLowerCase())) return true;
    // `||` (OR, in MariaDB's default mode) is two punctuation tokens to the tokenizer.
    else if (token.text === '|' && condition[index + 1]?.text === '|') return true;
  }
  return false;
}

function itemsOf(tokens: Token[]): ResultItem[] | null {
  const list = selectList(tokens);
  if (list === null) return null;
  return list.map((item) => {
    const last = item.at(-1);
    const beforeLast = item.at(-2);
    const aliased = beforeLast?.type === 'word' && beforeLast.text.toLowerCase() === 'as' && last !== undefined && isName(last);
    const expression = aliased ? item.slice(0, -2) : item;
    const reference = isColumnReference(expression) && expression.length <= 3 ? referenceOf(expression) : null;
    const name = aliased ? unquote(last!) : reference ? reference.column : null;
    return { name, reference };
  });
}

/** `col` or `t.col`, as a qualifier and a column. */
function referenceOf(tokens: Token[]): { qualifier: string | null; column: string } {
  return tokens.length === 3 ? { qualifier: unquote(tokens[0]!), column: unquote(tokens[2]!) } : { qualifier: null, column: unquote(tokens[0]!) };
}

/** The `col = ?` and `? = col` terms of a conjunction; `all` the statement's tokens, to count its placeholders. */
function equalitiesOf(condition: Token[], all: Token[]): ListText['equalities'] {
  const found: ListText['equalities'] = [];
  const terms: Token[][] = [[]];
  let level = 0;
  for (const token of condition) {
    if (token.text === '(') level++;
    else if (token.text === ')') level--;
    if (level === 0 && token.type === 'word' && token.text.toLowerCase() === 'and') terms.push([]);
    else terms.at(-1)!.push(token);
  }
  for (const term of terms) {
    const equals = term.findIndex((token) => token.type === 'punct' && token.text === '=');
    if (equals === -1) continue;
    const [left, right] = [term.slice(0, equals), term.slice(equals + 1)];
    const value = (side: Token[]) => side.length === 1 && (side[0]!.text === '?' || side[0]!.type === 'number' || side[0]!.type === 'string');
    const column = (side: Token[]) => (isColumnReference(side) && side.length <= 3 ? referenceOf(side) : undefined);
    const valueSide = value(right) ? right : value(left) ? left : undefined;
    const reference = valueSide === right ? column(left) : valueSide === left ? column(right) : undefined;
    if (!reference || !valueSide) continue;
    const token = valueSide[0]!;
    const placeholder = token.text === '?' ? all.filter((other) => other.text === '?' && other.start < token.start).length : null;
    found.push({ ...reference, placeholder });
  }
  return found;
}

function trimmedEnd(text: string): number {
  return text.trimEnd().length;
}
