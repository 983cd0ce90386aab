// What the database's column metadata means: a prepared statement's fields and a table's columns as types, apart
// from the stage that asks (types/describe.ts) since the analysers read these shapes too.
import type { ParamType, ResultColumn } from '../ir.js';

/** The column metadata mysql2 hands over for a prepared statement. */
export interface FieldInfo {
  name: string;
  columnType?: number;
  type?: number;
  flags: number;
  characterSet: number;
  /** Its display length (bytes of text), and digits after the point. */
  columnLength?: number;
  decimals?: number;
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
  /** A text column's collation (`utf8mb4_general_ci`); null for other types. */
  collation?: string | null;
}

/** What the generator needs of a database connection. */
export interface StatementDescriber {
  /** Prepares `sql` and returns its result columns; throws the server's error for a rejected statement. */
  describe(sql: string): Promise<FieldInfo[]>;
  /** The columns of a table in the connection's database; empty when there is no such table. */
  columnsOf(table: string): Promise<TableColumn[]>;
  /** The columns of each primary key and unique index of a table, each in its index's order. */
  uniqueKeysOf(table: string): Promise<string[][]>;
  /** Which of these tables are views, in lower case (the tenant proof's facts); absent: none known. */
  viewsAmong?(tables: readonly string[]): Promise<string[]>;
  /**
   * Every table of the connection's database that has a column of this name, whichever the letter case of either,
   * as the database spells the table (the tenant proof's facts); absent: each table's columns are asked instead.
   */
  tablesWithColumn?(column: string): Promise<string[]>;
  /** The stored functions and procedures of the connection's database, in lower case (the tenant proof's facts). */
  routines?(): Promise<string[]>;
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

/** A result column's exact type, as the prepared statement describes it: `decimal length 12 decimals 2`, `varchar length 400 collation 45`. */
export function exactColumn(field: FieldInfo): string {
  const { sqlType } = columnOf(field);
  const decimals = field.decimals !== undefined && field.decimals !== 0 && field.decimals < 31 ? ` decimals ${field.decimals}` : '';
  const collation = field.characterSet !== BINARY_CHARSET ? ` collation ${field.characterSet}` : '';
  return `${sqlType} length ${field.columnLength ?? '?'}${decimals}${collation}`;
}
