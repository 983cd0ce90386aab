import { hashPassword, LOCKED } from '../runtime/auth/passwords/passwords.js';
import { errnoOf, NO_COLUMN } from '../runtime/db/index.js';
import { HttpError } from '../runtime/errors.js';
import type { Access, Queryable } from '../runtime/index.js';
import { asUser, type GrantRow, type ImpactSide, type UserColumns, type UserRow } from './user-rows.js';
import {
  admittedBy,
  CURRENT,
  GRANT_COLUMNS,
  type GrantOutcome,
  ID,
  NAME,
  outcomeOf,
  PASSWORD,
  ROLE,
  ROLES,
  TENANT_COLUMN,
  UPSERT_FOR_GOOD,
  UPSERT_UNTIL,
  USER_COLUMNS,
  USERS,
  wholeNumber,
} from './user-sql.js';

export { ROLE_CATALOG, ROLE_CATALOG_BACKEND } from './role-catalog.js';
export { type ImpactSide, isoSeconds, type UserRow } from './user-rows.js';
export type { GrantOutcome } from './user-sql.js';

/**
 * A grant with an end asked of a role table of an earlier version: said as what to do, never a 500. The console
 * answers it as a 503; the command line says it as a usage error.
 */
export class GrantEndsMissing extends HttpError {
  /** On the command line: what to do, as a usage error is said (scripts/cli/xmlrest.ts `run`). */
  readonly exitCode = 2;

  constructor() {
    super(503, 'usr_role has no expires_on column (a database of an earlier version), so a grant cannot be given an end: run xmlrest db init');
  }
}

/** A database whose connection can run statements on one session: a transaction's connection, or a command's one connection. */
type StoreDatabase = Queryable & { transaction?<T>(work: (db: Queryable) => Promise<T>): Promise<T> };

/**
 * The console's reads and writes of the default user tables (docs/internals/seed.md
 * §2.2, named in runtime/auth/users/user-tables.ts), and of xmlrest_role, the
 * roles created on each backend's console (console/scope.ts): a role there
 * belongs to the backend whose console created it. Rows come back under the
 * default column names, which the console's API uses whatever the tables
 * call them. Its statements' pieces are in user-sql.ts, the rows it answers
 * with in user-rows.ts, the catalog's table in role-catalog.ts.
 */
export class UserStore {
  // The catalog table is made by `xmlrest db init` (scripts/schema.ts), never at request time: on a cluster,
  // DDL under load stalls every node.
  constructor(private readonly db: StoreDatabase) {}

  /**
   * Runs a query of the grants with their ends, or, on a role table of an earlier version (no `expires_on`:
   * `xmlrest db init` adds it), without: every grant there is for good. Asked each time, never remembered, so that
   * a running console sees the column as soon as `xmlrest db init` adds it.
   */
  private async withEnds<T>(work: (ends: boolean) => Promise<T>): Promise<T> {
    try {
      return await work(true);
    } catch (error) {
      if (errnoOf(error) !== NO_COLUMN) throw error;
      return work(false);
    }
  }

  /** One page of users in id order, after `after`; a name prefix narrows it. Keyset paging stays fast at any depth. */
  async users(after: number, limit: number, prefix: string, tenantColumn?: string): Promise<{ users: UserRow[]; next: number | null }> {
    // LIMIT takes a literal: `limit` is a whole number the caller has bounded, never request text.
    const rows = await this.db.select<UserColumns>(
      `select ${USER_COLUMNS}${TENANT_COLUMN(tenantColumn)} from ${USERS}
        where ${ID} > ? and ${NAME} like ? order by ${ID} limit ${wholeNumber(limit) + 1}`,
      [after, `${prefix.replace(/[\\%_]/g, '\\$&')}%`],
    );
    const page = rows.slice(0, limit);
    const roles =
      page.length === 0
        ? []
        : await this.withEnds((ends) =>
            this.db.select<GrantRow & { user_id: number }>(
              `select ${ID} as user_id, ${GRANT_COLUMNS(ends)} from ${ROLES} where ${ID} in (${page.map(() => '?').join(', ')}) and ${CURRENT('', ends)} order by ${ROLE}`,
              page.map((row) => row.user_id),
            ),
          );
    return {
      users: page.map((row) =>
        asUser(
          row,
          roles.filter((role) => role.user_id === row.user_id),
        ),
      ),
      next: rows.length > limit ? page.at(-1)!.user_id : null,
    };
  }

