// A step's snapshot entry against what the database says now, named change by change: what `generate
// --refresh-types` prints and `xmlrest check` reports, apart from the describing and the keeping.
import type { TenantFacts } from '../analyse/tenancy.js';
import type { ParamType, ResultColumn } from '../ir.js';
import type { SnapshotEntry } from './snapshot.js';

/**
 * One difference between what the snapshot holds for a step and what the database describes now: what
 * `generate --refresh-types` names and `xmlrest check` (scripts/cli/check.ts) reports.
 */
export type TypeDrift =
  | { kind: 'column-added'; column: string; now: string }
  | { kind: 'column-removed'; column: string; was: string }
  | { kind: 'column-type'; column: string; was: string; now: string }
  | {
      kind: 'param-type';
      param: string;
      column: string | undefined;
      was: string;
      now: string;
      wasType: ParamType | undefined;
      nowType: ParamType | undefined;
      /** `was` and `now` are the column's exact types (`int(11)`, `tinyint(4)`): its coarse type stayed the same. */
      exact?: true;
    }
  /** A table the statement names that gained (`now` true) or lost the tenant column (docs/internals/contract.md §14). */
  | { kind: 'tenant-table'; table: string; column: string; now: boolean };

export function typeDrift(before: SnapshotEntry, after: SnapshotEntry): TypeDrift[] {
  const drift: TypeDrift[] = [];
  // Exact types are compared where both sides have them (a snapshot made before them has none) and the coarse type held.
  const exactWas = before.exact?.columns;
  const exactNow = after.exact?.columns;
  for (const column of after.columns) {
    const old = before.columns.find((candidate) => candidate.name === column.name);
    if (!old) drift.push({ kind: 'column-added', column: column.name, now: render(column) });
    else if (render(old) !== render(column)) drift.push({ kind: 'column-type', column: column.name, was: render(old), now: render(column) });
    else if (exactWas?.[column.name] !== undefined && exactNow?.[column.name] !== undefined && exactWas[column.name] !== exactNow[column.name])
      drift.push({ kind: 'column-type', column: column.name, was: exactWas[column.name]!, now: exactNow[column.name]! });
  }
  for (const column of before.columns) {
    if (!after.columns.some((candidate) => candidate.name === column.name)) drift.push({ kind: 'column-removed', column: column.name, was: render(column) });
  }
  const was = before.params ?? {};
  const now = after.params ?? {};
  for (const param of new Set([...Object.keys(was), ...Object.keys(now)])) {
    const old = was[param] ? JSON.stringify(was[param]) : 'untyped';
    const fresh = now[param] ? JSON.stringify(now[param]) : 'untyped';
    if (old !== fresh)
      drift.push({ kind: 'param-type', param, column: (was[param] ?? now[param])?.column, was: old, now: fresh, wasType: was[param], nowType: now[param] });
    else {
      const exactOld = before.exact?.params?.[param];
      const exactFresh = after.exact?.params?.[param];
      if (exactOld !== undefined && exactFresh !== undefined && exactOld !== exactFresh)
        drift.push({
          kind: 'param-type',
          param,
          column: was[param]?.column,
          was: exactOld,
          now: exactFresh,
          wasType: was[param],
          nowType: now[param],
          exact: true,
        });
    }
  }
  drift.push(...tenantDrift(before.tenants, after.tenants));
  return drift;
}

/** The tables a step names that gained or lost the tenant column (docs/internals/contract.md §14), for one column. */
export function tenantDrift(was: TenantFacts | undefined, now: TenantFacts | undefined): TypeDrift[] {
  if (!was || !now || was.column !== now.column) return [];
  const drift: TypeDrift[] = [];
  for (const table of new Set([...Object.keys(was.tables), ...Object.keys(now.tables)])) {
    const gained = table in now.tables;
    if (gained !== table in was.tables) drift.push({ kind: 'tenant-table', table, column: now.column, now: gained });
  }
  return drift;
}

/** A drift in the words `generate --refresh-types` prints after the step's key. */
export function driftText(drift: TypeDrift): string {
  switch (drift.kind) {
    case 'column-added':
      return `new column ${drift.column} ${drift.now}`;
    case 'column-removed':
      return `column ${drift.column} removed`;
    case 'column-type':
      return `column ${drift.column} ${drift.was} -> ${drift.now}`;
    case 'param-type':
      return `parameter ${drift.param} ${drift.was} -> ${drift.now}`;
    case 'tenant-table':
      return drift.now ? `table ${drift.table} gained ${drift.column}: a tenant table now` : `table ${drift.table} lost ${drift.column}: no tenant table now`;
  }
}

function render(column: ResultColumn): string {
  return `${column.sqlType}${column.nullable ? ' null' : ''} (${column.tsType}${column.nullable ? ' | null' : ''})`;
}
