// A list's pieces as the runtime takes them (contract.ts `ListSpec`), and its widest statement: apart from the
// analysis, since the emitter and the types stage need them and nothing else of it.
import type { ListSpec } from '../../runtime/contract.js';
import { defaultSort, listStatement, orderOf } from '../../runtime/lists/statement.js';
import type { List, ListTerm } from '../ir.js';

/** The runtime's pieces of a list (contract.ts `ListSpec`): what the module holds, and what the runtime builds statements from. */
export function listSpec(list: List): ListSpec {
  const term = (part: ListTerm) => ({ sql: part.sql, column: part.column, desc: part.desc, type: part.type ?? 'string' });
  return {
    sql: list.head,
    where: list.where,
    tail: list.tail,
    filters: list.filters.map((filter) => ({ param: filter.param, sql: filter.sql, uses: filter.uses })),
    sort: list.sort && {
      param: list.sort.param,
      allow: Object.fromEntries(list.sort.allow.map((allowed) => [allowed.name, term(allowed.term)])),
      default: list.sort.default,
    },
    page: list.page && { size: list.page.size, max: list.page.max, key: list.page.key.map(term) },
  };
}

/**
 * The list's widest statement, as the runtime makes it: every filter, the default order, after a cursor, with a
 * limit. The database is asked to prepare it at generation (one statement checks every piece), and the module
 * shows it.
 */
export function widestStatement(list: List): string {
  const spec = listSpec(list);
  return listStatement(spec, { filters: spec.filters, order: orderOf(spec, defaultSort(spec)), after: list.page !== null, limit: list.page !== null });
}
