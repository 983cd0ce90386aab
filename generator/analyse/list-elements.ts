// The Page, Filter and Sort elements read one by one, each attribute a rule: apart from analyseList (list.ts),
// which puts what they say together into the step's list.
import type { Diagnostics } from '../diagnostics.js';
import type { HttpMethod, List, ListFilter, ListSort, ListTerm, SqlStep, Step } from '../ir.js';
import { scanSql, tokenize } from '../sql/index.js';
import { type ListText, topLevelOr } from '../sql/list.js';
import { findParamTargets } from '../sql/targets.js';
import { type AttributeRule, rule as attributeRule, type RawAttribute, type RawElement, readAttributes } from './elements.js';

/** Most rows a page may hold: what one request may make the server hold in memory. */
const MOST_ROWS = 10_000;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

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
/** The names this table reads, which the schema must give the element too (test/unit/reference.test.ts). */
export const PAGE_ATTRIBUTE_NAMES: readonly string[] = PAGE_ATTRIBUTES.map((attribute) => attribute.name);
const FILTER_ATTRIBUTES: readonly AttributeRule<FilterDraft>[] = [
  attributeRule<FilterDraft, 'param'>('param', 'param', name, (value) => `param is a parameter name (letters, digits, _), not "${value}"`),
  attributeRule<FilterDraft, 'sql'>('sql', 'sql', text, () => 'sql is the condition the filter adds, such as "o.status = $status"'),
];
/** The names this table reads, which the schema must give the element too (test/unit/reference.test.ts). */
export const FILTER_ATTRIBUTE_NAMES: readonly string[] = FILTER_ATTRIBUTES.map((attribute) => attribute.name);
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
/** The names this table reads, which the schema must give the element too (test/unit/reference.test.ts). */
export const SORT_ATTRIBUTE_NAMES: readonly string[] = SORT_ATTRIBUTES.map((attribute) => attribute.name);

export interface ListRequest {
  method: HttpMethod;
  steps: Step[];
  /** Parameters the steps use (every one required). */
  params: readonly string[];
  /** Each Sql step's text as written, `$` placeholders and all. */
  texts: ReadonlyMap<SqlStep, string>;
}

export function readFilter(element: RawElement, request: ListRequest, step: SqlStep, diagnostics: Diagnostics): ListFilter | undefined {
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

export function readSort(element: RawElement, shape: ListText, step: SqlStep, diagnostics: Diagnostics): ListSort | null {
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

export function readPage(element: RawElement, shape: ListText, step: SqlStep, diagnostics: Diagnostics): List['page'] {
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
