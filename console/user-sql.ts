// The pieces of the store's statements over the default user tables (their names, a user's columns, a grant still
// current, a grant's upserts and what they did, who an access admits): apart from the store, which runs them.
import { LOCKED } from '../runtime/auth/passwords/passwords.js';
import { DEFAULT_USER_TABLES } from '../runtime/auth/users/user-tables.js';
import type { Access } from '../runtime/index.js';

/** The default tables' names (docs/internals/seed.md §2.2, runtime/auth/users/user-tables.ts); rows are read under the default column names. */
export const { users: USERS, roles: ROLES, userId: ID, userName: NAME, password: PASSWORD, roleName: ROLE } = DEFAULT_USER_TABLES;
export const USER_COLUMNS = `${ID} as user_id, ${NAME} as user_name, created_on, left(${PASSWORD}, 1) = '${LOCKED}' as disabled`;

/** A user's tenant among its columns, as exact text (a BIGINT's past 2^53 too), on a backend whose tenant is a column of usr (console/user-tenant.ts). */
export const TENANT_COLUMN = (column: string | undefined) => (column === undefined ? '' : `, cast(${column} as char) as tenant`);

/**
 * A grant that has not ended (one past its end is deleted within moments by a server's poll: it is held no more).
 * `ends` false: a role table of an earlier version, without `expires_on` (`xmlrest db init` adds it), whose every
 * grant is for good.
 */
export const CURRENT = (alias: string, ends: boolean) => (ends ? `(${alias}expires_on is null or ${alias}expires_on > now())` : 'true');
export const GRANT_COLUMNS = (ends: boolean) => `${ROLE} as role_name, ${ends ? 'unix_timestamp(expires_on)' : 'null'} as ends`;

/** What a grant did: made the row, changed its end, or found it as asked already. */
export type GrantOutcome = 'granted' | 'changed' | 'unchanged';

/** A grant for good: a row made, or an end taken away (the update trigger revokes nothing for that). */
export const UPSERT_FOR_GOOD = `insert into ${ROLES} (${ROLE}, ${ID}, expires_on) values (?, ?, null) on duplicate key update expires_on = values(expires_on)`;
/** A grant until a moment (Unix seconds; the session in UTC). Made to end sooner, the update trigger revokes. */
export const UPSERT_UNTIL = `insert into ${ROLES} (${ROLE}, ${ID}, expires_on) values (?, ?, from_unixtime(?)) on duplicate key update expires_on = values(expires_on)`;

/** What an upsert did, from what the database reports of it. */
export function outcomeOf(result: { affectedRows: number; insertId: number | null }, made: GrantOutcome = 'granted'): GrantOutcome {
  if (result.affectedRows >= 2) return 'changed';
  return result.affectedRows === 1 && result.insertId !== null && result.insertId !== 0 ? made : 'unchanged';
}

/** A condition on `u` (the users table) for the users an access admits. */
export function admittedBy(access: Access, ends: boolean): { sql: string; values: string[] } {
  if (access === null) return { sql: 'true', values: [] };
  if (access === '*') return { sql: `exists (select 1 from ${ROLES} r where r.${ID} = u.${ID} and ${CURRENT('r.', ends)})`, values: [] };
  return {
    sql: `exists (select 1 from ${ROLES} r where r.${ID} = u.${ID} and ${CURRENT('r.', ends)} and r.${ROLE} in (${access.map(() => '?').join(', ')}))`,
    values: [...access],
  };
}

/** A page size the caller has bounded, checked again: LIMIT takes a literal. */
export function wholeNumber(value: number): number {
  if (!Number.isSafeInteger(value) || value < 0) throw new Error(`not a page size: ${value}`);
  return value;
}
