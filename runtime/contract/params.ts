/** A request parameter as the client sent it (query string, form or JSON body). */
export type ParamValue = string | number | boolean | null;

/**
 * What a request parameter must be, from the column it meets (the generator
 * reads it from the database). `any` (no known type, or a column type with no
 * check of its own) takes any scalar and is bound as text: a JSON number or
 * boolean as its text (`0`, `true`), as a form would send it, never as a number.
 */
export interface ParamSpec {
  kind: 'integer' | 'bigint' | 'decimal' | 'number' | 'string' | 'date' | 'datetime' | 'time' | 'enum' | 'any';
  nullable: boolean;
  unsigned?: boolean;
  /** Most characters (code points), from the column. */
  maxLength?: number;
  /** Most bytes of UTF-8: credentials (user name 255, password 1,024) are bounded in bytes. */
  maxBytes?: number;
  values?: readonly string[];
  /** Read from the body only, never the query string (a token request's fields, credentials among them). */
  from?: 'body';
  /**
   * A secret (docs/internals/contract.md §12): named like one (`pw`, `pin`, `otp`, `cvv`), meeting a password column, or
   * reaching a password argument. The generator decides it; the audit keeps only the values its `AuditRule` names.
   */
  secret?: true;
  /** May be left out (a list's filters, sort, limit and cursor, docs/internals/contract.md §11): then absent from the parameters, never a 400. */
  optional?: true;
  /** The least and most an `integer` may be (a list's `limit`). */
  min?: number;
  max?: number;
}
export type ParamSpecs = Readonly<Record<string, ParamSpec>>;
