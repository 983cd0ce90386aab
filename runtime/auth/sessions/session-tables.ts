import type { Queryable } from '../../db/index.js';

/** The tables of sessions (sessions.ts), made by `xmlrest db init`, and the statements that end them. */
export const SESSION_TABLES = [
  `create table if not exists xmlrest_session (
    sid char(22) character set ascii collate ascii_bin not null primary key,
    backend varchar(64) not null,
    user_id varchar(190) not null,
    roles varchar(1000) not null,
    current_hash binary(32) not null,
    created_on timestamp not null default current_timestamp,
    last_used_on timestamp not null default current_timestamp,
    expires_on timestamp not null default current_timestamp,
    ended_on timestamp null default null,
    ended_why varchar(32) null default null,
    tokens_until timestamp null default null,
    previous_hash binary(32) null default null,
    current_jti varchar(64) character set ascii collate ascii_bin null default null,
    begun_on timestamp(6) not null default current_timestamp(6),
    unique key xmlrest_session_current (current_hash),
    key xmlrest_session_user (backend, user_id),
    key xmlrest_session_ended (tokens_until),
    key xmlrest_session_ended_on (ended_on)
  ) engine = InnoDB`,
  // Every refresh token a session has used up, so that any of them coming back is seen as the reuse it is.
  `create table if not exists xmlrest_refresh_used (
    token_hash binary(32) not null primary key,
    sid char(22) character set ascii collate ascii_bin not null,
    used_on timestamp(3) not null default current_timestamp(3),
    key xmlrest_refresh_used_sid (sid)
  ) engine = InnoDB`,
];

/**
 * An ended session's access tokens are refused until the last of them expires, and no longer listed after: its
 * `tokens_until` is its end plus the backend's token lifetime and clock skew (never past the session's own end),
 * so that the servers' lists hold only sessions whose tokens may still come (revocations.ts).
 */
export const ENDED = (lifetime: string) => `ended_on = now(), ended_why = ?, tokens_until = least(expires_on, now() + interval ${lifetime} second)`;

/** The column a session table made before it lacks (`xmlrest db init` adds it). */
export const SESSION_TOKENS_UNTIL =
  'alter table xmlrest_session add column tokens_until timestamp null default null, add key xmlrest_session_ended (tokens_until)';

/**
 * The columns a session table made before issue 40 lacks (`xmlrest db init` adds them): the token the current one
 * replaced, so that only it may come back within the grace, and once; the jti of the access token issued with the
 * current pair, so that a pair the grace voids is void; when it began to the microsecond, so that the oldest of a
 * user's sessions is the one `max_sessions` ends; and an index for the revocation poll's read of what ended since.
 */
export const SESSION_ROTATION_COLUMNS =
  'alter table xmlrest_session add column previous_hash binary(32) null default null, add column current_jti varchar(64) character set ascii collate ascii_bin null default null, add column begun_on timestamp(6) not null default current_timestamp(6), add key xmlrest_session_ended_on (ended_on)';

/**
 * Ends every live session of a user on a backend (logout scope=all, `xmlrest token revoke --user-id`): how many, and
 * the sessions of the user whose tokens may still come, for the caller's own list.
 */
export async function endUserSessions(
  db: Queryable,
  backend: string,
  userId: string,
  why: string,
  tokenWindow: number,
): Promise<{ count: number; sids: string[] }> {
  const ended = await db.write(`update xmlrest_session set ${ENDED('?')} where backend = ? and user_id = ? and ended_on is null`, [
    why,
    tokenWindow,
    backend,
    userId,
  ]);
  if (ended.affectedRows === 0) return { count: 0, sids: [] };
  const rows = await db.select<{ sid: string }>('select sid from xmlrest_session where backend = ? and user_id = ? and tokens_until > now()', [
    backend,
    userId,
  ]);
  return { count: ended.affectedRows, sids: rows.map((row) => row.sid) };
}

/** Removes sessions over for a day (ended, or past their end), and the used-up tokens of sessions no longer there (every server calls it now and then). */
export async function pruneSessions(db: Queryable): Promise<void> {
  await db.write('delete from xmlrest_session where expires_on < now() - interval 1 day limit 10000', []);
  // An ended session's tokens are all expired by its tokens_until: a day later it is no longer kept.
  await db.write('delete from xmlrest_session where tokens_until < now() - interval 1 day limit 10000', []);
  await db.write('delete u from xmlrest_refresh_used u left join xmlrest_session s on s.sid = u.sid where s.sid is null', []);
}