  /** A user with its current grants, and its tenant when given the column that holds it (console/user-tenant.ts). */
  async user(id: number, tenantColumn?: string): Promise<UserRow | undefined> {
    const [row] = await this.db.select<UserColumns>(`select ${USER_COLUMNS}${TENANT_COLUMN(tenantColumn)} from ${USERS} where ${ID} = ?`, [id]);
    if (!row) return undefined;
    const grants = await this.withEnds((ends) =>
      this.db.select<GrantRow>(`select ${GRANT_COLUMNS(ends)} from ${ROLES} where ${ID} = ? and ${CURRENT('', ends)} order by ${ROLE}`, [id]),
    );
    return asUser(row, grants);
  }

  async idOf(name: string): Promise<number | undefined> {
    const [row] = await this.db.select<{ user_id: number }>(`select ${ID} as user_id from ${USERS} where ${NAME} = ?`, [name]);
    return row?.user_id;
  }

  async addUser(name: string, password: string): Promise<number> {
    const result = (await this.db.write(`insert into ${USERS} (${NAME}, ${PASSWORD}) values (?, ?)`, [name, await hashPassword(password)])) as {
      insertId: number;
    };
    return result.insertId;
  }

  /**
   * Grants a role until `until` (Unix seconds), or for good (null). The unique key keeps one row: granting a role
   * the user holds sets its end to the one given (a temporary grant made permanent, or the reverse), and
   * granting it as it is changes nothing. A grant made to end sooner revokes the user's tokens (the trigger).
   *
   * One statement, so that no server's deletion of an ended grant can come between a read and a write: an upsert,
   * whose outcome the database reports (affected rows 2: an end changed; 1 with a new id: a row made; 1 with none,
   * or 0: as it was, under mysql2's FOUND_ROWS or without it). An end is written with the session in UTC: in a zone
   * with summer time, `from_unixtime` of a moment in the autumn's repeated hour is a local time that stands for two.
   */
  async grant(userId: number, role: string, until: number | null = null): Promise<GrantOutcome> {
    if (until === null) {
      try {
        return outcomeOf(await this.db.write(UPSERT_FOR_GOOD, [role, userId]));
      } catch (error) {
        // A role table of an earlier version: a grant there is for good, as asked.
        if (errnoOf(error) !== NO_COLUMN) throw error;
        return outcomeOf(await this.db.write(`insert ignore into ${ROLES} (${ROLE}, ${ID}) values (?, ?)`, [role, userId]), 'granted');
      }
    }
    const upsert = async (db: Queryable) => {
      await db.write("set @xmlrest_time_zone = @@session.time_zone, time_zone = '+00:00'", []);
      try {
        return await db.write(UPSERT_UNTIL, [role, userId, until]);
      } finally {
        await db.write('set time_zone = @xmlrest_time_zone', []);
      }
    };
    try {
      return outcomeOf(await (this.db.transaction ? this.db.transaction(upsert) : upsert(this.db)));
    } catch (error) {
      if (errnoOf(error) === NO_COLUMN) throw new GrantEndsMissing();
      throw error;
    }
  }

  /** Every server hears of it through the user tables' triggers (scripts/schema.ts). */
  async revoke(userId: number, role: string): Promise<boolean> {
    const result = (await this.db.write(`delete from ${ROLES} where ${ID} = ? and ${ROLE} = ?`, [userId, role])) as { affectedRows: number };
    return result.affectedRows > 0;
  }

  /** Roles held by users, with how many hold each. */
  async heldRoles(): Promise<Map<string, number>> {
    const held = await this.withEnds((ends) =>
      this.db.select<{ role_name: string; holders: number | string }>(
        `select ${ROLE} as role_name, count(*) as holders from ${ROLES} where ${CURRENT('', ends)} group by ${ROLE}`,
        [],
      ),
    );
    return new Map(held.map((row) => [row.role_name, Number(row.holders)]));
  }

  /** Roles created on a console, each with the backend whose console created it ('' for a catalog older than that). */
  async catalog(): Promise<Map<string, string>> {
    const rows = await this.db.select<{ role_name: string; backend: string }>('select role_name, backend from xmlrest_role', []);
    return new Map(rows.map((row) => [row.role_name, row.backend]));
  }

  /**
   * Creates a role on `backend`'s console; false when it exists already, held by a user or created before.
   * A role created before roles belonged to a backend is taken by the first console that creates it again.
   */
  async createRole(role: string, backend: string): Promise<boolean> {
    const [held] = await this.db.select<{ n: number }>(`select count(*) as n from ${ROLES} where ${ROLE} = ?`, [role]);
    if (Number(held?.n) > 0) return false;
    if ((await this.db.write('insert ignore into xmlrest_role (role_name, backend) values (?, ?)', [role, backend])).affectedRows > 0) return true;
    return (await this.db.write("update xmlrest_role set backend = ? where role_name = ? and backend = ''", [backend, role])).affectedRows > 0;
  }

