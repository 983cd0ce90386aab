import type { AuthSchemeName } from '../../contract.js';

/**
 * The default user tables (docs/internals/seed.md §2.2), named in this one place: the
 * generator's default auth queries, the server's rehash of plain-text
 * passwords, the console's user store, and `xmlrest db init` (tables and
 * triggers) all build their SQL from it. A backend whose AuthQuery reads
 * other tables keeps its users there, and none of those touch them.
 */
export interface UserTables {
  users: string;
  roles: string;
  userId: string;
  userName: string;
  password: string;
  roleName: string;
}

export const DEFAULT_USER_TABLES: UserTables = {
  users: 'usr',
  roles: 'usr_role',
  userId: 'user_id',
  userName: 'user_name',
  password: 'pass_word',
  roleName: 'role_name',
};

/**
 * The default auth query of a scheme (docs/internals/seed.md §5.3), with `$user` for the
 * user name. The seed's queries compare `$pass` in SQL; these return the
 * stored password instead, for the server to verify its argon2id hash (or a
 * plain-text row from before, in constant time).
 */
export function defaultAuthQuery(scheme: AuthSchemeName, tables: UserTables = DEFAULT_USER_TABLES): string {
  const { users, roles, userId, userName, password, roleName } = tables;
  const columns = scheme === 'Basic' ? `r.${userId}, r.${roleName}` : `cast(r.${userId} as char) as sub, r.${roleName} as aud`;
  return [`select ${columns}, u.${password}`, `from ${roles} r inner join ${users} u on r.${userId} = u.${userId}`, `where u.${userName} = $user`].join('\n');
}

/** The column of the grant's end (Unix seconds, null for good) that `withGrantEnds` adds to a default auth query's rows. */
export const GRANT_ENDS_COLUMN_NAME = 'grant_ends';

/**
 * The default auth query as the server runs it where grants may end (runtime/auth/users/grants.ts): the same rows, but
 * none for a grant past its end (the moment it ends, before any server deletes it), and each with its grant's end,
 * so that a token issued from them expires by then with no query more. `?` for the user name.
 */
export function withGrantEnds(scheme: AuthSchemeName, tables: UserTables = DEFAULT_USER_TABLES): string {
  const lines = defaultAuthQuery(scheme, tables).split('\n');
  lines[0] += `, unix_timestamp(r.expires_on) as ${GRANT_ENDS_COLUMN_NAME}`;
  lines[2] = `${lines[2]!.replace('$user', '?')} and (r.expires_on is null or r.expires_on > now())`;
  return lines.join('\n');
}
