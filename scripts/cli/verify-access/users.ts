// The temporary users' lifetime in the database: their grants that end, their removal, earlier runs' leftovers and
// the history line of each run; apart from the calls, which never touch the database.
import type mysql from 'mysql2/promise';
import { RESERVED_USER_PREFIX } from '../../../console/names.js';
import { isoSeconds } from '../../../console/store.js';
import { DEFAULT_USER_TABLES } from '../../../runtime/auth/users/user-tables.js';
import { errnoOf, NO_COLUMN, NO_TABLE } from '../../../runtime/db/index.js';
import { recordFromCli } from '../../schema.js';
import { messageOfError, VerifyUsage } from './errors.js';

/** Every name a temporary user is given starts so (a reserved prefix: console/names.ts): a run's leftovers are found by it. */
export const TEMPORARY_USER_PREFIX = RESERVED_USER_PREFIX;
/** The role of the user that stands for any authenticated caller entitled to nothing: no route may name it. */
export const ANY_ROLE = `${TEMPORARY_USER_PREFIX}any`;
/** How long a temporary user's roles are granted for: past it, a user a killed run left can call nothing. */
export const GRANT_SECONDS = 900;

/** Earlier runs' revocation rows are pruned when their history line is younger than this (older ones are left). */
const PRUNE_DAYS = 7;

export interface TemporaryUser {
  id: number;
  name: string;
  password: string;
  role: string;
}

/** What a run made, for its line of the history and for pruning after it: users and when the last of their tokens ends. */
export interface Made {
  users: TemporaryUser[];
  /** The latest end given to their grants (Unix seconds): no token or key of theirs outlives it. */
  until: number;
}

/** The temporary users' roles end: a role table without `expires_on` (an earlier version's) cannot hold them. */
export async function requireGrantEnds(connection: mysql.Connection): Promise<void> {
  try {
    await connection.query(`select expires_on from ${DEFAULT_USER_TABLES.roles} limit 0`);
  } catch (error) {
    const errno = errnoOf(error);
    if (errno === NO_COLUMN) {
      throw new VerifyUsage(
        `${DEFAULT_USER_TABLES.roles} has no expires_on column (a database of an earlier version): run xmlrest db init (verify-access gives its temporary users roles that end); nothing was sent and no user made`,
      );
    }
    if (errno === NO_TABLE) throw new VerifyUsage(`the database has no ${DEFAULT_USER_TABLES.roles} table: run xmlrest db init`);
    throw error;
  }
}

/**
 * Users of earlier runs that ended without removing theirs (killed): made longer ago than a grant lasts, and holding
 * no grant that has not ended. A run still going renews its users' grants, so its users are never taken for these.
 */
export async function removeLeftovers(connection: mysql.Connection, say: (line: string) => void): Promise<Made> {
  const { users, roles, userId, userName } = DEFAULT_USER_TABLES;
  let rows: { id: number; name: string }[];
  try {
    [rows] = (await connection.execute(
      `select u.${userId} as id, u.${userName} as name from ${users} u
        where u.${userName} like ? and u.created_on < now() - interval ${GRANT_SECONDS} second
          and not exists (select 1 from ${roles} r where r.${userId} = u.${userId} and (r.expires_on is null or r.expires_on > now()))`,
      [`${TEMPORARY_USER_PREFIX}%`],
    )) as unknown as [{ id: number; name: string }[]];
  } catch (error) {
    if (errnoOf(error) === NO_TABLE) return { users: [], until: 0 };
    throw error;
  }
  const leftovers = rows.map((row) => ({ id: row.id, name: row.name, password: '', role: '' }));
  if (leftovers.length > 0) await removeUsers(connection, leftovers, say, 'left by an earlier run');
  // Their grants have ended: so have their tokens and keys (each capped by the grant it was issued under).
  return { users: leftovers, until: Math.floor(Date.now() / 1000) };
}

