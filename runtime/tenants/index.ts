import { endUserSessions } from '../auth/sessions/session-tables.js';
import { revokeUserTokens } from '../auth/tokens/revocations.js';
import type { BackendModule } from '../contract.js';
import type { Queryable } from '../db/index.js';

/**
 * Tenants at run time (docs/internals/contract.md §14): each caller's tenant, read where its roles are read and kept
 * where they are kept. The scope asks for it (`RequestScope.caller`); nothing here runs per request.
 */
export { canonicalTenant } from './canonical.js';
export { readUserTenant } from './user-tenant.js';

/**
 * A user's tenant changed (the console, the CLI): what carries the old one ends. Every token the user was issued on
 * `backend` up to now is revoked and every session of theirs there ended (as `xmlrest token revoke --user-id`
 * does, without revoking their API keys), and with them every verdict this server or another remembers for their
 * password (a remembered tenant older than the revocation is read again: credentials.ts). Their API keys stay: a
 * key's record, its user's tenant with it, is read again within 5 s on every server (api-key.ts). Call it after
 * the change commits; `tokenWindow` is the backend's token lifetime and clock skew.
 */
export async function tenantChanged(
  db: Queryable,
  backend: Pick<BackendModule, 'name' | 'refreshLifetime' | 'tokenLifetime' | 'clockSkew'>,
  userId: string,
): Promise<void> {
  await revokeUserTokens(db, backend.name, userId);
  if (backend.refreshLifetime !== null) await endUserSessions(db, backend.name, userId, 'tenant_changed', backend.tokenLifetime + backend.clockSkew);
}
