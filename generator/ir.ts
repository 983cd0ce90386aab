/**
 * The typed value between analyse.ts and emit.ts (sqlc's Query{SQL, Columns,
 * Params}). emit.ts sees only this, never XML. Paths are project-relative POSIX.
 */

import type { Access, AuthQuery, BackendSettings, HttpMethod, ParamSpec, RateLimit } from '../runtime/contract.js';
import type { SourceLocation } from './diagnostics.js';

export type { Access, AuthQuery, HttpMethod };

/** What fills one `?` of a statement, or one `Arg` of a plug-in call. */
export type Bind =
  | { kind: 'param'; name: string }
  | { kind: 'uid' }
  | { kind: 'tenant' }
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

/** What a request parameter must be (the runtime's spec), and the column it was read from, for documentation. */
export interface ParamType extends ParamSpec {
  /** `table.column`, for messages and documentation. */
  column?: string;
  /** Why it is a secret (`secret`), for messages and the module's comment (generator/secrets.ts). */
  secretBecause?: string;
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
  /** Its filters, sort and page, when the step is a list (docs/internals/contract.md §11). */
  list?: List;
  /** `tenant="all"`: a step of a tenant backend meant to cross tenants, not proven, listed in access.lock (§14). */
  tenant?: 'all';
}

/**
 * A read step that is a list (docs/internals/contract.md §11): the pieces the runtime puts together per request
 * (runtime/lists/), each checked here and against the database.
 */
export interface List {
  /** The statement up to where the list's conditions go; its own WHERE condition in parentheses when it holds an OR. */
  head: string;
  /** Whether `head` has a WHERE clause. */
  where: boolean;
  /** What follows the conditions (GROUP BY, ORDER BY, LIMIT: a list without Page or Sort only); usually empty. */
  tail: string;
  filters: ListFilter[];
  sort: ListSort | null;
  page: ListPage | null;
  /**
   * Columns the step's own WHERE compares with `=` to a value: an index that serves the list's order starts with
   * them; `bind` the step's bind they meet, if one.
   */
  equalities: { table: string; column: string; bind: number | null }[];
}

export interface ListFilter {
  param: string;
  /** The condition, `?` for the parameter, in parentheses when it holds an OR. */
  sql: string;
  /** How many times it uses the parameter. */
  uses: number;
  at: SourceLocation;
}

/** A term of a list's order: a column of the step's result that reads a table's column. */
export interface ListTerm {
  /** As the statement names it: `o.created_on`. */
  sql: string;
  /** The result column that holds its value in a row. */
  column: string;
  /** The table column it reads; the table null when the text does not say. */
  table: string | null;
  tableColumn: string;
  desc: boolean;
  /** What a row holds for it, once typed from the database. */
  type: 'number' | 'string' | 'Date' | null;
}

export interface ListSort {
  param: string;
  allow: { name: string; term: ListTerm }[];
  default: { name: string; desc: boolean } | null;
  at: SourceLocation;
}

export interface ListPage {
  size: number;
  max: number;
  key: ListTerm[];
  at: SourceLocation;
}

export interface PluginRef {
  classname: string;
  /** Path of the TypeScript module: relative to the runtime folder for a built-in (imported through the runtime's entry), else to the project. */
  module: string;
  exportName: string;
  builtin: boolean;
  /** Arguments with a byte limit (credentials): a request parameter passed to one takes the limit. */
  argBytes?: Readonly<Record<string, number>>;
  /** Arguments that are secrets (a password): a request parameter passed to one is never written to the audit. */
  secretArgs?: readonly string[];
  /** It checks credentials (a token generator): a request calling it reads every parameter from the body only. */
  login?: true;
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
  /** `tenant="all"`: a plug-in of a tenant backend's request, which no proof reads, listed in access.lock (§14). */
  tenant?: 'all';
}

export type Step = SqlStep | ExecuteStep;

/**
 * `<Emit event step key>` (docs/internals/contract.md §12): the step's result becomes an event in the outbox, in the
 * request's transaction, right after the steps before it.
 */
