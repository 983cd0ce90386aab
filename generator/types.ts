import { checkListFacts, widestStatement } from './analyse/list.js';
import { identityText, ownsRows, type UserIdentity, userIdentity } from './analyse/ownership.js';
import type { Diagnostics } from './diagnostics.js';
import type { Operation, ParamTarget, ParamType, Project, Resource, ResultColumn, SqlStep } from './ir.js';
import { tablesOf } from './sql/tables.js';

/**
 * Result column types from the database. At generation time the generator
 * prepares each statement on a live MariaDB and reads the column metadata the
 * server sends back; the answers are kept in a committed snapshot, so that a
 * machine without a database generates the same code.
 */

/** One entry per Sql step, keyed `<file> <METHOD> <step>`; `sql` tells when an entry is stale. */
export type TypeSnapshot = Record<string, SnapshotEntry>;
export interface SnapshotEntry {
  sql: string;
  columns: ResultColumn[];
  /** Types of the request parameters whose column the text shows. */
  params?: Record<string, ParamType>;
  /** A read's tables whose rows belong to users, as the database describes them (analyse/ownership.ts). */
  owners?: Owners;
  /** A list's order columns (docs/contract.md §11), by `table.column`: what its checks need of the database. */
  keys?: Record<string, KeyFacts>;
}

/**
 * Of a read step: the backend's user id column it was judged against (`usr.user_id`), and each table the step
 * reads whose rows belong to users, with the columns that say so (a foreign key to that id, or its name).
 */
export interface Owners {
  user: string;
  tables: Record<string, string[]>;
}

/** What the database says of a column a list orders by. */
export interface KeyFacts {
  sqlType: string;
  nullable: boolean;
  /** A primary key or unique index on this column alone. */
  unique: boolean;
  /** Characters, for a text column. */
  maxLength?: number;
  /** Digits of a fraction of a second, for a time column. */
  precision?: number;
}

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
      }
    }
  }
}

/** The column metadata mysql2 hands over for a prepared statement. */
export interface FieldInfo {
  name: string;
  columnType?: number;
  type?: number;
  flags: number;
  characterSet: number;
}

const NOT_NULL = 1;
const UNSIGNED = 32;
const BINARY_CHARSET = 63;

/** MySQL protocol column types: name and what mysql2 returns (with bigNumberStrings, dateStrings off). */
const COLUMN_TYPES: Record<number, [string, string]> = {
  0: ['decimal', 'string'],
  1: ['tinyint', 'number'],
  2: ['smallint', 'number'],
  3: ['int', 'number'],
  4: ['float', 'number'],
  5: ['double', 'number'],
  6: ['null', 'unknown'],
  7: ['timestamp', 'Date'],
  8: ['bigint', 'string'],
  9: ['mediumint', 'number'],
  10: ['date', 'Date'],
  11: ['time', 'string'],
  12: ['datetime', 'Date'],
  13: ['year', 'number'],
  14: ['date', 'Date'],
  16: ['bit', 'Buffer'],
  245: ['json', 'unknown'],
  246: ['decimal', 'string'],
  247: ['enum', 'string'],
  248: ['set', 'string'],
  255: ['geometry', 'unknown'],
};
/** String types: text, or bytes (a Buffer) when the column's character set is `binary`. */
const STRING_TYPES: Record<number, [string, string]> = {
  15: ['varchar', 'varbinary'],
  249: ['tinytext', 'tinyblob'],
  250: ['mediumtext', 'mediumblob'],
  251: ['longtext', 'longblob'],
  252: ['text', 'blob'],
  253: ['varchar', 'varbinary'],
  254: ['char', 'binary'],
};

export function columnOf(field: FieldInfo): ResultColumn {
  const code = field.columnType ?? field.type ?? 6;
  const nullable = (field.flags & NOT_NULL) === 0 && code !== 6;
  const strings = STRING_TYPES[code];
  if (strings) {
    const binary = field.characterSet === BINARY_CHARSET;
    return { name: field.name, sqlType: binary ? strings[1] : strings[0], tsType: binary ? 'Buffer' : 'string', nullable };
  }
  const [sqlType, tsType] = COLUMN_TYPES[code] ?? ['unknown', 'unknown'];
  const unsigned = (field.flags & UNSIGNED) !== 0 && sqlType.endsWith('int') ? ' unsigned' : '';
  return { name: field.name, sqlType: sqlType + unsigned, tsType, nullable };
}

