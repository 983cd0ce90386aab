/**
 * The typed value between analyse.ts and emit.ts (sqlc's Query{SQL, Columns,
 * Params}). emit.ts sees only this, never XML. Paths are project-relative POSIX.
 */

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

import type { SourceLocation } from './diagnostics.js';

/** What fills one `?` of a statement, or one `Arg` of a plug-in call. */
export type Bind =
  | { kind: 'param'; name: string }
  | { kind: 'uid' }
  | { kind: 'ref'; step: string; row: number; column: string; target: 'rows' | 'write' | 'plugin'; at: SourceLocation }
  | { kind: 'literal'; value: string };

/** A result column as the database describes it (types.ts). */
export interface ResultColumn {
  name: string;
  /** The database's type, such as `int unsigned` or `varchar`. */
  sqlType: string;
  /** What mysql2 returns for it, as a TypeScript type. */
  tsType: string;
  nullable: boolean;
}

/** The column a request parameter meets in a statement (sql.ts); `table` null when the text does not say. */
export type ParamTarget = { kind: 'column'; table: string | null; column: string } | { kind: 'limit' };

/** What a request parameter must be, from the column it meets (types.ts); `any` when not known. */
export interface ParamType {
  kind: 'integer' | 'bigint' | 'decimal' | 'number' | 'string' | 'date' | 'datetime' | 'time' | 'enum' | 'any';
  nullable: boolean;
  unsigned?: boolean;
  maxLength?: number;
  /** Most bytes of UTF-8 (credentials passed to the token generator). */
  maxBytes?: number;
  values?: string[];
  /** `table.column`, for messages and documentation. */
  column?: string;
}

export interface SqlStep {
  kind: 'sql';
  id: string;
  output: boolean;
  description: string | null;
  /** The statement with `?` placeholders. */
  sql: string;
  binds: Bind[];
  statement: 'read' | 'write';
  /** Result column names from the SQL text; null when unknown (`select *`). */
  columns: string[] | null;
  /** Result columns with their types, from the database or the snapshot; null when not known. */
  typed: ResultColumn[] | null;
  /** Columns the step's request parameters meet, from the SQL text. */
  paramTargets: Record<string, ParamTarget>;
  /** Where the Sql element is. */
  at: SourceLocation;
}

export interface PluginRef {
  classname: string;
  /** Path of the TypeScript module: relative to the runtime folder for a built-in, else to the project. */
  module: string;
  exportName: string;
  builtin: boolean;
  /** Arguments with a byte limit (credentials): a request parameter passed to one takes the limit. */
  argBytes?: Readonly<Record<string, number>>;
}

export interface ExecuteStep {
  kind: 'execute';
  id: string;
  output: boolean;
  description: string | null;
  plugin: PluginRef;
  args: { name: string; bind: Bind; at: SourceLocation }[];
  /** Where the Execute element is. */
  at: SourceLocation;
}

export type Step = SqlStep | ExecuteStep;

export interface Operation {
  method: HttpMethod;
  status: number;
  description: string | null;
  /** Request parameters in order of first use. */
  params: string[];
  /** Their types, from the columns they meet (filled with the row types); `any` when not known. */
  paramTypes: Record<string, ParamType>;
  usesUid: boolean;
  /** A write or more than one Sql step: one connection, one transaction (contract §3). */
  transaction: boolean;
  steps: Step[];
}

export interface Resource {
  backend: string;
  name: string;
  version: string;
  auth: string | null;
  source: string;
  description: string | null;
  operations: Operation[];
}

export interface AuthQuery {
  sql: string;
  binds: ('user' | 'pass')[];
  /** The column holding the stored password when the server verifies it; null when the SQL compares $pass. */
  passwordColumn: string | null;
}

export interface Backend {
  name: string;
  /** backend.xml, or null when the folder has none. */
  source: string | null;
  authScheme: 'Basic' | 'Bearer' | null;
  authQuery: AuthQuery | null;
  /** No custom AuthQuery: credentials live in the default usr and usr_role tables. */
  defaultTables: boolean;
  /** What a user id is; a token's sub must be its canonical text. */
  uidType: 'integer' | 'text';
  tokenLifetime: number;
  clockSkew: number;
  /** Replace a plain-text password with its hash on the next successful login. */
  rehashPlaintext: boolean;
  /** How long a successful password check is remembered; 0 never. */
  credentialCacheSeconds: number;
  issuer: string;
  iatUnit: 's' | 'ms';
  consoleRole: string;
  absentCredentialsStatus: 403 | 401;
  resources: Resource[];
}

export interface Project {
  backends: Backend[];
}
