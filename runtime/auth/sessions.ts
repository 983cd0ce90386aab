import { hash, randomBytes } from 'node:crypto';
import type { BackendModule } from '../contract.js';
import type { Queryable } from '../db/index.js';
import { HttpError } from '../errors.js';
import { randomBase62 } from './api-key.js';
import type { Revocations } from './revocations.js';
import type { TokenIssuer } from './tokens.js';

/**
 * Sessions (docs/contract.md §10): on a Bearer backend with
 * `refresh_lifetime`, a token request begins a session; its access tokens
 * carry `sid`, and its refresh token (`xrr_...`, stored as its SHA-256 only)
 * buys a new pair once: the old one is used up. A used-up refresh token that
 * comes back within 10 s (a client that lost the answer) rotates again; after
 * that it ends the whole session, as a stolen one would be used. A session
 * ends too when idle past `refresh_lifetime`, at `session_lifetime`, at
 * logout, and when its user's tokens are revoked (a password changed, a user
 * disabled, a role revoked: the triggers of the default tables, or `xmlrest
 * token revoke`). Every server refuses an ended session's access tokens
 * within its revocation poll (5 s); access tokens never outlive their session.
 */
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
    unique key xmlrest_session_current (current_hash),
    key xmlrest_session_user (backend, user_id),
    key xmlrest_session_ended (tokens_until)
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
const ENDED = (lifetime: string) => `ended_on = now(), ended_why = ?, tokens_until = least(expires_on, now() + interval ${lifetime} second)`;

/** The column a session table made before it lacks (`xmlrest db init` adds it). */
export const SESSION_TOKENS_UNTIL =
  'alter table xmlrest_session add column tokens_until timestamp null default null, add key xmlrest_session_ended (tokens_until)';

/** How long a used-up refresh token still rotates: a client that lost the answer tries again (Auth0's leeway, Supabase's reuse interval). */
export const REUSE_GRACE_SECONDS = 10;

/** A new refresh token: `xrr_` and 32 random bytes in base62, as an API key's body. */
const refreshToken = () => `xrr_${randomBase62()}`;

const digest = (token: string) => hash('sha256', token, 'buffer');

export interface Pair {
  token: string;
  refreshToken: string;
}

interface SessionRow {
  sid: string;
  user_id: string;
  roles: string;
  /** 1: the session's current token; 0: one it used up. */
  is_current: number | string;
  reused_within_grace: number | string;
  idle: number | string;
  expired: number | string;
  ended: number | string;
  revoked: number | string;
  expires_at: number | string;
}

/** What a session is, as a refresh looks it up, from its current token or one it used up. */
const SESSION_COLUMNS = `s.sid, s.user_id, s.roles,
  s.last_used_on < now() - interval ? second as idle, s.expires_on <= now() as expired, s.ended_on is not null as ended,
  coalesce((select max(r.revoked_before) from xmlrest_revoked_user r where r.sub = s.user_id and r.backend in (s.backend, '*')) >= s.created_on, 0) as revoked,
  unix_timestamp(s.expires_on) as expires_at`;

const invalid = (reason: string) => new HttpError(401, 'Invalid refresh token', {}, reason);

export class Sessions {
  constructor(
    private readonly backend: BackendModule & { refreshLifetime: number },
    private readonly db: Queryable,
    private readonly tokens: TokenIssuer,
    private readonly revocations: Revocations | undefined,
  ) {}

  /** Seconds an access token issued now may still be presented: its lifetime and the clock skew. */
  private get tokenWindow(): number {
    return this.backend.tokenLifetime + this.backend.clockSkew;
  }

  /**
   * A new session for a user who just proved a password: its first pair. `endsBy` (Unix seconds): the session
   * ends then at the latest, when it carries a grant that ends (runtime/auth/grants.ts).
   */
  async begin(sub: string, aud: string | string[], endsBy?: number): Promise<Pair> {
    const sid = randomBytes(16).toString('base64url');
    const refresh = refreshToken();
    const roles = Array.isArray(aud) ? aud.join(' ') : aud;
    const expiresAt = Math.min(Math.floor(Date.now() / 1000) + this.backend.sessionLifetime, endsBy ?? Infinity);
    await this.db.write('insert into xmlrest_session (sid, backend, user_id, roles, current_hash, expires_on) values (?, ?, ?, ?, ?, from_unixtime(?))', [
      sid,
      this.backend.name,
      sub,
      roles,
      digest(refresh),
      expiresAt,
    ]);
    return { token: this.tokens.sign({ sub, aud, sid, expiresBy: expiresAt }), refreshToken: refresh };
  }

