import type { Diagnostics, SourceLocation } from '../diagnostics.js';
import type { Bind, Operation, SqlStep } from '../ir.js';
import { constant } from '../names.js';
import type { Placeholder } from '../sql/index.js';
import { AttributeReader, type RawAttribute, type RawElement, type SourceFile, scanCached } from './elements.js';
import { STEP_SOURCES, VALIDATOR_STEPS } from './step-sources.js';

/**
 * A GET's `<Validator>` and `max_age` (docs/internals/contract.md §15). The validator's statement is analysed as a
 * Sql step's is, and kept as one beside the IR (`VALIDATOR_STEPS`): the types stage describes it (its parameters
 * take their types from the columns they meet, as a step's do), and a tenant backend's proof proves it, so that it
 * is no way around either.
 */

/** The name a validator goes by where a step's id stands (snapshot keys, messages): no step id can be it. */
export const VALIDATOR_ID = '<Validator>';

/** What the validator's placeholders become: the request's `bindOf`, which joins its parameters to the operation's. */
type BindOf = (placeholder: Placeholder, at: SourceLocation, where: string) => Bind | undefined;

export interface ValidatorContext {
  method: string | undefined;
  /** The backend is a tenant backend: its statement is proven (analyse/tenant-proof.ts). */
  tenant: boolean;
  file: SourceFile;
  options: { scans?: Parameters<typeof scanCached>[1] };
}

/** Reads the Request's Validator elements (at most one, on a GET) into the IR's `validator`, of kind `rows` for now. */
export function analyseValidator(
  elements: readonly RawElement[],
  context: ValidatorContext,
  bindOf: BindOf,
  diagnostics: Diagnostics,
): Operation['validator'] | undefined {
  const [element, second] = elements;
  if (element === undefined) return undefined;
  if (second !== undefined) diagnostics.error(second.at, 'only one Validator per Request');
  if (context.method !== undefined && context.method !== 'GET') {
    diagnostics.error(element.at, `a Validator tags a GET's answer, not a ${context.method}'s: remove it`);
    return undefined;
  }
  new AttributeReader(element, diagnostics).rejectOthers();
  if (element.children.length > 0) diagnostics.error(element.children[0]!.at, `Validator holds only the statement, not ${element.children[0]!.name}`);
  const where = 'the Validator';
  const scanned = scanCached(element.text, context.options.scans);
  for (const problem of scanned.problems) diagnostics.error(element.locate(problem.offset), `${where}: ${problem.message}`);
  const first = /^\s*(\w+)/.exec(element.text)?.[1]?.toLowerCase();
  if (first !== 'select') {
    diagnostics.error(element.at, `the Validator is one SELECT (a cheap read whose result changes when the answer does), not ${first ?? 'empty'}`);
    return undefined;
  }
  const binds: Bind[] = [];
  for (const [index, placeholder] of scanned.placeholders.entries()) {
    const at = element.locate(scanned.placeholderOffsets[index]!);
    if (placeholder.kind === 'ref') {
      diagnostics.error(at, `${where} runs before every step: it cannot read step "${placeholder.step}"`);
      continue;
    }
    const bind = bindOf(placeholder, at, where);
    if (bind) binds.push(bind);
  }
  const validator = { sql: scanned.sql, binds, kind: 'rows' as const, at: element.at };
  const step: SqlStep = {
    kind: 'sql',
    id: VALIDATOR_ID,
    output: false,
    description: null,
    sql: scanned.sql,
    binds,
    statement: 'read',
    columns: scanned.columns,
    typed: null,
    paramTargets: scanned.paramTargets,
    at: element.at,
  };
  VALIDATOR_STEPS.set(validator, step);
  if (context.tenant) STEP_SOURCES.set(step, { text: element.text, locate: (offset) => element.locate(offset) });
  return validator;
}

/**
 * The validator's kind once the resource's Requests are known: `version` when it selects exactly the column a
 * versioned write of the resource compares (`version="<column>"`), so that a GET's tag is what If-Match compares;
 * selecting anything else beside such a write is an error.
 */
export function settleValidatorKind(operations: readonly Operation[], versionColumns: readonly RawAttribute[], diagnostics: Diagnostics): void {
  for (const operation of operations) {
    const validator = operation.validator;
    // A GET beside a versioned write that answers a digest of its bytes gives tags If-Match never matches: the write
    // then runs only under `*` (the review of issue 44). A lint, an error with --strict: the GET may be meant for lists.
    const column = versionColumns[0];
    if (validator === undefined && operation.method === 'GET' && column !== undefined)
      diagnostics.warn(
        column.at,
        `this write's If-Match compares the version column ${column.value}, but the resource's GET answers digests of its bytes as ETags, which never match it: give the GET a <Validator> selecting ${column.value} alone`,
      );
    if (validator === undefined) continue;
    // Its constant is VALIDATOR_SQL (emit/module-names.ts): a step whose id makes the same name would not compile.
    for (const step of operations.flatMap((other) => other.steps))
      if (constant(step.id) === 'VALIDATOR') diagnostics.error(step.at, `step id "${step.id}" is the name of the Validator's constant: rename the step`);
    if (column === undefined) continue;
    const columns = VALIDATOR_STEPS.get(validator)?.columns;
    if (columns?.length === 1 && columns[0]!.toLowerCase() === column.value.toLowerCase()) operation.validator = { ...validator, kind: 'version' };
    else
      diagnostics.error(validator.at, `the Validator must select only the version column ${column.value}, so that the GET's tags are what If-Match compares`);
    const settled = operation.validator;
    if (settled !== validator) VALIDATOR_STEPS.set(settled!, VALIDATOR_STEPS.get(validator)!);
  }
}

/** `max_age="<seconds>"` on a GET Request: a whole number of seconds, only where the method is public. */
export function readMaxAge(value: RawAttribute | undefined, method: string | undefined, isPublic: boolean, diagnostics: Diagnostics): number | undefined {
  if (value === undefined) return undefined;
  if (method !== undefined && method !== 'GET') {
    diagnostics.error(value.at, `max_age says how long a GET's answer may be kept, not a ${method}'s: remove it`);
    return undefined;
  }
  if (!/^(0|[1-9][0-9]{0,8})$/.test(value.value)) {
    diagnostics.error(value.at, `max_age is a whole number of seconds, not "${value.value}"`);
    return undefined;
  }
  if (!isPublic) {
    diagnostics.error(value.at, 'max_age is for a public GET (auth=""): a shared cache would keep one caller\'s answer for another');
    return undefined;
  }
  return Number(value.value);
}
