import type { ListSpec } from '../../runtime/contract.js';
import { defaultSort, listStatement, orderOf } from '../../runtime/lists/statement.js';
import type { Diagnostics } from '../diagnostics.js';
import type { HttpMethod, List, ListFilter, ListSort, ListTerm, Operation, ParamType, SqlStep, Step } from '../ir.js';
import { scanSql, tokenize } from '../sql/index.js';
import { type ListText, readListText, topLevelOr } from '../sql/list.js';
import { findParamTargets } from '../sql/targets.js';
import type { SnapshotEntry } from '../types/snapshot.js';
import { type AttributeRule, rule as attributeRule, type RawAttribute, type RawElement, readAttributes } from './elements.js';

/**
 * Lists that scale (docs/contract.md §11): `Page`, `Filter` and `Sort` in a GET Request make its one read step a
 * list, whose conditions, order and limit the runtime adds per request (runtime/lists/). Each element's
 * attributes are a table, as Backend's are; what needs the database (the key's last column unique, no column
 * that may be NULL, the types of the cursor's values) is checked once the step is typed (`checkListFacts`).
 */
export const LIST_ELEMENTS = new Set(['Page', 'Filter', 'Sort']);

/** The parameters a paged list reads besides its filters and sort. */
export const PAGE_PARAMS = ['limit', 'after'] as const;
/** Most rows a page may hold: what one request may make the server hold in memory. */
const MOST_ROWS = 10_000;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** The clauses after WHERE, by their first word. */
const CLAUSES: Record<string, string> = { group: 'GROUP BY', order: 'ORDER BY', fetch: 'FETCH FIRST', lock: 'LOCK IN SHARE MODE', for: 'FOR UPDATE' };

interface PageDraft {
  key: string;
  size: number;
  max: number | undefined;
}
interface FilterDraft {
  param: string;
  sql: string;
}
interface SortDraft {
  param: string;
  allow: string[];
  default: string | undefined;
}

const whole = (value: string) => (/^[1-9][0-9]{0,4}$/.test(value) && Number(value) <= MOST_ROWS ? Number(value) : undefined);
const name = (value: string) => (NAME.test(value) ? value : undefined);
const text = (value: string) => (value.trim() !== '' ? value : undefined);

const PAGE_ATTRIBUTES: readonly AttributeRule<PageDraft>[] = [
  attributeRule<PageDraft, 'key'>('key', 'key', text, () => 'key names the columns of the page order, such as "o.created_on desc, o.order_id"'),
  attributeRule<PageDraft, 'size'>('size', 'size', whole, (value) => `size is a number of rows from 1 to ${MOST_ROWS}, not "${value}"`),
  attributeRule<PageDraft, 'max'>('max', 'max', whole, (value) => `max is a number of rows from 1 to ${MOST_ROWS}, not "${value}"`),
];
const FILTER_ATTRIBUTES: readonly AttributeRule<FilterDraft>[] = [
  attributeRule<FilterDraft, 'param'>('param', 'param', name, (value) => `param is a parameter name (letters, digits, _), not "${value}"`),
  attributeRule<FilterDraft, 'sql'>('sql', 'sql', text, () => 'sql is the condition the filter adds, such as "o.status = $status"'),
];
const SORT_ATTRIBUTES: readonly AttributeRule<SortDraft>[] = [
  attributeRule<SortDraft, 'param'>('param', 'param', name, (value) => `param is a parameter name (letters, digits, _), not "${value}"`),
  attributeRule<SortDraft, 'allow'>(
    'allow',
    'allow',
    (value) => {
      const names = value.split(/\s+/).filter((word) => word !== '');
      return names.length > 0 && names.every((word) => NAME.test(word)) ? names : undefined;
    },
    (value) => `allow is the result columns a caller may sort by, separated by spaces, not "${value}"`,
  ),
  attributeRule<SortDraft, 'default'>(
    'default',
    'default',
    (value) => (/^-?[A-Za-z_][A-Za-z0-9_]*$/.test(value) ? value : undefined),
    (value) => `default is an allowed name, - before it for descending, not "${value}"`,
  ),
];