/** A row of information_schema.columns. */
export interface TableColumn {
  name: string;
  dataType: string;
  columnType: string;
  nullable: boolean;
  maxLength: number | null;
  /** `table.column` it references, when a foreign key says so. */
  references?: string;
  /** Digits of a fraction of a second (datetime, timestamp, time); null for other types. */
  precision?: number | null;
}

/** What the generator needs of a database connection. */
export interface StatementDescriber {
  /** Prepares `sql` and returns its result columns; throws the server's error for a rejected statement. */
  describe(sql: string): Promise<FieldInfo[]>;
  /** The columns of a table in the connection's database; empty when there is no such table. */
  columnsOf(table: string): Promise<TableColumn[]>;
  /** The columns of each primary key and unique index of a table, each in its index's order. */
  uniqueKeysOf(table: string): Promise<string[][]>;
}

const INTEGER_TYPES = new Set(['tinyint', 'smallint', 'mediumint', 'int', 'integer']);

/** The parameter type a table column asks for. */
export function paramTypeOf(table: string, column: TableColumn): ParamType {
  const type = column.dataType.toLowerCase();
  const base = { nullable: column.nullable, column: `${table}.${column.name}` };
  const unsigned = /unsigned/i.test(column.columnType) ? { unsigned: true } : {};
  if (INTEGER_TYPES.has(type)) return { kind: 'integer', ...base, ...unsigned };
  if (type === 'bigint') return { kind: 'bigint', ...base, ...unsigned };
  if (type === 'decimal') return { kind: 'decimal', ...base };
  if (type === 'float' || type === 'double') return { kind: 'number', ...base };
  if (type === 'date') return { kind: 'date', ...base };
  if (type === 'datetime' || type === 'timestamp') return { kind: 'datetime', ...base };
  if (type === 'time') return { kind: 'time', ...base };
  if (type === 'enum') {
    const values = [...column.columnType.matchAll(/'((?:[^']|'')*)'/g)].map((match) => match[1]!.replaceAll("''", "'"));
    return { kind: 'enum', ...base, values };
  }
  if (/char|text/.test(type)) return { kind: 'string', ...base, ...(column.maxLength !== null ? { maxLength: column.maxLength } : {}) };
  return { kind: 'any', ...base };
}

async function paramTypes(targets: Record<string, ParamTarget>, columnsOf: (table: string) => Promise<TableColumn[]>): Promise<Record<string, ParamType>> {
  const types: Record<string, ParamType> = {};
  for (const [name, target] of Object.entries(targets)) {
    if (target.kind === 'limit') {
      types[name] = { kind: 'integer', nullable: false, unsigned: true };
      continue;
    }
    if (target.table === null) continue;
    const column = (await columnsOf(target.table)).find((candidate) => candidate.name.toLowerCase() === target.column.toLowerCase());
    if (column) types[name] = paramTypeOf(target.table, column);
  }
  return types;
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
): Promise<SnapshotEntry> {
  const sql = describedSql(step);
  const fields = await database.describe(sql);
  const columns = step.statement === 'read' ? fields.map(columnOf) : [];
  const params = await paramTypes(step.paramTargets, columnsOf);
  const keys = step.list ? await keyFacts(step, database, columnsOf) : undefined;
  return {
    sql,
    columns,
    ...(Object.keys(params).length > 0 ? { params } : {}),
    ...(step.statement === 'read' && identity ? { owners: await ownersOf(step.sql, identity, columnsOf) } : {}),
    ...(keys && Object.keys(keys).length > 0 ? { keys } : {}),
  };
}

/** The server's words, and its error number, when the database rejects a statement. */
export function rejection(error: unknown): { message: string; errno: number | undefined } {
  const detail = error as { sqlMessage?: string; message?: string; errno?: number };
  return { message: detail.sqlMessage ?? detail.message ?? String(error), errno: detail.errno };
}