export interface Emit {
  event: string;
  /** A Sql step before it: a read's rows, or a write's affectedRows and insertId. */
  step: string;
  /** What orders the event's deliveries among those of the same row, and tells the receiver which; null for none. */
  key: Bind | null;
  /**
   * The write steps before it: it is sent only when each of them found at least one row (`when="changed"`, the
   * default: a write that changed nothing, such as an update of a row the caller does not own, sends nothing);
   * null for `when="always"`.
   */
  changes: string[] | null;
  /** How many steps run before it. */
  after: number;
  at: SourceLocation;
}

export interface Operation {
  method: HttpMethod;
  status: number;
  description: string | null;
  /** Request parameters in order of first use. */
  params: string[];
  /** Their types, from the columns they meet (filled with the row types); `any` when not known. */
  paramTypes: Record<string, ParamType>;
  /** Who may call it: the Request's own `auth`, else the resource's (docs/internals/contract.md §8). */
  access: Access;
  /** The Request's own `rate_limit`, else the resource's, else none (docs/internals/contract.md §10). */
  rateLimit: RateLimit | null;
  /** `owner="shared"`: a protected read of rows that belong to users, meant for every caller it admits (analyse/ownership.ts). */
  owner?: 'shared';
  usesUid: boolean;
  /**
   * A protected method of a tenant backend (docs/internals/contract.md §14): its handler asks `scope.caller`, which
   * refuses a caller without a tenant; `binds` when a step binds `$tenant`. Absent on every other method.
   */
  tenant?: { binds: boolean };
  /** A write or more than one Sql step: one connection, one transaction (docs/internals/contract.md §3). */
  transaction: boolean;
  /** It calls a plug-in that checks credentials (a token request): every parameter comes from the body only. */
  paramsFromBody?: true;
  steps: Step[];
  /** Events it emits (docs/internals/contract.md §12); absent when none. */
  emits?: Emit[];
  /** Every call is written to xmlrest_api_audit (`audit="true"` on it or its resource); absent when not. */
  audit?: true;
  /** `audit_params`, its own or its resource's: the only parameters whose values its audit rows may keep (secrets never). */
  auditParams?: { names: string[]; at: SourceLocation };
  /**
   * A GET's `<Validator>` (docs/internals/contract.md §15): its statement with its binds (as a Sql step's), and how
   * its rows make the ETag (`version` when it selects exactly the resource's version column).
   */
  validator?: { sql: string; binds: Bind[]; kind: 'rows' | 'version'; at: SourceLocation };
  /** A public GET's `max_age` in seconds (`Cache-Control: public, max-age=<n>`). */
  maxAge?: number;
  /**
   * A versioned write (`version="<column>"`, `if_match="required"`): the column, whether If-Match is required, and
   * the id of its one update or delete step, whose statements the generator writes in the conditional forms.
   */
  version?: {
    column: string;
    required: boolean;
    step: string;
    at: SourceLocation;
    /**
     * The step's statement in the three forms the handler runs (generator/sql/versioned.ts), `?` for each bind:
     * the step's binds go to `unconditional`, the same and the expected version last to `conditional`, and
     * `probeBinds` (the where's) to `probe`.
     */
    statements: { unconditional: string; conditional: string; probe: string };
    probeBinds: Bind[];
  };
  /** `idempotency="required"` on a POST: 400 without an Idempotency-Key. */
  idempotency?: 'required';
}

export interface Resource {
  backend: string;
  name: string;
  version: string;
  /** The resource's `auth` attribute as written, or null. */
  auth: string | null;
  source: string;
  description: string | null;
  operations: Operation[];
}

/** A backend: its settings as the runtime will serve them, where they came from, and its resources. */
export interface Backend extends BackendSettings {
  /** backend.xml, or null when the folder has none. */
  source: string | null;
  resources: Resource[];
}

export interface Project {
  backends: Backend[];
}
