// The rows the store answers with (a user with its current grants, a side of an access's change) and how a read's
// columns become one: apart from the store, since the console's API and scope use these shapes without its statements.

export interface UserRow {
  user_id: number;
  user_name: string;
  created_on: Date;
  /** Disabled on the console: its password checks fail until enabled again. */
  disabled: boolean;
  roles: string[];
  /** The roles whose grant ends, each with its end (ISO, UTC): runtime/auth/users/grants.ts. */
  ends: Record<string, string>;
  /** The user's tenant (null: none), on a backend whose tenant is a column of usr (console/user-tenant.ts); absent elsewhere. */
  tenant?: string | null;
}

export type UserColumns = Omit<UserRow, 'roles' | 'disabled' | 'ends'> & { disabled: number | string | boolean };
export interface GrantRow {
  role_name: string;
  ends: number | string | null;
}
export const asUser = (row: UserColumns, grants: GrantRow[]): UserRow => ({
  ...row,
  disabled: Number(row.disabled) === 1,
  roles: grants.map((grant) => grant.role_name),
  ends: Object.fromEntries(grants.filter((grant) => grant.ends !== null).map((grant) => [grant.role_name, isoSeconds(Number(grant.ends))])),
});

/** Unix seconds as an ISO time in UTC, to the second. */
export function isoSeconds(seconds: number): string {
  return new Date(Math.floor(seconds) * 1000).toISOString().replace('.000Z', 'Z');
}

export interface ImpactSide {
  count: number;
  /** The first of them by id. */
  users: string[];
  /** Callers with no credentials at all are on this side too (the resource becomes, or stops being, public). */
  anonymous: boolean;
}