  /** A new pair for a refresh token, which is used up; 401 when it is unknown, used up for good, or its session over. */
  async refresh(presented: string): Promise<Pair> {
    if (!/^xrr_[0-9A-Za-z]{43}$/.test(presented)) throw invalid('malformed_refresh');
    const presentedHash = digest(presented);
    for (let attempt = 0; attempt < 3; attempt++) {
      const lifetime = this.backend.refreshLifetime;
      const [row] = await this.db.select<SessionRow>(
        `select 1 as is_current, 0 as reused_within_grace, ${SESSION_COLUMNS}
         from xmlrest_session s where s.current_hash = ? and s.backend = ?
         union all
         select 0, u.used_on > now(3) - interval ${REUSE_GRACE_SECONDS} second, ${SESSION_COLUMNS}
         from xmlrest_refresh_used u join xmlrest_session s on s.sid = u.sid where u.token_hash = ? and s.backend = ?`,
        [lifetime, presentedHash, this.backend.name, lifetime, presentedHash, this.backend.name],
      );
      if (row === undefined) throw invalid('unknown_refresh');
      if (Number(row.ended) === 1) throw invalid('session_ended');
      const why = Number(row.expired) === 1 ? 'expired' : Number(row.idle) === 1 ? 'idle' : Number(row.revoked) === 1 ? 'revoked' : undefined;
      if (why !== undefined) {
        await this.end(row.sid, why);
        throw invalid(`session_${why}`);
      }
      if (Number(row.is_current) !== 1 && Number(row.reused_within_grace) !== 1) {
        // Used up and used again: one of the two holders is not its owner. The whole session ends.
        await this.end(row.sid, 'reuse');
        throw invalid('refresh_reused');
      }
      // The presented token is used up before it is exchanged: it is listed as used first, so that a second request
      // with it (a retry, or a thief) finds it used whichever way the two interleave, and of two rotations only one
      // updates the session. One used up within the grace (the answer to its rotation was lost) rotates the session
      // once more; the token its first rotation bought is listed as used too, so that its later use ends the session.
      const next = refreshToken();
      const current = Number(row.is_current) === 1;
      if (current) await this.db.write('insert ignore into xmlrest_refresh_used (token_hash, sid) values (?, ?)', [presentedHash, row.sid]);
      else
        await this.db.write('insert ignore into xmlrest_refresh_used (token_hash, sid) select current_hash, sid from xmlrest_session where sid = ?', [row.sid]);
      const rotated = await this.db.write(
        `update xmlrest_session set current_hash = ?, last_used_on = now() where sid = ? and ended_on is null${current ? ' and current_hash = ?' : ''}`,
        current ? [digest(next), row.sid, presentedHash] : [digest(next), row.sid],
      );
      if (rotated.affectedRows !== 1) continue;
      const aud = row.roles.includes(' ') ? row.roles.split(' ') : row.roles;
      return { token: this.tokens.sign({ sub: String(row.user_id), aud, sid: row.sid, expiresBy: Number(row.expires_at) }), refreshToken: next };
    }
    throw invalid('refresh_contended');
  }

  /** Ends one session; this server refuses its tokens at once, the others within their poll. */
  async end(sid: string, why: string): Promise<number> {
    const ended = await this.db.write(`update xmlrest_session set ${ENDED('?')} where sid = ? and backend = ? and ended_on is null`, [
      why,
      this.tokenWindow,
      sid,
      this.backend.name,
    ]);
    await this.revocations?.refresh();
    return ended.affectedRows;
  }

  /** Ends every session of a user on this backend. */
  async endAll(userId: string, why: string): Promise<number> {
    const ended = await this.db.write(`update xmlrest_session set ${ENDED('?')} where backend = ? and user_id = ? and ended_on is null`, [
      why,
      this.tokenWindow,
      this.backend.name,
      userId,
    ]);
    await this.revocations?.refresh();
    return ended.affectedRows;
  }
}

/** Removes sessions over for a day, and the used-up tokens of sessions no longer there (every server calls it now and then). */
export async function pruneSessions(db: Queryable): Promise<void> {
  await db.write('delete from xmlrest_session where expires_on < now() - interval 1 day limit 10000', []);
  await db.write('delete u from xmlrest_refresh_used u left join xmlrest_session s on s.sid = u.sid where s.sid is null', []);
}
