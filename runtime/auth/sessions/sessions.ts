import { hash, randomBytes } from 'node:crypto';
import { type BackendModule, DEFAULT_MAX_SESSIONS } from '../../contract.js';
import type { Queryable } from '../../db/index.js';
import { HttpError } from '../../errors.js';
import { readUserTenant } from '../../tenants/user-tenant.js';
import type { LoginAttempt, LoginLimiter } from '../limits/limiter.js';
import { withinLimits } from '../limits/within.js';
import { type Revocations, revokeToken } from '../tokens/revocations.js';
import type { TokenIssuer } from '../tokens/tokens.js';
import type { RefreshTokens } from './refresh-tokens.js';
import { ENDED, endUserSessions } from './session-tables.js';

/**
 * Sessions (docs/internals/contract.md §10): on a Bearer backend with
 * `refresh_lifetime`, a token request begins a session; its access tokens
 * carry `sid`, and its refresh token (`xrr_...`, refresh-tokens.ts, stored as its SHA-256 only)
 * buys a new pair once: the old one is used up. A used-up refresh token that
 * comes back within 10 s (a client that lost the answer) rotates again; after
 * that it ends the whole session, as a stolen one would be used. A session
 * ends too when idle past `refresh_lifetime`, at `session_lifetime`, at
 * logout, and when its user's tokens are revoked (a password changed, a user
 * disabled, a role revoked: the triggers of the default tables, or `xmlrest
 * token revoke`). Every server refuses an ended session's access tokens
 * within its revocation poll (5 s); access tokens never outlive their session.
 * Its tables, and the statements that end and prune sessions: session-tables.ts.
 */
/** How long a used-up refresh token still rotates: a client that lost the answer tries again (Auth0's leeway, Supabase's reuse interval). */
export const REUSE_GRACE_SECONDS = 10;

/** The login limits' directory that refresh tokens of the form made before tags count in, by client address. */
const UNTAGGED_REFRESH = 'refresh tokens (untagged form)';

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
  /** 1: the used-up token is the one the current replaced, so it may rotate once within the grace. */
  is_previous: number | string;
  current_hash: Buffer;
  current_jti: string | null;
  idle: number | string;
  expired: number | string;
  ended: number | string;
  revoked: number | string;
  expires_at: number | string;
}

/**
 * What a session is, as a refresh looks it up, from its current token or one it used up; a user revoked on `*`
 * (every backend of the default user tables) counts only where the backend reads them: a backend with its own
 * AuthQuery has users of its own.
 */
const sessionColumns = (defaultTables: boolean) => `s.sid, s.user_id, s.roles, s.current_hash, s.current_jti,
  s.last_used_on < now() - interval ? second as idle, s.expires_on <= now() as expired, s.ended_on is not null as ended,
  coalesce((select max(r.revoked_before) from xmlrest_revoked_user r where r.sub = s.user_id and r.backend in (s.backend${defaultTables ? ", '*'" : ''})) >= s.created_on, 0) as revoked,
  unix_timestamp(s.expires_on) as expires_at`;

const invalid = (reason: string) => new HttpError(401, 'Invalid refresh token', {}, reason);

/** The jti of a token this server just signed (jwt.ts gives every token one). */
const jtiOf = (token: string): string => (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as { jti: string }).jti;

type SessionBackend = BackendModule & { refreshLifetime: number };

export class Sessions {
  constructor(
    private readonly backend: SessionBackend,
    private readonly db: Queryable,
    private readonly tokens: TokenIssuer,
    private readonly revocations: Revocations | undefined,
    private readonly limiter: LoginLimiter | undefined,
    private readonly refreshTokens: RefreshTokens,
  ) {}

  /** Seconds an access token issued now may still be presented: its lifetime and the clock skew. */
  private get tokenWindow(): number {
    return this.backend.tokenLifetime + this.backend.clockSkew;
  }

