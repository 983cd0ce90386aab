import { DEFAULT_USER_TABLES } from '../runtime/auth/users/user-tables.js';
import type { TenantSettings } from '../runtime/contract.js';
import type { BackendModule, Queryable } from '../runtime/index.js';
import { canonicalTenant } from '../runtime/tenants/canonical.js';
import { revokeUserOn } from './user-revocation.js';

const { users: USERS, userId: ID } = DEFAULT_USER_TABLES;

/** A backend as far as its users' tenant goes: a generated module's, or the generator's IR's. */
interface TenantHolder {
  defaultTables: boolean;
  tenant?: TenantSettings | undefined;
}

/** An unquoted identifier: the only column name a statement of the console names in its text. */
const PLAIN_NAME = /^[A-Za-z_][A-Za-z0-9_$]*$/;

/**
 * The column of `usr` that holds the backend's users' tenant (`user_column` of `<Tenant>`), which the console and
 * `xmlrest user tenant` set (`TenantSettings.userColumn`); undefined when the backend has no tenant, checks its own
 * tables, or reads its users' tenant with a `<TenantQuery>` (its tables are its own to change).
 */
export function userTenantColumn(backend: TenantHolder): string | undefined {
  const tenant = backend.tenant;
  if (tenant === undefined || !backend.defaultTables) return undefined;
  const column = tenant.userColumn;
  return column !== undefined && PLAIN_NAME.test(column) ? column : undefined;
}

/**
 * Why a text is not a tenant of the type (docs/internals/contract.md §14): an integer in its canonical text within
 * unsigned 64 bits, or a text of 1 to 255 characters; undefined when it is one.
 */
export function tenantProblem(type: TenantSettings['type'], text: string): string | undefined {
  // The runtime's own rule (runtime/tenants/canonical.ts): what may be set is exactly what a caller may be served as.
  if (canonicalTenant(type, text) === text) return undefined;
  if (type === 'integer') return `a tenant here is a whole number from 0 to 18446744073709551615, written without sign or leading zeros: "${text}"`;
  if (text.endsWith(' ')) return 'a tenant here does not end in a space (the database would take it for the same tenant without it)';
  return `a tenant here is a text of 1 to 255 characters (${[...text].length} given)`;
}

/** The backends that read a user's tenant from this column of `usr`: a change of it is theirs to revoke. */
export function backendsReading<B extends TenantHolder>(column: string, backends: readonly B[]): B[] {
  return backends.filter((backend) => userTenantColumn(backend) === column);
}

/**
 * Sets a user's tenant (null: none, and a tenant backend refuses the user, 403 `no_tenant`), then revokes the
 * user's tokens, sessions and API keys on every backend that reads that column, exactly as a user's revocation
 * does (user-revocation.ts): a token carries its tenant in `ten`, a key's lookup is cached with its user's, so
 * none issued before the change may stay valid. False when there is no such user.
 */
export async function setUserTenant(
  db: Queryable,
  column: string,
  readers: readonly BackendModule[],
  userId: number,
  tenant: string | null,
): Promise<{ found: boolean; keys: number; sessions: number }> {
  if (!PLAIN_NAME.test(column)) throw new Error(`not a column name: ${column}`);
  // found_rows would say "matched"; a user whose tenant is set as it was still has every credential revoked.
  const [row] = await db.select<{ n: number | string }>(`select count(*) as n from ${USERS} where ${ID} = ?`, [userId]);
  if (Number(row?.n) === 0) return { found: false, keys: 0, sessions: 0 };
  await db.write(`update ${USERS} set ${column} = ? where ${ID} = ?`, [tenant, userId]);
  let keys = 0;
  let sessions = 0;
  for (const backend of readers) {
    const revoked = await revokeUserOn(db, backend, String(userId));
    keys += revoked.keys;
    sessions += revoked.sessions;
  }
  return { found: true, keys, sessions };
}
