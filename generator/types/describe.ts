// One step described by the database now (its columns, its parameters' columns, who owns its rows, its list's
// order columns): what `generate` and `xmlrest check` both ask, apart from the stage that keeps the answers.
import { widestStatement } from '../analyse/list-spec.js';
import { identityText, ownsRows, type UserIdentity } from '../analyse/ownership.js';
import { STEP_SOURCES, VALIDATOR_STEPS } from '../analyse/step-sources.js';
import { namedTables, type TenantFacts } from '../analyse/tenancy.js';
import type { Operation, ParamTarget, ParamType, Project, Resource, SqlStep } from '../ir.js';
import { tablesOf } from '../sql/tables.js';
import { tokenize, unquote } from '../sql/tokens.js';
import { columnOf, exactColumn, paramTypeOf, type StatementDescriber, type TableColumn } from './columns.js';
import type { ExactTypes, KeyFacts, Owners, SnapshotEntry } from './snapshot.js';

/** The statement the database describes for a step: a list's widest (every filter, after a cursor, with a limit). */
export function describedSql(step: SqlStep): string {
  return step.list ? widestStatement(step.list) : step.sql;
}

export function stepKey(resource: Resource, operation: Operation, step: SqlStep): string {
  return `${resource.source} ${operation.method} ${step.id}`;
}

export function* sqlSteps(project: Project): Generator<{ key: string; resource: Resource; operation: Operation; step: SqlStep }> {
  for (const backend of project.backends) {
    for (const resource of backend.resources) {
      for (const operation of resource.operations) {
        for (const step of operation.steps) {
          if (step.kind === 'sql') yield { key: stepKey(resource, operation, step), resource, operation, step };
        }
        // A GET's Validator is described as a step is, after the steps: their types of a parameter come first.
        const validator = operation.validator && VALIDATOR_STEPS.get(operation.validator);
        if (validator !== undefined) yield { key: stepKey(resource, operation, validator), resource, operation, step: validator };
      }
    }
  }
}

async function paramTypes(
  targets: Record<string, ParamTarget>,
  columnsOf: (table: string) => Promise<TableColumn[]>,
): Promise<{ types: Record<string, ParamType>; exact: Record<string, string> }> {
  const types: Record<string, ParamType> = {};
  const exact: Record<string, string> = {};
  for (const [name, target] of Object.entries(targets)) {
    if (target.kind === 'limit') {
      types[name] = { kind: 'integer', nullable: false, unsigned: true };
      continue;
    }
    if (target.table === null) continue;
    const column = (await columnsOf(target.table)).find((candidate) => candidate.name.toLowerCase() === target.column.toLowerCase());
    if (!column) continue;
    types[name] = paramTypeOf(target.table, column);
    exact[name] = `${column.columnType}${column.collation ? ` ${column.collation}` : ''}`;
  }
  return { types, exact };
}

/** Each table's columns, asked of the database once for the life of the returned function (one run, one check). */
export function tableColumns(database: StatementDescriber): (table: string) => Promise<TableColumn[]> {
  const tables = new Map<string, Promise<TableColumn[]>>();
  return (table) => {
    let columns = tables.get(table);
    if (!columns) tables.set(table, (columns = database.columnsOf(table)));
    return columns;
  };
}

/**
 * What the database says of one step now: its result columns (a read's) and the types of the parameters whose
 * column the text shows, and, given the backend's user identity, which of a read's tables hold rows per user
 * (the unowned-read lint's facts). Throws the server's error for a statement it rejects.
 */
export async function describeStep(
  step: SqlStep,
  database: StatementDescriber,
  columnsOf: (table: string) => Promise<TableColumn[]>,
  identity?: UserIdentity,
  tenant?: { column: string; ask: (step: SqlStep, column: string) => Promise<TenantFacts> },
): Promise<SnapshotEntry> {
  const sql = describedSql(step);
  const fields = await database.describe(sql);
  const columns = step.statement === 'read' ? fields.map(columnOf) : [];
  const { types: params, exact: exactParams } = await paramTypes(step.paramTargets, columnsOf);
  const keys = step.list ? await keyFacts(step, database, columnsOf) : undefined;
  const exact: ExactTypes = {
    ...(step.statement === 'read' && fields.length > 0 ? { columns: Object.fromEntries(fields.map((field) => [field.name, exactColumn(field)])) } : {}),
    ...(Object.keys(exactParams).length > 0 ? { params: exactParams } : {}),
  };
  return {
    sql,
    columns,
    ...(Object.keys(params).length > 0 ? { params } : {}),
    ...(step.statement === 'read' && identity ? { owners: await ownersOf(step.sql, identity, columnsOf) } : {}),
    ...(tenant !== undefined ? { tenants: await tenant.ask(step, tenant.column) } : {}),
    ...(keys && Object.keys(keys).length > 0 ? { keys } : {}),
    exact,
  };
}

/** The server's words, and its error number, when the database rejects a statement. */
export function rejection(error: unknown): { message: string; errno: number | undefined } {
  const detail = error as { sqlMessage?: string; message?: string; errno?: number };
  return { message: detail.sqlMessage ?? detail.message ?? String(error), errno: detail.errno };
}

/** Who owns the rows of each table a read reads, as the database describes the tables (analyse/ownership.ts). */
export async function ownersOf(sql: string, identity: UserIdentity, columnsOf: (table: string) => Promise<TableColumn[]>): Promise<Owners> {
  const owned: Record<string, string[]> = {};
  for (const { table } of tablesOf(sql)) {
    const columns = (await columnsOf(table)).filter((column) => ownsRows(table, column, identity)).map((column) => column.name);
    if (columns.length > 0) owned[table] = columns.sort();
  }
  return { user: identityText(identity), tables: owned };
}

