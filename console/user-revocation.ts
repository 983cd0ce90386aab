import { endUserSessions } from '../runtime/auth/sessions/session-tables.js';
import { revokeUserTokens } from '../runtime/auth/tokens/revocations.js';
import type { BackendModule, Queryable } from '../runtime/index.js';
import { KeyStore } from './keys.js';

/** What ended with a user's revocation on one backend. */
export interface UserRevoked {
  sessions: number;
  keys: number;
}

/**
 * Every credential of a user on one backend, by the backend's own id: every token issued until now (servers refuse
 * them within their revocation poll), every session ended (a refresh token issues nothing more), every API key
 * revoked. What `xmlrest token revoke --user` does (scripts/cli/token-revoke.ts), and what a change of the user's
 * tenant does on each backend that reads it (user-tenant.ts): a token or key carries the tenant it was issued
 * with, so none issued before the change may go on being served.
 */
export async function revokeUserOn(db: Queryable, backend: BackendModule, userId: string): Promise<UserRevoked> {
  await revokeUserTokens(db, backend.name, userId);
  const sessions =
    backend.refreshLifetime === null ? 0 : (await endUserSessions(db, backend.name, userId, 'revoked', backend.tokenLifetime + backend.clockSkew)).count;
  const keys = await new KeyStore(db).revokeUser(userId, backend.name);
  return { sessions, keys };
}
