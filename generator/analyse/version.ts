import type { Diagnostics, SourceLocation } from '../diagnostics.js';
import type { Bind, HttpMethod, Operation, SqlStep, Step } from '../ir.js';
import { scanSql } from '../sql/index.js';
import { EXPECTED, versionedTexts } from '../sql/versioned.js';
import type { BackendWithPlugins } from './backend-plugins.js';
import type { RawAttribute } from './elements.js';
import type { StepSource } from './step-sources.js';

/**
 * A versioned write (docs/internals/contract.md §15): `version="<column>"` and `if_match="required|optional"` on a
 * Request. Its one update or delete step is written in the three forms of generator/sql/versioned.ts.
 *
 * The column is checked to be a plain SQL name of the step's table only by the statements themselves: the types
 * stage describes the step as written, not its forms, so a column the table lacks (or one not an integer) is told by
 * the database when the route first runs, not at generate.
 */

/** A version column: a plain name, so that the generated forms need no quoting of it. */
const COLUMN = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const METHODS: readonly HttpMethod[] = ['POST', 'PUT', 'PATCH', 'DELETE'];

export interface VersionContext {
  method: HttpMethod | undefined;
  steps: readonly Step[];
  /** Each Sql step's text as written, and where its offsets are. */
  sources: ReadonlyMap<SqlStep, StepSource>;
  backend: BackendWithPlugins;
  at: SourceLocation;
}

export function analyseVersion(
  version: RawAttribute | undefined,
  ifMatch: RawAttribute | undefined,
  context: VersionContext,
  diagnostics: Diagnostics,
): Operation['version'] | undefined {
  if (version === undefined) {
    if (ifMatch !== undefined) diagnostics.error(ifMatch.at, 'if_match needs version="<column>" on the same Request');
    return undefined;
  }
  let required = false;
  if (ifMatch !== undefined) {
    if (ifMatch.value === 'required' || ifMatch.value === 'optional') required = ifMatch.value === 'required';
    else diagnostics.error(ifMatch.at, `if_match is required or optional, not "${ifMatch.value}"`);
  }
  const column = version.value;
  if (!COLUMN.test(column)) {
    diagnostics.error(version.at, `version names an integer column of the written table (a plain name: letters, digits, _), not "${column}"`);
    return undefined;
  }
  if (context.method !== undefined && !METHODS.includes(context.method)) {
    diagnostics.error(version.at, `version is for a write (${METHODS.join(', ')}), not ${context.method}`);
    return undefined;
  }
  const tenant = context.backend.tenant?.column;
  if (tenant !== undefined && tenant.toLowerCase() === column.toLowerCase()) {
    diagnostics.error(version.at, `version names the tenant column ${tenant}: give the table a version column of its own`);
    return undefined;
  }
  const writes = context.steps.filter((step): step is SqlStep => step.kind === 'sql' && step.statement === 'write' && /^\s*(update|delete)\b/i.test(step.sql));
  if (writes.length !== 1) {
    diagnostics.error(version.at, `a versioned Request has exactly one update or delete Sql step, not ${writes.length}`);
    return undefined;
  }
  const step = writes[0]!;
  // A deleted row has no version to answer: its ETag would name a version that never existed (runtime/routes.ts).
  if (/^\s*delete\b/i.test(step.sql) && context.method !== undefined && context.method !== 'DELETE') {
    diagnostics.error(step.at, `step "${step.id}": a versioned delete is a DELETE Request, not ${context.method}`);
    return undefined;
  }
  const source = context.sources.get(step);
  if (source === undefined) return undefined;
  const texts = versionedTexts(source.text, column);
  if ('message' in texts) {
    diagnostics.error(source.locate(texts.offset), `step "${step.id}": ${texts.message}`);
    return undefined;
  }
  // The binds stay those the step's own scan made (analyse/request.ts), in order: only a step whose every
  // placeholder became a bind is rewritten (any other has an error already).
  const scanned = scanSql(source.text);
  if (scanned.placeholders.length !== step.binds.length) return undefined;
  const probeBinds: Bind[] = step.binds.slice(step.binds.length - texts.whereBinds);
  const conditional = scanSql(texts.conditional);
  const expected = conditional.placeholders.at(-1);
  // The expected version is the conditional's last `?` (the where is the statement's last clause: versioned.ts).
  if (expected?.kind !== 'param' || expected.name !== EXPECTED) throw new Error(`versioned.ts: the expected version is not the last bind of step "${step.id}"`);
  return {
    column,
    required,
    step: step.id,
    at: version.at,
    statements: { unconditional: scanSql(texts.unconditional).sql, conditional: conditional.sql, probe: scanSql(texts.probe).sql },
    probeBinds,
  };
}
