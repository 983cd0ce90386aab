import type mysql from 'mysql2/promise';
import { revokeUserOn } from '../../console/user-revocation.js';
import { isCanonicalUid } from '../../runtime/auth/scheme.js';
import { revokeToken } from '../../runtime/auth/tokens/revocations.js';
import type { BackendModule } from '../../runtime/index.js';
import { queryableOf, userIdOf } from '../schema.js';

/** What `xmlrest token revoke` was told: one token, or one user by a name of usr or by the backend's own id. */
export interface RevokeOptions {
  backend: string;
  jti?: string;
  until?: string;
  user?: string;
  userId?: string;
}

/** A wrong use of the command: said, exit 2. */
export class RevokeUsage extends Error {}

/**
 * `xmlrest token revoke` (docs/internals/contract.md §10). A user is the backend's own principal: `--user-id` is the id its
 * AuthQuery gives (`sub`), on any backend; `--user NAME` looks the name up in usr, so only on a backend that reads
 * the default user tables (on one with its own AuthQuery, usr's user of that name is another person, or nobody).
 * Every token the user was issued on that backend up to now is revoked, every session of theirs there ended, and
 * every API key of theirs there revoked: "every token a user holds" leaves none of their credentials working.
 */
export async function revokeTokens(connection: mysql.Connection, options: RevokeOptions, backends: () => Promise<BackendModule[]>): Promise<string> {
  const given = [options.jti, options.user, options.userId].filter((option) => option !== undefined).length;
  if (given !== 1) throw new RevokeUsage('token revoke takes one of --jti JTI, --user-id ID (the backend’s own user id) or --user NAME (a user of usr)');
  if (options.until !== undefined && (options.jti === undefined || !/^[0-9]{1,12}$/.test(options.until))) {
    throw new RevokeUsage('--until goes with --jti: a number of Unix seconds');
  }
  const db = queryableOf(connection);
  if (options.jti !== undefined) {
    // Remembered for a year unless told when the token expires: a revoked token must never come back.
    const until = options.until ? Number(options.until) : Math.floor(Date.now() / 1000) + 365 * 24 * 3600;
    await revokeToken(db, options.backend, options.jti, until);
    return `revoked token ${options.jti} on ${options.backend}`;
  }
  const all = await backends();
  const backend = all.find((candidate) => candidate.name === options.backend);
  if (!backend) throw new RevokeUsage(`no backend ${options.backend} (the backends are ${all.map((candidate) => candidate.name).join(', ')})`);
  let id: string;
  let who: string;
  if (options.user !== undefined) {
    if (!backend.defaultTables) {
      throw new RevokeUsage(
        `backend ${backend.name} has its own AuthQuery: its users are not those of usr. Name the user by the id its AuthQuery gives (sub): --user-id ID`,
      );
    }
    const found = await userIdOf(connection, options.user);
    if (found === undefined) throw new RevokeUsage(`no such user: ${options.user}`);
    id = String(found);
    who = options.user;
  } else {
    id = options.userId!;
    // The id exactly as its tokens and sessions carry it: "07" is not user 7, and matches nothing.
    if (!isCanonicalUid(backend.uidType, id))
      throw new RevokeUsage(`--user-id is the canonical text of a ${backend.uidType} user id of ${backend.name}: "${id}"`);
    who = `user id ${id}`;
  }
  const { sessions, keys } = await revokeUserOn(db, backend, id);
  const ended = backend.refreshLifetime === null ? '' : `, ended ${sessions} session(s)`;
  return `revoked every token of ${who} on ${backend.name} issued until now${ended}, and ${keys} API key${keys === 1 ? '' : 's'}`;
}
