/**
 * A tenant backend's tenant (docs/internals/contract.md §14, `<Tenant>` in backend.xml): every row of its tenant
 * tables names an organisation in `column`, and every statement the generator emits for the backend is proven, at
 * generate, to keep to the caller's (`$tenant`). The runtime's part is only to know each caller's tenant, from
 * where the caller's roles come from, and to refuse a caller who has none (403, reason `no_tenant`): never to
 * serve such a caller as "every tenant".
 */
export interface TenantSettings {
  /** The column that names a row's tenant in the backend's tables (`column`). */
  column: string;
  /** What a tenant is, as `uid_type` says what a user id is: `$tenant` binds the canonical text of one. */
  type: 'integer' | 'text';
  /**
   * The backend's own users' tenant, `$uid` bound to its one `?`, one row with a column `tenant` (no row, or NULL:
   * the user has none). Made by the generator from `user_column` of the default tables' `usr`, or a
   * `<TenantQuery>`. Read where a user's roles are read (a password's check, a token's issue, a session's refresh,
   * an API key's lookup) and kept where they are kept, so that a request with a token or a remembered password runs
   * no query for it. Null on a backend whose only callers are outside issuers' users.
   */
  userQuery: { sql: string } | null;
  /** `user_column` of the default tables' `usr`, which the console and `xmlrest user tenant` set; absent with a `<TenantQuery>`. */
  userColumn?: string;
  /**
   * The second line (`triggers="on"`): `xmlrest db init` adds triggers on the tenant tables refusing a write whose
   * row's tenant differs from `@xmlrest_tenant`, which the server sets at the start of each write transaction of
   * the backend's routes. Absent: off.
   */
  triggers?: true;
}

/** Who called a tenant backend's route: `$uid` and `$tenant` (RequestScope.caller). */
export interface Caller {
  uid: string;
  tenant: string;
}