/**
 * The tenant proof's facts of a tenant backend's step (docs/internals/contract.md §14): of the tables its text names
 * (and its list's widest statement, every filter added), which have the tenant column, whether every unique key of
 * each holds the column (else an upsert could reach another tenant's row), and which are views. Each table is asked
 * of the database once for the life of the returned function (one run, one check).
 */
export function tenantFactsAsker(
  database: StatementDescriber,
  columnsOf: (table: string) => Promise<TableColumn[]>,
): (step: SqlStep, column: string) => Promise<TenantFacts> {
  const uniques = new Map<string, Promise<string[][]>>();
  const views = new Map<string, Promise<boolean>>();
  const withColumn = new Map<string, Promise<string[]>>();
  const collations = new Map<string, Promise<string | undefined>>();
  let routines: Promise<string[]> | undefined;
  const once = <T>(cache: Map<string, Promise<T>>, table: string, ask: () => Promise<T>) => {
    let answer = cache.get(table);
    if (!answer) cache.set(table, (answer = ask()));
    return answer;
  };
  return async (step, column) => {
    const texts = [STEP_SOURCES.get(step)?.text ?? step.sql, ...(step.list ? [widestStatement(step.list)] : [])];
    const named = new Set<string>();
    const called = new Set<string>();
    for (const text of texts) {
      const tables = namedTables(text);
      // A statement the proof cannot read is refused by it whatever the facts: none are needed.
      if (Array.isArray(tables)) for (const table of tables) named.add(table.toLowerCase());
      for (const name of calledNames(text)) called.add(name);
    }
    routines ??= database.routines ? database.routines() : Promise.resolve([]);
    const calledRoutines = (await routines).filter((name) => called.has(name));
    const tables: Record<string, { uniqueOk: boolean; collation?: string }> = {};
    const viewNames: string[] = [];
    const wanted = column.toLowerCase();
    // Names compared without regard to case: a table the text names in another case than the database spells it
    // (or two tables whose names differ only in case) is a tenant table when any spelling of it has the column.
    const spellings = database.tablesWithColumn ? await once(withColumn, wanted, () => database.tablesWithColumn!(column)) : undefined;
    for (const table of [...named].sort()) {
      if (database.viewsAmong && (await once(views, table, async () => (await database.viewsAmong!([table])).length > 0))) viewNames.push(table);
      const names = spellings
        ? spellings.filter((name) => name.toLowerCase() === table)
        : (await columnsOf(table)).some((candidate) => candidate.name.toLowerCase() === wanted)
          ? [table]
          : [];
      if (names.length === 0) continue;
      let uniqueOk = true;
      let collation: string | undefined;
      for (const name of names) {
        const keys = await once(uniques, name, () => database.uniqueKeysOf(name));
        uniqueOk &&= keys.every((key) => key.some((part) => part.toLowerCase() === wanted));
        // A text tenant column's collation: whether 'acme' and 'ACME' are one tenant to the database (tenant-proof.ts).
        collation ??= await once(collations, name, async () => {
          const found = (await columnsOf(name)).find((candidate) => candidate.name.toLowerCase() === wanted);
          return found?.collation ?? undefined;
        });
      }
      tables[table] = collation === undefined ? { uniqueOk } : { uniqueOk, collation };
    }
    return { column, tables, views: viewNames, routines: calledRoutines };
  };
}

/** The names a statement calls (`name(`), in lower case: which of them are the database's stored routines is asked. */
function calledNames(text: string): string[] {
  const tokens = tokenize(text, []).filter((token) => token.type !== 'space' && token.type !== 'comment');
  return tokens.flatMap((token, k) =>
    (token.type === 'word' || token.type === 'quoted') && tokens[k + 1]?.text === '(' ? [unquote(token).toLowerCase()] : [],
  );
}

/** One step's tenant facts, asked of the database without a cache shared with other steps. */
export function tenantsOf(
  step: SqlStep,
  column: string,
  database: StatementDescriber,
  columnsOf: (table: string) => Promise<TableColumn[]>,
): Promise<TenantFacts> {
  return tenantFactsAsker(database, columnsOf)(step, column);
}

/** What the database says of each column a list orders by (its page key, its sort's columns). */
async function keyFacts(step: SqlStep, database: StatementDescriber, columnsOf: (table: string) => Promise<TableColumn[]>): Promise<Record<string, KeyFacts>> {
  const list = step.list!;
  const facts: Record<string, KeyFacts> = {};
  const uniques = new Map<string, Promise<string[][]>>();
  for (const term of [...(list.page?.key ?? []), ...(list.sort?.allow.map((allowed) => allowed.term) ?? [])]) {
    if (term.table === null) continue;
    const column = (await columnsOf(term.table)).find((candidate) => candidate.name.toLowerCase() === term.tableColumn.toLowerCase());
    if (!column) continue;
    let keys = uniques.get(term.table);
    if (!keys) uniques.set(term.table, (keys = database.uniqueKeysOf(term.table)));
    const unique = (await keys).some((index) => index.length === 1 && index[0]!.toLowerCase() === column.name.toLowerCase());
    facts[`${term.table}.${column.name}`] = {
      sqlType: column.columnType,
      nullable: column.nullable,
      unique,
      ...(column.maxLength !== null ? { maxLength: column.maxLength } : {}),
      ...(column.precision !== null && column.precision !== undefined ? { precision: column.precision } : {}),
    };
  }
  return Object.fromEntries(Object.entries(facts).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
