/**
 * The typed value between analyse.ts and emit.ts (sqlc's Query{SQL, Columns,
 * Params}). emit.ts sees only this, never XML. Paths are project-relative POSIX.
 */

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** What fills one `?` of a statement, or one `Arg` of a plug-in call. */
export type Bind =
  | { kind: 'param'; name: string }
  | { kind: 'uid' }
  | { kind: 'ref'; step: string; row: number; column: string; target: 'rows' | 'write' | 'plugin' }
  | { kind: 'literal'; value: string };

export interface SqlStep {
  kind: 'sql';
  id: string;
  output: boolean;
  description: string | null;
  /** The statement with `?` placeholders. */
  sql: string;
  binds: Bind[];
  statement: 'read' | 'write';
  /** Result column names; null when unknown (`select *`). */
  columns: string[] | null;
}

export interface PluginRef {
  classname: string;
  /** Project-relative path of the TypeScript module. */
  module: string;
  exportName: string;
}

export interface ExecuteStep {
  kind: 'execute';
  id: string;
  output: boolean;
  description: string | null;
  plugin: PluginRef;
  args: { name: string; bind: Bind }[];
}

export type Step = SqlStep | ExecuteStep;

export interface Operation {
  method: HttpMethod;
  status: number;
  description: string | null;
  /** Request parameters in order of first use. */
  params: string[];
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
}

export interface Backend {
  name: string;
  /** backend.xml, or null when the folder has none. */
  source: string | null;
  authScheme: 'Basic' | 'Bearer' | null;
  authQuery: AuthQuery | null;
  tokenLifetime: number;
  issuer: string;
  iatUnit: 's' | 'ms';
  consoleRole: string;
  absentCredentialsStatus: 403 | 401;
  resources: Resource[];
}

export interface Project {
  backends: Backend[];
}