/** Removes temporary users with their keys and sessions; their grants go with them, and the triggers end their tokens. */
export async function removeUsers(connection: mysql.Connection, users: readonly TemporaryUser[], say: (line: string) => void, whose = ''): Promise<void> {
  if (users.length === 0) return;
  const ids = users.map((user) => user.id);
  const list = ids.map(() => '?').join(', ');
  const { users: table, userId } = DEFAULT_USER_TABLES;
  for (const sql of [`delete from xmlrest_api_key where user_id in (${list})`, `delete from xmlrest_session where user_id in (${list})`]) {
    try {
      await connection.execute(sql, ids.map(String));
    } catch (error) {
      // A database without keys or sessions (`xmlrest db init` of an earlier version): nothing of theirs there.
      if (errnoOf(error) !== NO_TABLE) throw error;
    }
  }
  await connection.execute(`delete from ${table} where ${userId} in (${list})`, ids);
  say(
    `verify-access: removed ${users.length} temporary user${users.length === 1 ? '' : 's'}${whose ? ` ${whose}` : ''} (${users.map((user) => user.name).join(', ')})`,
  );
}

/** How a run's history line keeps the ids of the users it removed and when their last token ends, for a later run to prune. */
const REMOVED_IDS = /\(ids ([0-9 ]+); their tokens end by (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)\)/g;

/**
 * One line of the console's history per run, under `*` (every console of the default tables shows it): the users it
 * made, their roles and until when, and whether it removed them; the users of earlier runs it removed. The ids and
 * when their last token ends come first, so that a later run can prune their revocation rows (`pruneEarlierRuns`).
 */
export async function recordRun(connection: mysql.Connection, base: string, made: Made, leftovers: Made, removal: unknown): Promise<void> {
  if (made.users.length === 0 && leftovers.users.length === 0) return;
  const ids = (group: Made) => `(ids ${group.users.map((user) => user.id).join(' ')}; their tokens end by ${isoSeconds(group.until)})`;
  const parts: string[] = [];
  if (made.users.length > 0) {
    parts.push(
      removal === undefined
        ? `made and removed ${made.users.length} temporary users ${ids(made)}`
        : `made ${made.users.length} temporary users and could not remove them (${messageOfError(removal)}); roles until ${isoSeconds(made.until)}`,
    );
  }
  if (leftovers.users.length > 0) parts.push(`removed ${leftovers.users.length} left by an earlier run ${ids(leftovers)}`);
  if (made.users.length > 0) parts.push(made.users.map((user) => `${user.name}: ${user.role}`).join(', '));
  await recordFromCli(connection, 'verify-access', base, parts.join('; '));
}

/**
 * Earlier runs' rows in xmlrest_revoked_user: the delete trigger writes one for every user removed, and every server
 * reads the table every 5 s, so a run on each commit would grow it for ever. A row of a temporary user can go once
 * the last token that user was issued has ended (each is capped by the grant it was issued under, and no user will
 * have that id again): the run's history line says which ids and until when. Only history lines of the last
 * PRUNE_DAYS days are read; a database without the history keeps its rows.
 */
export async function pruneEarlierRuns(connection: mysql.Connection): Promise<void> {
  let rows: { detail: string }[];
  try {
    [rows] = (await connection.execute(
      `select detail from xmlrest_console_audit where backend = '*' and action = 'verify-access' and at > now() - interval ${PRUNE_DAYS} day`,
    )) as unknown as [{ detail: string }[]];
  } catch (error) {
    if (errnoOf(error) === NO_TABLE) return;
    throw error;
  }
  const now = Date.now();
  const ids = rows.flatMap((row) =>
    [...row.detail.matchAll(REMOVED_IDS)].filter((match) => Date.parse(match[2]!) < now).flatMap((match) => match[1]!.trim().split(' ')),
  );
  if (ids.length === 0) return;
  const { users, userId } = DEFAULT_USER_TABLES;
  for (let start = 0; start < ids.length; start += 500) {
    const some = ids.slice(start, start + 500);
    try {
      await connection.execute(
        `delete from xmlrest_revoked_user where backend = '*' and sub in (${some.map(() => '?').join(', ')})
          and not exists (select 1 from ${users} u where cast(u.${userId} as char) = xmlrest_revoked_user.sub)`,
        some,
      );
    } catch (error) {
      if (errnoOf(error) === NO_TABLE) return;
      throw error;
    }
  }
}
