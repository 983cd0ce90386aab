// The committed snapshot of what the database said of each statement: its shape and its text, apart so that the
// analysers that read it (analyse/list.ts, analyse/ownership.ts) need not import the stage that makes it (types.ts).
import type { TenantFacts } from '../analyse/tenancy.js';
import type { ParamType, ResultColumn } from '../ir.js';

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
  /** A list's order columns (docs/internals/contract.md §11), by `table.column`: what its checks need of the database. */
  keys?: Record<string, KeyFacts>;
  /**
   * Of a tenant backend's step (docs/internals/contract.md §14): its tenant column, which of the tables it names
   * have it (and whether every unique key of each holds it), and which are views: what the tenant proof reads.
   */
  tenants?: TenantFacts;
  /** The exact types under the coarse ones above, which `xmlrest check` compares (absent in a snapshot made before them). */
  exact?: ExactTypes;
}

/**
 * What the coarse types leave out and a response or a write still depends on: each result column's length,
 * decimals and collation as the prepared statement describes it (`decimal length 12 decimals 2`), and each
 * typed parameter's column as information_schema has it (`decimal(10,2)`, `varchar(100) utf8mb4_bin`). A
 * narrowed precision, a column made tinyint, latin1 or case-sensitive changes what the API answers or accepts
 * while every coarse type stays the same.
 */
export interface ExactTypes {
  columns?: Record<string, string>;
  params?: Record<string, string>;
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
    const exact = entry.exact ? `,\n    "exact": ${JSON.stringify(entry.exact)}` : '';
    const tenants = entry.tenants ? `,\n    "tenants": ${JSON.stringify(entry.tenants)}` : '';
    return `  ${JSON.stringify(key)}: {\n    "sql": ${JSON.stringify(entry.sql)},\n    "columns": ${list}${params}${owners}${tenants}${keys}${exact}\n  }`;
  });
  return entries.length === 0 ? '{}\n' : `{\n${entries.join(',\n')}\n}\n`;
}

export function sortKeys(snapshot: TypeSnapshot): TypeSnapshot {
  return Object.fromEntries(Object.entries(snapshot).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
