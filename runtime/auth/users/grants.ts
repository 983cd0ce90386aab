import { errnoOf, NO_COLUMN, NO_TABLE, type Queryable } from '../../db/index.js';
import { DEFAULT_USER_TABLES } from './user-tables.js';

/**
 * Grants that end (docs/internals/contract.md §8): a row of the default role table may
 * carry `expires_on`. The server's own doors read the end themselves, so an
 * ended grant stops admitting there the moment it ends, whether or not its
 * row is gone yet: the default auth queries leave it out (user-tables.ts
 * `withGrantEnds`: HTTP Basic, token requests), a token issued while a grant
 * is temporary expires no later than the grant (`grantLimits`, called by every
 * door that issues one), and an API key's lookup leaves it out and is read
 * again at the end (api-key.ts). Then the row is deleted, by whichever
 * server's revocation poll (revocations.ts) comes first, and its deletion is
 * a revoke like any other: the table's delete trigger (scripts/schema.ts)
 * revokes the user's tokens on every backend and records the end in the
 * console's history, and every other query that reads the table (a token
 * request's own SQL, an AuthQuery of your own) sees it gone. Each server reads
 * when the next grant ends and deletes it at that moment; its poll catches
 * whatever the timer could not know of (a grant made shorter than the poll).
 */
const { roles: ROLES, userId: ID, roleName: ROLE } = DEFAULT_USER_TABLES;

/** The column a role table made before grants could end lacks (`xmlrest db init` adds it). */
export const GRANT_ENDS_COLUMN = `alter table ${ROLES} add column expires_on timestamp null default null, add key ${ROLES}_expires (expires_on)`;

const DEADLOCK = 1213; // two servers (Galera nodes) deleting the same ended grant: the other one did it

/** A role table without the column (`xmlrest db init` adds it), or no default tables at all: no grant of it ends. */
function absent(error: unknown): boolean {
  const errno = errnoOf(error);
  return errno === NO_TABLE || errno === NO_COLUMN;
}

/**
 * Deletes every grant that has ended (the delete trigger revokes and records each), and says in how many
 * milliseconds the next one ends, by the database's clock; undefined when none will. Only the read may find the
 * table or its column absent (nothing ends there); a delete that fails throws, whatever its error, even a missing
 * table: the delete trigger writes to xmlrest_revoked_user and xmlrest_console_audit, and a grant that cannot be
 * deleted keeps admitting wherever a query reads the table without the end (the caller says so, again and again).
 */
export async function endDueGrants(db: Queryable): Promise<number | undefined> {
  for (let rounds = 0; rounds < 10; rounds++) {
    let next: { wait: number | string | null } | undefined;
    try {
      [next] = await db.select<{ wait: number | string | null }>(
        `select timestampdiff(microsecond, now(6), min(expires_on)) div 1000 as wait from ${ROLES} where expires_on is not null`,
        [],
      );
    } catch (error) {
      if (absent(error)) return undefined;
      throw error;
    }
    if (next?.wait === null || next?.wait === undefined) return undefined;
    const wait = Number(next.wait);
    if (wait > 0) return wait;
    try {
      await db.write(`delete from ${ROLES} where expires_on <= now() limit 1000`, []);
    } catch (error) {
      if (errnoOf(error) !== DEADLOCK) throw error;
    }
  }
  return 0;
}

/** What a token issued now may carry: the roles whose grant has not ended, and the moment (Unix seconds) the first temporary one ends. */
export interface GrantLimits {
  roles: string[];
  endsBy: number | undefined;
}

/**
 * The roles of `roles` that `userId` still holds as far as their ends go, and the earliest end among them:
 * one indexed read of the user's temporary grants (usually none). A grant past its end that no server has
 * deleted yet (the moment has just come) counts as ended.
 */
export async function grantLimits(db: Queryable, userId: string, roles: readonly string[]): Promise<GrantLimits> {
  let rows: { role_name: string; ends: number | string; ended: number | string }[];
  try {
    rows = await db.select(
      `select ${ROLE} as role_name, unix_timestamp(expires_on) as ends, expires_on <= now() as ended from ${ROLES} where ${ID} = ? and expires_on is not null`,
      [userId],
    );
  } catch (error) {
    if (absent(error)) return { roles: [...roles], endsBy: undefined };
    throw error;
  }
  if (rows.length === 0) return { roles: [...roles], endsBy: undefined };
  const temporary = new Map(rows.map((row) => [row.role_name, row]));
  const kept = roles.filter((role) => Number(temporary.get(role)?.ended ?? 0) !== 1);
  const ends = kept.flatMap((role) => {
    const row = temporary.get(role);
    return row === undefined ? [] : [Math.floor(Number(row.ends))];
  });
  return { roles: kept, endsBy: ends.length === 0 ? undefined : Math.min(...ends) };
}