  /**
   * A new session for a user who just proved a password: its first pair. `endsBy` (Unix seconds): the session
   * ends then at the latest, when it carries a grant that ends (runtime/auth/users/grants.ts). Token requests that begin
   * sessions are counted per user (limiter.ts), and a user holds at most `max_sessions` live ones: the oldest end.
   */
  async begin(sub: string, aud: string | string[], endsBy?: number, ten?: string): Promise<Pair> {
    await this.limiter?.sessionBegun(this.backend.name, sub);
    const sid = randomBytes(16).toString('base64url');
    const refresh = this.refreshTokens.make();
    const roles = Array.isArray(aud) ? aud.join(' ') : aud;
    const expiresAt = Math.min(Math.floor(Date.now() / 1000) + this.backend.sessionLifetime, endsBy ?? Infinity);
    const token = this.tokens.sign({ sub, aud, sid, expiresBy: expiresAt, ten });
    await this.db.write(
      'insert into xmlrest_session (sid, backend, user_id, roles, current_hash, current_jti, expires_on) values (?, ?, ?, ?, ?, ?, from_unixtime(?))',
      [sid, this.backend.name, sub, roles, digest(refresh), jtiOf(token), expiresAt],
    );
    await this.endSurplus(sub, sid);
    return { token, refreshToken: refresh };
  }

  /** Ends the user's oldest live sessions past `max_sessions`, the one just begun kept (at most 100 at a time). */
  private async endSurplus(sub: string, kept: string): Promise<void> {
    const others = (this.backend.maxSessions ?? DEFAULT_MAX_SESSIONS) - 1;
    const surplus = await this.db.select<{ sid: string }>(
      `select sid from xmlrest_session
       where backend = ? and user_id = ? and ended_on is null and expires_on > now() and last_used_on >= now() - interval ? second and sid <> ?
       order by begun_on desc, sid desc limit 100 offset ${others}`,
      [this.backend.name, sub, this.backend.refreshLifetime, kept],
    );
    for (const { sid } of surplus) await this.end(sid, 'too_many');
  }

  /**
   * A new pair for a refresh token, which is used up; 401 when it is unknown, used up for good, or its session over.
   * A token this deployment did not make is refused before any query; one of the form made before tags is looked up
   * within the failed-login limits of the client's `address`, and counts as a failure when it opens no session.
   */
  async refresh(presented: string, address: string): Promise<Pair> {
    const form = this.refreshTokens.formOf(presented);
    if (form === 'malformed') throw invalid('malformed_refresh');
    if (form === 'current' || this.limiter === undefined) return this.rotate(presented);
    const attempt: LoginAttempt = { directory: UNTAGGED_REFRESH, user: undefined, address };
    // A 401 (unknown, used up, ended) is the check's "no"; a fault is no attempt.
    return withinLimits(
      this.limiter,
      attempt,
      () => this.rotate(presented),
      () => true,
      (error) => error instanceof HttpError && error.status === 401,
    );
  }

