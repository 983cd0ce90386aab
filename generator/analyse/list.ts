import type { Diagnostics } from '../diagnostics.js';
import type { ParamType, SqlStep } from '../ir.js';
import { readListText } from '../sql/list.js';
import type { RawElement } from './elements.js';
import { type ListRequest, readFilter, readPage, readSort } from './list-elements.js';

/**
 * Lists that scale (docs/internals/contract.md §11): `Page`, `Filter` and `Sort` in a GET Request make its one read step a
 * list, whose conditions, order and limit the runtime adds per request (runtime/lists/). Each element's
 * attributes are a table, as Backend's are; what needs the database (the key's last column unique, no column
 * that may be NULL, the types of the cursor's values) is checked once the step is typed (`checkListFacts`, list-facts.ts). The elements are read one by one in
 * list-elements.ts; the pieces the runtime takes, and the widest statement, are made in list-spec.ts (re-exported here
 * for the emitter).
 */
export const LIST_ELEMENTS = new Set(['Page', 'Filter', 'Sort']);

/** The parameters a paged list reads besides its filters and sort. */
export const PAGE_PARAMS = ['limit', 'after'] as const;

/** The clauses after WHERE, by their first word. */
const CLAUSES: Record<string, string> = { group: 'GROUP BY', order: 'ORDER BY', fetch: 'FETCH FIRST', lock: 'LOCK IN SHARE MODE', for: 'FOR UPDATE' };

export type { ListRequest } from './list-elements.js';
// The emitter imports them from here.
export { listSpec, widestStatement } from './list-spec.js';

/** What a Request's list elements add to its operation: the step they make a list, and the parameters they read. */
export interface ListParams {
  /** In order: the filters', the sort's, then limit and after. */
  params: string[];
  types: Record<string, ParamType>;
}

/** Reads a Request's Page, Filter and Sort elements, makes its read step a list; undefined when there are none or they are wrong. */
export function analyseList(elements: readonly RawElement[], request: ListRequest, diagnostics: Diagnostics): ListParams | undefined {
  if (elements.length === 0) return undefined;
  const before = diagnostics.count;
  const pages = elements.filter((element) => element.name === 'Page');
  const sorts = elements.filter((element) => element.name === 'Sort');
  for (const extra of [...pages.slice(1), ...sorts.slice(1)]) diagnostics.error(extra.at, `only one ${extra.name} per Request`);
  for (const element of elements) {
    if (element.children.length > 0 || element.text.trim() !== '')
      diagnostics.error(element.at, `${element.name} holds no text or elements: its attributes say it all`);
  }
  if (request.method !== 'GET') {
    diagnostics.error(elements[0]!.at, `${elements[0]!.name} belongs in a GET Request, not ${request.method}: it pages, filters or sorts a list of rows`);
    return undefined;
  }
  const reads = request.steps.filter((step): step is SqlStep => step.kind === 'sql' && step.statement === 'read' && step.output);
  if (reads.length !== 1) {
    diagnostics.error(
      elements[0]!.at,
      `Page, Filter and Sort apply to the Request's one read Sql step with output="true"; this Request has ${reads.length}${reads.length > 0 ? ` (${reads.map((step) => step.id).join(', ')})` : ''}`,
    );
    return undefined;
  }
  const step = reads[0]!;
  const where = `step "${step.id}"`;
  if (step.columns === null) {
    diagnostics.error(step.at, `${where} is a list: name its columns rather than select *, so that its order and filters can be checked`);
    return undefined;
  }
  const shape = readListText(step.sql);
  const paged = pages.length > 0;
  const ordered = paged || sorts.length > 0;
  if (shape.setOperation) {
    diagnostics.error(
      step.at,
      `${where} is a list: one SELECT, not ${shape.setOperation.keyword.toUpperCase()} (the list's conditions would apply to its last SELECT only)`,
    );
  }
  const tail = step.sql.slice(shape.tail.start).trim();
  const clause = shape.tail.keyword === null ? '' : (CLAUSES[shape.tail.keyword] ?? shape.tail.keyword.toUpperCase());
  if (ordered && shape.tail.keyword !== null) {
    diagnostics.error(
      step.at,
      `${where} has a Page or Sort: its statement ends with its WHERE clause, not ${clause} (the list adds the order and the limit itself; a grouped list cannot be paged)`,
    );
  } else if (tail.includes('?')) {
    diagnostics.error(step.at, `${where} is a list: its parameters come before its ${clause}, where the filters go`);
  }

  const filters = elements
    .filter((element) => element.name === 'Filter')
    .flatMap((element) => {
      const filter = readFilter(element, request, step, diagnostics);
      return filter ? [filter] : [];
    });
  for (const [index, filter] of filters.entries()) {
    if (filters.findIndex((other) => other.param === filter.param) !== index) diagnostics.error(filter.at, `a second Filter of the parameter ${filter.param}`);
  }
  const sort = sorts[0] ? readSort(sorts[0], shape, step, diagnostics) : null;
  const page = pages[0] ? readPage(pages[0], shape, step, diagnostics) : null;
  const params = [...filters.map((filter) => filter.param), ...(sort ? [sort.param] : []), ...(page ? PAGE_PARAMS : [])];
  for (const param of params) {
    if (request.params.includes(param)) {
      diagnostics.error(
        elements[0]!.at,
        `the parameter ${param} is the list's own (a filter's, the sort or the page's), which a step of the Request also uses as a required parameter: rename one`,
      );
    }
  }
  if (sort && (filters.some((filter) => filter.param === sort.param) || (paged && PAGE_PARAMS.includes(sort.param as 'limit')))) {
    diagnostics.error(
      sort.at,
      `the Sort's param ${sort.param} is taken by ${paged && PAGE_PARAMS.includes(sort.param as 'limit') ? 'the page' : 'a Filter'}: name another`,
    );
  }
  if (paged && request.steps.some((other) => other.id === 'next')) {
    diagnostics.error(pages[0]!.at, 'a paged Request answers its cursor as "next" beside the rows: rename the step "next"');
  }
  const named = request.steps.find((other) => other.id === 'list');
  if (named) diagnostics.error(named.at, 'step id "list" is the name the handler gives the list it reads: rename the step');
  if (diagnostics.count > before) return undefined;

  let head = step.sql.slice(0, shape.tail.start).trimEnd();
  if (shape.where?.wrap) head = `${head.slice(0, shape.where.start)}(${head.slice(shape.where.start, shape.where.end)})${head.slice(shape.where.end)}`;
  const equalities = shape.equalities.flatMap(({ qualifier, column, placeholder }) => {
    const table = qualifier === null ? shape.onlyTable : (shape.tables.get(qualifier.toLowerCase()) ?? null);
    return table === null ? [] : [{ table, column, bind: placeholder }];
  });
  step.list = { head, where: shape.where !== null, tail: ordered ? '' : tail, filters, sort, page, equalities };
  const types: Record<string, ParamType> = {};
  if (sort) {
    types[sort.param] = {
      kind: 'enum',
      nullable: false,
      values: sort.allow.flatMap((allowed) => [allowed.name, `-${allowed.name}`]),
      optional: true,
    };
  }
  if (page) {
    types.limit = { kind: 'integer', nullable: false, min: 1, max: page.max, optional: true };
    // Its bound once the key's columns are known (checkListFacts).
    types.after = { kind: 'string', nullable: false, optional: true };
  }
  return { params, types };
}
