import type { AuthSchemeName } from '../contract.js';

/**
 * The default user tables (docs/seed.md §2.2), named in this one place: the
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
 * The default auth query of a scheme (docs/seed.md §5.3), with `$user` for the
 * user name. The seed's queries compare `$pass` in SQL; these return the
 * stored password instead, for the server to verify its argon2id hash (or a
 * plain-text row from before, in constant time).
 */
export function defaultAuthQuery(scheme: AuthSchemeName, tables: UserTables = DEFAULT_USER_TABLES): string {
  const { users, roles, userId, userName, password, roleName } = tables;
  const columns = scheme === 'Basic' ? `r.${userId}, r.${roleName}` : `cast(r.${userId} as char) as sub, r.${roleName} as aud`;
  return [`select ${columns}, u.${password}`, `from ${roles} r inner join ${users} u on r.${userId} = u.${userId}`, `where u.${userName} = $user`].join('\n');
}