  /** Deletes a role, every grant of it (the triggers end its holders' tokens) and `backend`'s catalog entry; returns how many held it. */
  async deleteRole(role: string, backend: string): Promise<number> {
    const grants = await this.db.write(`delete from ${ROLES} where ${ROLE} = ?`, [role]);
    await this.db.write("delete from xmlrest_role where role_name = ? and backend in (?, '')", [role, backend]);
    return grants.affectedRows;
  }

  /** Removes a user and its grants (the triggers end its tokens everywhere). */
  async removeUser(userId: number): Promise<void> {
    await this.db.write(`delete from ${USERS} where ${ID} = ?`, [userId]);
  }

  /** Disables (locks the stored password, as `passwd -l` does) or enables a user; the hash itself is kept. */
  async setDisabled(userId: number, disabled: boolean): Promise<void> {
    await this.db.write(
      disabled
        ? `update ${USERS} set ${PASSWORD} = concat('${LOCKED}', ${PASSWORD}) where ${ID} = ? and left(${PASSWORD}, 1) <> '${LOCKED}'`
        : `update ${USERS} set ${PASSWORD} = substring(${PASSWORD}, 2) where ${ID} = ? and left(${PASSWORD}, 1) = '${LOCKED}'`,
      [userId],
    );
  }

  async setPassword(userId: number, password: string): Promise<void> {
    await this.db.write(`update ${USERS} set ${PASSWORD} = ? where ${ID} = ?`, [await hashPassword(password), userId]);
  }

  /**
   * Who would gain and who would lose a resource if its access changed from
   * `before` to `after`: the users one admits and the other does not (at
   * most `limit` names each, and the counts). Null access is public.
   */
  async impact(before: Access, after: Access, limit = 20): Promise<{ gain: ImpactSide; lose: ImpactSide }> {
    return { gain: await this.difference(after, before, limit), lose: await this.difference(before, after, limit) };
  }

  private difference(admitted: Access, not: Access, limit: number): Promise<ImpactSide> {
    return this.withEnds(async (ends) => {
      const a = admittedBy(admitted, ends);
      const b = admittedBy(not, ends);
      const where = `(${a.sql}) and not (${b.sql})`;
      const values = [...a.values, ...b.values];
      const [count] = await this.db.select<{ n: number | string }>(`select count(*) as n from ${USERS} u where ${where}`, values);
      const users = await this.db.select<{ user_name: string }>(
        `select u.${NAME} as user_name from ${USERS} u where ${where} order by u.${ID} limit ${wholeNumber(limit)}`,
        values,
      );
      return { count: Number(count?.n ?? 0), users: users.map((row) => row.user_name), anonymous: admitted === null && not !== null };
    });
  }

  /** The users an access admits (holders of any of its roles; for `*`, of any role at all), a page at a time. */
  async admitted(
    access: '*' | readonly string[],
    after: number,
    limit: number,
  ): Promise<{ users: { user_id: number; user_name: string }[]; next: number | null }> {
    const rows = await this.withEnds((ends) => {
      const condition = admittedBy(access, ends);
      return this.db.select<{ user_id: number; user_name: string }>(
        `select u.${ID} as user_id, u.${NAME} as user_name from ${USERS} u
        where (${condition.sql}) and u.${ID} > ? order by u.${ID} limit ${wholeNumber(limit) + 1}`,
        [...condition.values, after],
      );
    });
    return { users: rows.slice(0, limit), next: rows.length > limit ? rows[limit - 1]!.user_id : null };
  }

  async holders(role: string, after: number, limit: number): Promise<{ users: { user_id: number; user_name: string }[]; next: number | null }> {
    const rows = await this.withEnds((ends) =>
      this.db.select<{ user_id: number; user_name: string }>(
        `select u.${ID} as user_id, u.${NAME} as user_name from ${ROLES} r inner join ${USERS} u on u.${ID} = r.${ID}
        where r.${ROLE} = ? and ${CURRENT('r.', ends)} and u.${ID} > ? order by u.${ID} limit ${wholeNumber(limit) + 1}`,
        [role, after],
      ),
    );
    return { users: rows.slice(0, limit), next: rows.length > limit ? rows[limit - 1]!.user_id : null };
  }
}