/** What a Request's list elements add to its operation: the step they make a list, and the parameters they read. */
export interface ListParams {
  /** In order: the filters', the sort's, then limit and after. */
  params: string[];
  types: Record<string, ParamType>;
}

export interface ListRequest {
  method: HttpMethod;
  steps: Step[];
  /** Parameters the steps use (every one required). */
  params: readonly string[];
  /** Each Sql step's text as written, `$` placeholders and all. */
  texts: ReadonlyMap<SqlStep, string>;
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

function readFilter(element: RawElement, request: ListRequest, step: SqlStep, diagnostics: Diagnostics): ListFilter | undefined {
  const draft: FilterDraft = { param: '', sql: '' };
  const given = readAttributes(element, FILTER_ATTRIBUTES, draft, diagnostics);
  if (!given.has('param')) diagnostics.error(element.at, 'Filter needs the attribute param (the parameter whose presence adds it)');
  if (!given.has('sql')) diagnostics.error(element.at, 'Filter needs the attribute sql (the condition it adds)');
  const sqlAt = given.get('sql');
  if (!draft.param || !draft.sql || !sqlAt) return undefined;
  const before = diagnostics.count;
  const scanned = scanSql(draft.sql);
  for (const problem of scanned.problems) {
    diagnostics.error(
      sqlAt.at,
      `Filter ${draft.param}: ${problem.message.startsWith('one statement') ? 'one condition, not statements (no ;)' : problem.message}`,
    );
  }
  const tokens = tokenize(draft.sql, []);
  // A comment would swallow what the list puts after the condition.
  if (tokens.some((token) => token.type === 'comment')) diagnostics.error(sqlAt.at, `Filter ${draft.param}: no comments in a condition`);
  let depth = 0;
  for (const token of tokens) {
    if (token.text === '(') depth++;
    if (token.text === ')' && --depth < 0) break;
  }
  if (depth !== 0) diagnostics.error(sqlAt.at, `Filter ${draft.param}: unbalanced parentheses`);
  const others = scanned.placeholders.filter((placeholder) => placeholder.kind !== 'param' || placeholder.name !== draft.param);
  if (scanned.placeholders.length === 0 || others.length > 0) {
    diagnostics.error(sqlAt.at, `Filter ${draft.param}: its condition uses its own parameter, $${draft.param}, and no other: "${draft.sql}"`);
  }
  if (diagnostics.count > before) return undefined;
  // The column the parameter meets, read where the filter will stand: after the step's own tables.
  const target = findParamTargets(
    tokenize(`${request.texts.get(step) ?? ''}\nand ${draft.sql}`, []).filter((token) => token.type !== 'space' && token.type !== 'comment'),
  )[draft.param];
  if (target) step.paramTargets[draft.param] ??= target;
  return { param: draft.param, sql: topLevelOr(scanned.sql) ? `(${scanned.sql})` : scanned.sql, uses: scanned.placeholders.length, at: sqlAt.at };
}

function readSort(element: RawElement, shape: ListText, step: SqlStep, diagnostics: Diagnostics): ListSort | null {
  const draft: SortDraft = { param: 'sort', allow: [], default: undefined };
  const given = readAttributes(element, SORT_ATTRIBUTES, draft, diagnostics);
  const allowAt = given.get('allow');
  if (!allowAt) {
    diagnostics.error(element.at, 'Sort needs the attribute allow (the result columns a caller may sort by)');
    return null;
  }
  const allow: ListSort['allow'] = [];
  for (const allowed of draft.allow) {
    if (allow.some((other) => other.name === allowed)) diagnostics.error(allowAt.at, `allow names ${allowed} twice`);
    const term = termOf({ name: allowed, desc: false }, shape, step, allowAt, diagnostics);
    if (term) allow.push({ name: allowed, term });
  }
  let fallback: ListSort['default'] = null;
  const defaultAt = given.get('default');
  if (draft.default !== undefined && defaultAt) {
    const desc = draft.default.startsWith('-');
    const named = desc ? draft.default.slice(1) : draft.default;
    if (!draft.allow.includes(named))
      diagnostics.error(defaultAt.at, `default is one of the allowed names (${draft.allow.join(', ')}), - before it for descending, not "${draft.default}"`);
    else fallback = { name: named, desc };
  }
  return { param: draft.param, allow, default: fallback, at: element.at };
}

function readPage(element: RawElement, shape: ListText, step: SqlStep, diagnostics: Diagnostics): List['page'] {
  const draft: PageDraft = { key: '', size: 20, max: undefined };
  const given = readAttributes(element, PAGE_ATTRIBUTES, draft, diagnostics);
  const keyAt = given.get('key');
  if (!keyAt) {
    diagnostics.error(element.at, 'Page needs the attribute key (the columns of the page order, ending in a unique one)');
    return null;
  }
  const max = draft.max ?? Math.max(draft.size, 100);
  if (draft.size > max) diagnostics.error(given.get('size')!.at, `size (${draft.size}) is at most max (${max})`);
  const key: ListTerm[] = [];
  for (const part of draft.key.split(',')) {
    const words = /^\s*(\S+?)(?:\s+(asc|desc))?\s*$/i.exec(part);
    if (!words) {
      diagnostics.error(keyAt.at, `key is columns of the step's result, each with asc or desc, separated by commas, not "${draft.key}"`);
      return null;
    }
    const term = termOf({ name: words[1]!, desc: words[2]?.toLowerCase() === 'desc' }, shape, step, keyAt, diagnostics);
    if (!term) continue;
    if (key.some((other) => other.column === term.column)) diagnostics.error(keyAt.at, `key names ${words[1]} twice`);
    key.push(term);
  }
  return { size: draft.size, max, key, at: keyAt.at };
}

/**
 * An order term: a column of the step's result, named as the statement reads it (`o.created_on`, `created_on`) or
 * by its result name, that reads a column of a table the statement names (its type, NULLs and unique indexes are
 * asked of the database).
 */
function termOf(wanted: { name: string; desc: boolean }, shape: ListText, step: SqlStep, at: RawAttribute, diagnostics: Diagnostics): ListTerm | undefined {
  const parts = wanted.name.split('.').map((part) => part.replace(/^`(.*)`$/, '$1'));
  const [qualifier, column] = parts.length === 2 ? [parts[0]!, parts[1]!] : [null, parts[0]!];
  const items = shape.items ?? [];
  const same = (a: string | null, b: string | null) => a !== null && b !== null && a.toLowerCase() === b.toLowerCase();
  const item =
    items.find(
      (candidate) => candidate.reference && same(candidate.reference.column, column) && (qualifier === null || same(candidate.reference.qualifier, qualifier)),
    ) ?? (qualifier === null ? items.find((candidate) => candidate.reference && candidate.name === column) : undefined);
  const where = `step "${step.id}"`;
  if (!item?.reference || item.name === null || parts.length > 2) {
    const plain = items.filter((candidate) => candidate.reference && candidate.name !== null).map((candidate) => candidate.name);
    diagnostics.error(
      at.at,
      `${at.name} names ${wanted.name}, which is not a column ${where} returns as it reads it from a table (it returns ${plain.join(', ') || 'no plain column'}): add it to the select list`,
    );
    return undefined;
  }
  const reference = item.reference;
  const table = reference.qualifier === null ? shape.onlyTable : (shape.tables.get(reference.qualifier.toLowerCase()) ?? null);
  if (table === null) {
    diagnostics.error(at.at, `${at.name} names ${wanted.name}: qualify it in the select list (t.${reference.column}), since ${where} reads several tables`);
    return undefined;
  }
  return {
    sql: reference.qualifier === null ? reference.column : `${reference.qualifier}.${reference.column}`,
    column: item.name,
    table,
    tableColumn: reference.column,
    desc: wanted.desc,
    type: null,
  };
}

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

/** Widest a cursor's JSON value may be: a time (milliseconds), a number, or per character of text (`\u0000` escapes). */
const WIDTH = { Date: 16, number: 24, perCharacter: 6 } as const;

/**
 * The checks of a list that need the database, from the step's snapshot entry (the database at generation,
 * or the committed snapshot): a page's key ends in a unique column, and no column of its order may be NULL
 * (refused, rather than ordered: a keyset cannot say where NULLs go, and a NULL in a unique column repeats);
 * each value a cursor carries is a number, a text or a time (a time kept to the millisecond at most, which is
 * what JavaScript's Date holds). Types the filters' parameters as optional, and bounds `after`.
 */
export function checkListFacts(step: SqlStep, operation: Operation, entry: SnapshotEntry | undefined, diagnostics: Diagnostics): void {
  const list = step.list!;
  for (const filter of list.filters)
    operation.paramTypes[filter.param] = { ...(operation.paramTypes[filter.param] ?? { kind: 'any', nullable: true }), optional: true };
  if (!list.page) return;
  const where = `step "${step.id}"`;
  if (entry?.keys === undefined) {
    diagnostics.error(list.page.at, `the page key of ${where} is not checked against the database yet: set DATABASE_URL and run npm run generate`);
    return;
  }
  const terms = [
    ...list.page.key.map((term) => ({ term, at: list.page!.at })),
    ...(list.sort?.allow.map((allowed) => ({ term: allowed.term, at: list.sort!.at })) ?? []),
  ];
  const widths = new Map<ListTerm, number>();
  for (const { term, at } of terms) {
    const facts = entry.keys[`${term.table}.${term.tableColumn}`];
    const typed = step.typed?.find((column) => column.name === term.column);
    if (!facts || !typed) {
      diagnostics.error(at, `${where}: the database has no column ${term.table}.${term.tableColumn} for ${term.sql}`);
      continue;
    }
    if (facts.nullable || typed.nullable) {
      diagnostics.error(
        at,
        `${term.sql} may be NULL (${term.table}.${term.tableColumn}${facts.nullable ? '' : ', through an outer join'}): a page orders by NOT NULL columns only, since a cursor cannot say where NULLs go; make the column NOT NULL, or order by another`,
      );
    }
    if (typed.tsType !== 'number' && typed.tsType !== 'string' && typed.tsType !== 'Date') {
      diagnostics.error(at, `${term.sql} is ${facts.sqlType}, which a page cannot order by: order by a number, text or time column`);
      continue;
    }
    if (typed.tsType === 'Date' && (facts.precision ?? 0) > 3) {
      diagnostics.error(
        at,
        `${term.sql} is ${facts.sqlType}, which keeps microseconds that JavaScript's Date, and so a cursor, cannot hold: order by a time of milliseconds at most (datetime(3)), or another column`,
      );
    }
    term.type = typed.tsType;
    widths.set(term, typed.tsType === 'string' ? WIDTH.perCharacter * (facts.maxLength ?? 255) + 3 : WIDTH[typed.tsType] + 1);
  }
  const last = list.page.key.at(-1);
  const lastFacts = last && entry.keys[`${last.table}.${last.tableColumn}`];
  if (last && lastFacts && !lastFacts.unique) {
    diagnostics.error(
      list.page.at,
      `the page key of ${where} must end in a unique column, and ${last.table}.${last.tableColumn} is not (no primary key or unique index on it alone): end the key with one, such as the table's primary key`,
    );
  }
  // `after` is bounded by the widest cursor this list can make: the sort's name and widest column, then the key.
  const sortWidth = Math.max(0, ...(list.sort?.allow.map((allowed) => (widths.get(allowed.term) ?? 0) + allowed.name.length + 4) ?? []));
  const payload = 4 + sortWidth + list.page.key.reduce((sum, term) => sum + (widths.get(term) ?? 0), 0);
  operation.paramTypes.after = { ...operation.paramTypes.after!, maxLength: Math.ceil((payload * 4) / 3) + 44 };
}
