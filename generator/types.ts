import { checkListFacts } from './analyse/list-facts.js';
import { identityText, userIdentity } from './analyse/ownership.js';
import type { Diagnostics } from './diagnostics.js';
import type { Project, ResultColumn, SqlStep } from './ir.js';
import type { StatementDescriber } from './types/columns.js';
import { describedSql, describeStep, ownersOf, rejection, sqlSteps, tableColumns, tenantFactsAsker } from './types/describe.js';
import { driftText, tenantDrift, typeDrift } from './types/drift.js';
import { type SnapshotEntry, sortKeys, type TypeSnapshot } from './types/snapshot.js';

/**
 * The types stage: the database describes each statement (types/describe.ts, what its columns mean in
 * types/columns.ts), the answers are kept in the committed snapshot (types/snapshot.ts), and what changed is named
 * (types/drift.ts). Its parts are re-exported here, the path the rest of the generator imports them from.
 */
export { columnOf, type FieldInfo, paramTypeOf, type StatementDescriber, type TableColumn } from './types/columns.js';
export { describedSql, describeStep, rejection, sqlSteps, stepKey, tableColumns, tenantFactsAsker } from './types/describe.js';
export { driftText, type TypeDrift, typeDrift } from './types/drift.js';
export { type ExactTypes, type KeyFacts, type Owners, type SnapshotEntry, snapshotText, type TypeSnapshot } from './types/snapshot.js';

export interface InferResult {
  snapshot: TypeSnapshot;
  /** Human-readable lines naming what changed against the previous snapshot. */
  changes: string[];
}

/**
 * Asks the database for every step that has no current snapshot entry (or
 * every step, with `refresh`). A statement the server rejects is a
 * generation error at the step, with the server's message.
 */
export async function inferTypes(
  project: Project,
  previous: TypeSnapshot,
  database: StatementDescriber,
  diagnostics: Diagnostics,
  options: { refresh: boolean },
): Promise<InferResult> {
  const snapshot: TypeSnapshot = {};
  const changes: string[] = [];
  const columnsOf = tableColumns(database);
  const askTenants = tenantFactsAsker(database, columnsOf);
  for (const { key, step, resource } of sqlSteps(project)) {
    const old = previous[key];
    const backend = project.backends.find((candidate) => candidate.name === resource.backend)!;
    const identity = userIdentity(backend);
    const tenantColumn = backend.tenant?.column;
    // An entry from before exact types were kept is described again (once), so that check has them to compare.
    if (!options.refresh && old && old.sql === describedSql(step) && old.exact !== undefined) {
      // An entry from before the database told who owns a read's rows, or told it for another user table, learns it now.
      let kept =
        step.statement === 'read' && old.owners?.user !== identityText(identity) ? { ...old, owners: await ownersOf(step.sql, identity, columnsOf) } : old;
      // A tenant backend's step is asked its tenant facts at every run against a database: a table that gained the
      // tenant column since is a tenant table the day generation runs against it, and the step is proven again.
      if (tenantColumn !== undefined) {
        const tenants = await askTenants(step, tenantColumn);
        if (kept.tenants !== undefined && kept.tenants.column === tenantColumn)
          changes.push(...tenantDrift(kept.tenants, tenants).map((drift) => `${key}: ${driftText(drift)}`));
        kept = { ...kept, tenants };
      } else if (kept.tenants !== undefined) {
        const { tenants: _gone, ...rest } = kept;
        kept = rest;
      }
      snapshot[key] = kept;
      continue;
    }
    let entry: SnapshotEntry;
    try {
      entry = await describeStep(step, database, columnsOf, identity, tenantColumn === undefined ? undefined : { column: tenantColumn, ask: askTenants });
    } catch (error) {
      if ((error as { fatal?: boolean }).fatal === true) throw error;
      diagnostics.error(step.at, `step "${step.id}": the database rejects the statement: ${rejection(error).message}`);
      continue;
    }
    snapshot[key] = entry;
    if (!old) changes.push(`${key}: typed ${describeColumns(entry.columns)}`);
    else changes.push(...typeDrift(old, entry).map((drift) => `${key}: ${driftText(drift)}`));
    if (old && JSON.stringify(old.keys ?? null) !== JSON.stringify(entry.keys ?? null))
      changes.push(`${key}: list columns ${JSON.stringify(entry.keys ?? {})}`);
  }
  for (const key of Object.keys(previous)) if (!(key in snapshot) && diagnostics.count === 0) changes.push(`${key}: removed`);
  return { snapshot: sortKeys(snapshot), changes };
}

/**
 * Fills each step's `typed` and each operation's `paramTypes` from the
 * snapshot, then checks step references against the typed columns.
 */
export function applyTypes(project: Project, snapshot: TypeSnapshot, diagnostics: Diagnostics): string[] {
  const untyped: string[] = [];
  for (const { key, step, operation } of sqlSteps(project)) {
    const entry = snapshot[key];
    const current = entry !== undefined && entry.sql === describedSql(step);
    if (current) {
      step.typed = step.statement === 'read' ? entry.columns : null;
      // The first step that says what a parameter is, wins.
      for (const [name, type] of Object.entries(entry.params ?? {})) operation.paramTypes[name] ??= type;
    } else untyped.push(key);
    if (step.list) checkListFacts(step, operation, current ? entry : undefined, diagnostics);
  }
  for (const { operation } of sqlSteps(project)) {
    for (const step of operation.steps) {
      const binds = step.kind === 'sql' ? step.binds : step.args.map((arg) => arg.bind);
      for (const bind of binds) {
        if (bind.kind !== 'ref' || bind.target !== 'rows') continue;
        const target = operation.steps.find((other): other is SqlStep => other.kind === 'sql' && other.id === bind.step);
        if (!target?.typed || target.columns !== null) continue;
        // `select *`: only the database knows the columns.
        if (!target.typed.some((column) => column.name === bind.column)) {
          diagnostics.error(
            bind.at,
            `step "${step.id}" reads unknown column "${bind.column}" of step "${target.id}" (it returns ${target.typed.map((c) => c.name).join(', ')})`,
          );
        }
      }
    }
  }
  return [...new Set(untyped)];
}

function describeColumns(columns: ResultColumn[]): string {
  return columns.length === 0 ? 'a write' : columns.map((column) => `${column.name} ${column.tsType}${column.nullable ? ' | null' : ''}`).join(', ');
}
