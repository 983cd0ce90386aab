import { isColumnReference, isName, isOperator, NOT_ALIASES, type SqlProblem, type Token, unquote } from './tokens.js';

/** The words that may follow `select` before its list (MariaDB's SELECT options): the block reader skips them too. */
export const SELECT_MODIFIERS = new Set([
  'distinct',
  'all',
  'distinctrow',
  'high_priority',
  'straight_join',
  'sql_small_result',
  'sql_big_result',
  'sql_buffer_result',
  'sql_cache',
  'sql_no_cache',
  'sql_calc_found_rows',
]);
const SELECT_LIST_ENDS = new Set(['from', 'into', 'where', 'group', 'having', 'order', 'limit', 'union', 'window', 'for', 'lock', 'intersect', 'except']);

/**
 * Names of the columns the first SELECT returns: the alias after `as`, an
 * implicit alias, or the column of a plain (qualified) column reference.
 */
export function resultColumns(text: string, tokens: Token[], problems: SqlProblem[]): string[] | null {
  const items = selectList(tokens);
  if (items === null) return null;
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

/**
 * The items of the first top-level SELECT's list, each its tokens (significant ones only), or null when the
 * statement has no SELECT. A leading WITH clause holds SELECTs of its own; only the top-level SELECT names the result.
 */
export function selectList(tokens: Token[]): Token[][] | null {
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
  return items;
}