  private async rotate(presented: string): Promise<Pair> {
    const presentedHash = digest(presented);
    for (let attempt = 0; attempt < 3; attempt++) {
      const lifetime = this.backend.refreshLifetime;
      const [row] = await this.db.select<SessionRow>(
        `select 1 as is_current, 0 as reused_within_grace, 0 as is_previous, ${sessionColumns(this.backend.defaultTables)}
         from xmlrest_session s where s.current_hash = ? and s.backend = ?
         union all
         select 0, u.used_on > now(3) - interval ${REUSE_GRACE_SECONDS} second, s.previous_hash <=> u.token_hash, ${sessionColumns(this.backend.defaultTables)}
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
      const current = Number(row.is_current) === 1;
      // A used-up token rotates again only within the grace, and only the one the current pair replaced: once, since
      // that rotation leaves no previous one. Any other use is one of two holders who is not its owner.
      if (!current && (Number(row.reused_within_grace) !== 1 || Number(row.is_previous) !== 1)) await this.endAsReused(row.sid);
      const roles = await this.rolesNow(row);
      // The token given up is listed as used before the session moves on, so that whichever way two requests with it
      // interleave, the second finds it used; and of two rotations of one pair, the same compare-and-swap lets one win.
      const from = current ? presentedHash : row.current_hash;
      const next = this.refreshTokens.make();
      const aud = roles.includes(' ') ? roles.split(' ') : roles;
      // A tenant backend's user's tenant is read again at each refresh (docs/internals/contract.md §14), as a RolesQuery's roles are.
      const ten = await readUserTenant(this.db, this.backend, String(row.user_id));
      const token = this.tokens.sign({ sub: String(row.user_id), aud, sid: row.sid, expiresBy: Number(row.expires_at), ten });
      await this.db.write('insert ignore into xmlrest_refresh_used (token_hash, sid) values (?, ?)', [from, row.sid]);
      // A pair the grace bought replaces no token that may come back: the voided pair's was answered, not lost.
      const rotated = await this.db.write(
        `update xmlrest_session set previous_hash = ${current ? 'current_hash' : 'null'}, current_hash = ?, current_jti = ?, roles = ?, last_used_on = now()
         where sid = ? and ended_on is null and current_hash = ?`,
        [digest(next), jtiOf(token), roles, row.sid, from],
      );
      if (rotated.affectedRows !== 1) {
        // Another rotation of the same pair won: the presented token, now used up, is looked at again (the grace).
        if (current) continue;
        // The pair the grace would void moved on meanwhile: it has a holder, and so has the token used up.
        await this.endAsReused(row.sid);
      }
      // The pair the lost answer held is void: its access token too, here at once, everywhere within the poll.
      if (!current && row.current_jti !== null) await this.revokeVoided(row.current_jti);
      return { token, refreshToken: next };
    }
    throw invalid('refresh_contended');
  }

  /** Ends the session whose used-up token came back, and says so. */
  private async endAsReused(sid: string): Promise<never> {
    await this.end(sid, 'reuse');
    throw invalid('refresh_reused');
  }

  /**
   * The roles a refresh carries: on the default user tables, those of the sign-in (their triggers end the session of
   * a user who loses a role or goes); with a RolesQuery (an own AuthQuery), those the user holds now, and none ends it.
   */
  private async rolesNow(row: SessionRow): Promise<string> {
    const query = this.backend.rolesQuery;
    if (query === undefined) return row.roles;
    const rows = await this.db.select<{ aud: unknown }>(query.sql, [String(row.user_id)]);
    const held = [
      ...new Set(
        rows
          .map((held) => held.aud)
          .filter((aud) => aud !== null && aud !== undefined && String(aud) !== '')
          .map(String),
      ),
    ];
    if (held.length === 0) {
      await this.end(row.sid, 'user_gone');
      throw invalid('user_gone');
    }
    return held.join(' ');
  }

  private async revokeVoided(jti: string): Promise<void> {
    await revokeToken(this.db, this.backend.name, jti, Math.floor(Date.now() / 1000) + this.tokenWindow);
    this.revocations?.revokedHere(this.backend.name, jti);
  }

  /** Ends one session; this server refuses its tokens from this moment, the others within their poll. */
  async end(sid: string, why: string): Promise<number> {
    const ended = await this.db.write(`update xmlrest_session set ${ENDED('?')} where sid = ? and backend = ? and ended_on is null`, [
      why,
      this.tokenWindow,
      sid,
      this.backend.name,
    ]);
    if (ended.affectedRows > 0) this.revocations?.endedHere(this.backend.name, [sid], this.tokensUntil());
    return ended.affectedRows;
  }

  /** Ends every session of a user on this backend. */
  async endAll(userId: string, why: string): Promise<number> {
    const ended = await endUserSessions(this.db, this.backend.name, userId, why, this.tokenWindow);
    if (ended.sids.length > 0) this.revocations?.endedHere(this.backend.name, ended.sids, this.tokensUntil());
    return ended.count;
  }

  /** Until when this server lists a session it ends now (a session's own end may come sooner; the poll reads that). */
  private tokensUntil(): number {
    return Math.floor(Date.now() / 1000) + this.tokenWindow;
  }
}