/**
 * One difference between what the snapshot holds for a step and what the database describes now: what
 * `generate --refresh-types` names and `xmlrest check` (scripts/check.ts) reports.
 */
export type TypeDrift =
  | { kind: 'column-added'; column: string; now: string }
  | { kind: 'column-removed'; column: string; was: string }
  | { kind: 'column-type'; column: string; was: string; now: string }
  | { kind: 'param-type'; param: string; column: string | undefined; was: string; now: string; wasType: ParamType | undefined; nowType: ParamType | undefined };

export function typeDrift(before: SnapshotEntry, after: SnapshotEntry): TypeDrift[] {
  const drift: TypeDrift[] = [];
  for (const column of after.columns) {
    const old = before.columns.find((candidate) => candidate.name === column.name);
    if (!old) drift.push({ kind: 'column-added', column: column.name, now: render(column) });
    else if (render(old) !== render(column)) drift.push({ kind: 'column-type', column: column.name, was: render(old), now: render(column) });
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
  }
}

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
  for (const { key, step, resource } of sqlSteps(project)) {
    const old = previous[key];
    const identity = userIdentity(project.backends.find((backend) => backend.name === resource.backend)!);
    if (!options.refresh && old && old.sql === describedSql(step)) {
      // An entry from before the database told who owns a read's rows, or told it for another user table, learns it now.
      snapshot[key] =
        step.statement === 'read' && old.owners?.user !== identityText(identity) ? { ...old, owners: await ownersOf(step.sql, identity, columnsOf) } : old;
      continue;
    }
    let entry: SnapshotEntry;
    try {
      entry = await describeStep(step, database, columnsOf, identity);
    } catch (error) {
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

/** Who owns the rows of each table a read reads, as the database describes the tables (analyse/ownership.ts). */
async function ownersOf(sql: string, identity: UserIdentity, columnsOf: (table: string) => Promise<TableColumn[]>): Promise<Owners> {
  const owned: Record<string, string[]> = {};
  for (const { table } of tablesOf(sql)) {
    const columns = (await columnsOf(table)).filter((column) => ownsRows(table, column, identity)).map((column) => column.name);
    if (columns.length > 0) owned[table] = columns.sort();
  }
  return { user: identityText(identity), tables: owned };
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

/** JSON with one column per line, so that a changed type is a one-line diff. */
export function snapshotText(snapshot: TypeSnapshot): string {
  const entries = Object.entries(sortKeys(snapshot)).map(([key, entry]) => {
    const columns = entry.columns.map((column) => `      ${JSON.stringify(column)}`).join(',\n');
    const list = entry.columns.length === 0 ? '[]' : `[\n${columns}\n    ]`;
    const params = entry.params
      ? `,\n    "params": {\n${Object.entries(entry.params)
          .map(([name, type]) => `      ${JSON.stringify(name)}: ${JSON.stringify(type)}`)
          .join(',\n')}\n    }`
      : '';
    const keys = entry.keys
      ? `,\n    "keys": {\n${Object.entries(entry.keys)
          .map(([name, facts]) => `      ${JSON.stringify(name)}: ${JSON.stringify(facts)}`)
          .join(',\n')}\n    }`
      : '';
    const owners = entry.owners ? `,\n    "owners": ${JSON.stringify(entry.owners)}` : '';
    return `  ${JSON.stringify(key)}: {\n    "sql": ${JSON.stringify(entry.sql)},\n    "columns": ${list}${params}${owners}${keys}\n  }`;
  });
  return entries.length === 0 ? '{}\n' : `{\n${entries.join(',\n')}\n}\n`;
}

function render(column: ResultColumn): string {
  return `${column.sqlType}${column.nullable ? ' null' : ''} (${column.tsType}${column.nullable ? ' | null' : ''})`;
}

function describeColumns(columns: ResultColumn[]): string {
  return columns.length === 0 ? 'a write' : columns.map((column) => `${column.name} ${column.tsType}${column.nullable ? ' | null' : ''}`).join(', ');
}

function sortKeys(snapshot: TypeSnapshot): TypeSnapshot {
  return Object.fromEntries(Object.entries(snapshot).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
