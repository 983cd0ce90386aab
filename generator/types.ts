import { checkListFacts, widestStatement } from './analyse/list.js';
import type { Diagnostics } from './diagnostics.js';
import type { Operation, ParamTarget, ParamType, Project, Resource, ResultColumn, SqlStep } from './ir.js';

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
  /** A list's order columns (docs/contract.md §11), by `table.column`: what its checks need of the database. */
  keys?: Record<string, KeyFacts>;
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

async function paramTypes(
  targets: Record<string, ParamTarget>,
  database: StatementDescriber,
  tables: Map<string, Promise<TableColumn[]>>,
): Promise<Record<string, ParamType>> {
  const types: Record<string, ParamType> = {};
  for (const [name, target] of Object.entries(targets)) {
    if (target.kind === 'limit') {
      types[name] = { kind: 'integer', nullable: false, unsigned: true };
      continue;
    }
    if (target.table === null) continue;
    let columns = tables.get(target.table);
    if (!columns) tables.set(target.table, (columns = database.columnsOf(target.table)));
    const column = (await columns).find((candidate) => candidate.name.toLowerCase() === target.column.toLowerCase());
    if (column) types[name] = paramTypeOf(target.table, column);
  }
  return types;
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
  const tables = new Map<string, Promise<TableColumn[]>>();
  for (const { key, step } of sqlSteps(project)) {
    const old = previous[key];
    const sql = describedSql(step);
    if (!options.refresh && old && old.sql === sql) {
      snapshot[key] = old;
      continue;
    }
    let fields: FieldInfo[];
    try {
      fields = await database.describe(sql);
    } catch (error) {
      const message = (error as { sqlMessage?: string; message?: string }).sqlMessage ?? (error as Error).message;
      diagnostics.error(step.at, `step "${step.id}": the database rejects the statement: ${message}`);
      continue;
    }
    const columns = step.statement === 'read' ? fields.map(columnOf) : [];
    const params = await paramTypes(step.paramTargets, database, tables);
    const keys = step.list ? await keyFacts(step, database, tables) : undefined;
    snapshot[key] = { sql, columns, ...(Object.keys(params).length > 0 ? { params } : {}), ...(keys && Object.keys(keys).length > 0 ? { keys } : {}) };
    if (!old) changes.push(`${key}: typed ${describeColumns(columns)}`);
    else changes.push(...columnChanges(key, old.columns, columns), ...paramChanges(key, old.params ?? {}, params));
    if (old && JSON.stringify(old.keys ?? null) !== JSON.stringify(keys ?? null)) changes.push(`${key}: list columns ${JSON.stringify(keys ?? {})}`);
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

/** What the database says of each column a list orders by (its page key, its sort's columns). */
async function keyFacts(step: SqlStep, database: StatementDescriber, tables: Map<string, Promise<TableColumn[]>>): Promise<Record<string, KeyFacts>> {
  const list = step.list!;
  const facts: Record<string, KeyFacts> = {};
  const uniques = new Map<string, Promise<string[][]>>();
  for (const term of [...(list.page?.key ?? []), ...(list.sort?.allow.map((allowed) => allowed.term) ?? [])]) {
    if (term.table === null) continue;
    let columns = tables.get(term.table);
    if (!columns) tables.set(term.table, (columns = database.columnsOf(term.table)));
    const column = (await columns).find((candidate) => candidate.name.toLowerCase() === term.tableColumn.toLowerCase());
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
    return `  ${JSON.stringify(key)}: {\n    "sql": ${JSON.stringify(entry.sql)},\n    "columns": ${list}${params}${keys}\n  }`;
  });
  return entries.length === 0 ? '{}\n' : `{\n${entries.join(',\n')}\n}\n`;
}

function columnChanges(key: string, before: ResultColumn[], after: ResultColumn[]): string[] {
  const lines: string[] = [];
  for (const column of after) {
    const old = before.find((candidate) => candidate.name === column.name);
    if (!old) lines.push(`${key}: new column ${column.name} ${render(column)}`);
    else if (render(old) !== render(column)) lines.push(`${key}: column ${column.name} ${render(old)} -> ${render(column)}`);
  }
  for (const column of before) if (!after.some((candidate) => candidate.name === column.name)) lines.push(`${key}: column ${column.name} removed`);
  return lines;
}

function paramChanges(key: string, before: Record<string, ParamType>, after: Record<string, ParamType>): string[] {
  const lines: string[] = [];
  for (const name of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const was = before[name] ? JSON.stringify(before[name]) : 'untyped';
    const now = after[name] ? JSON.stringify(after[name]) : 'untyped';
    if (was !== now) lines.push(`${key}: parameter ${name} ${was} -> ${now}`);
  }
  return lines;
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
