import type { BackendModule } from '../contract.js';
import type { Queryable } from '../db/index.js';
import { canonicalTenant } from './canonical.js';

/**
 * A backend's own user's tenant, read with its `userQuery` (`$uid` its one `?`): the first row's `tenant`, canonical
 * for the backend's tenant type; undefined when the user has none (no row, NULL, a value not of the type), or when
 * the backend has no tenant or no user query. Called where a user's roles are read (a password's check, a token's
 * issue, a session's refresh, an API key's lookup), never per request.
 */
export async function readUserTenant(db: Queryable, backend: BackendModule, userId: string): Promise<string | undefined> {
  const settings = backend.tenant;
  if (settings === undefined || settings.userQuery === null) return undefined;
  const [row] = await db.select<{ tenant?: unknown }>(settings.userQuery.sql, [userId]);
  return row === undefined ? undefined : canonicalTenant(settings.type, row.tenant);
}
