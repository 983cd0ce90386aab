// What the document says of a list (docs/internals/contract.md §11): its filters, sort and page, its cursor and its Link
// header; apart from the operation, which only asks for them.
import type { List, Operation, SqlStep } from '../ir.js';
import type { Schema } from './responses.js';

export const NEXT_CURSOR = {
  type: ['string', 'null'],
  description: 'The cursor of the next page: send it as after (with the same filters) for the rows that follow. Null on the last page.',
};

export const LINK_HEADER = {
  description: 'On a page that has a next one: <path?...&after=cursor>; rel="next" (RFC 8288), the same request for the next page.',
  schema: { type: 'string' },
};

/** The operation's list (docs/internals/contract.md §11), if a step is one. */
export function listOf(operation: Operation): List | undefined {
  return operation.steps.find((step): step is SqlStep => step.kind === 'sql' && step.list !== undefined)?.list;
}

export function listNote(list: List): string {
  const parts: string[] = [];
  if (list.filters.length > 0) parts.push(`Filters, each applied only when its parameter is sent: ${list.filters.map((filter) => filter.param).join(', ')}.`);
  if (list.sort) parts.push(`Sorted by ${list.sort.param}: one of ${list.sort.allow.map((allowed) => allowed.name).join(', ')}, - before it for descending.`);
  if (list.page) {
    parts.push(
      `Pages of ${list.page.size} rows (limit, at most ${list.page.max}) in a stable order; next holds the cursor of the next page (also in the Link header): send it as after, with the same filters, for the rows that follow. A cursor is signed: a changed, foreign or stale one is a 400.`,
    );
  }
  return parts.join(' ');
}

export function listParamDescription(list: List, name: string): Schema {
  if (list.page && name === 'limit') return { description: `Rows in the page: ${list.page.size} unless given, at most ${list.page.max}.` };
  if (list.page && name === 'after') return { description: 'The cursor (next) of the page before: this page holds the rows after it, in its sort.' };
  if (list.sort && name === list.sort.param) {
    return {
      description: `The order${list.sort.default ? ` (default ${list.sort.default.desc ? '-' : ''}${list.sort.default.name})` : ''}: a name, - before it for descending.`,
    };
  }
  return list.filters.some((filter) => filter.param === name) ? { description: 'A filter: its condition applies only when the parameter is sent.' } : {};
}
