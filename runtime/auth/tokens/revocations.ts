import { errnoOf, NO_COLUMN, NO_TABLE, type Queryable } from '../../db/index.js';
import type { Logger } from '../../log.js';
import { endDueGrants } from '../users/grants.js';
import type { VerifiedToken } from './jwt.js';

/**
 * Revoked tokens, kept in the database so that every server instance sees
 * them: one token by its `jti`, or every token a user was issued up to a
 * moment. Each server reads the lists every few seconds, so a revocation
 * takes effect within that interval without a query per request.
 */
export const REVOCATION_TABLES = [
  `create table if not exists xmlrest_revoked_token (
    backend varchar(64) not null,
    jti varchar(64) character set ascii collate ascii_bin not null,
    expires_on timestamp not null,
    primary key (backend, jti)
  ) engine = InnoDB`,
  `create table if not exists xmlrest_revoked_user (
    backend varchar(64) not null,
    sub varchar(190) not null,
    revoked_before timestamp not null,
    primary key (backend, sub)
  ) engine = InnoDB`,
  // Lists of users whose remembered logins servers had to forget: a remembered login now says only that a
  // password is right for a stored value, so a change of the user's roles or password needs no forgetting.
  'drop table if exists xmlrest_user_change',
  'drop table if exists xmlrest_credential_change',
];

/**
 * How far back each poll reads sessions ended before its last read began: `ended_on` has whole seconds, a session
 * ended in the second of that read may commit after it, and the servers of a Galera cluster read each their own clock.
 */
const ENDED_OVERLAP_SECONDS = 10;

/** A local mark (this server's own end or revoke) stays until a read begun after it has seen its row. */
interface LocalMark {
  backend: string;
  jti: string;
  markedAt: number;
}

/** A lasting failure to end grants is logged again this often. */
const GRANTS_WARN_EVERY_MS = 5 * 60_000;

/** A session ended, as the poll reads it. */
type SessionEnd = { backend: string; sid: string; until: number | string };

/** All a revocation needs: one statement. */
type Writer = { write(sql: string, values: readonly unknown[]): Promise<unknown> };

export class Revocations {
  /** Revoked jti by backend. */
  private tokens = new Map<string, Set<string>>();
  /** By backend (`*` for every backend), then user id: tokens issued up to this second are revoked. */
  private users = new Map<string, Map<string, number>>();
  /**
   * Ended sessions by backend (docs/internals/contract.md §10): every token of one is refused, until its `tokens_until`
   * (Unix ms). Kept from poll to poll: each poll reads only the sessions ended since the last one began.
   */
  private sessions = new Map<string, Map<string, number>>();
  /** The database's clock when the last read of ended sessions began (Unix seconds); undefined until one has. */
  private sessionsReadAt: number | undefined;
  /** Tokens this server revoked itself, refused from that moment, whatever a read under way had begun with. */
  private localTokens: LocalMark[] = [];
  /** A read asked for while one is under way: it begins once that one ends (refresh()). */
  private queued: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Set for the moment the next grant ends (grants.ts), when that comes before the next poll. */
  private grantTimer: NodeJS.Timeout | undefined;
  private intervalMs = 0;
  private warned = false;
  /** When "cannot end grants" was last said: again every `warnEveryMs` while it lasts, never once and then silence. */
  private grantsWarnedAt = -Infinity;
  private reading: Promise<void> | undefined;
  /**
   * Whether a grant that ends may be in the role table: false only once a read of it has found none (grants.ts).
   * A token request's own SQL (shape B) then skips its read of the user's temporary grants, the one read that made
   * a token request 25% slower on a server where no grant ends. A grant made temporary since the last read (at most
   * one poll ago) is not known here, so a token issued meanwhile is not capped by it: its end, a delete whose
   * trigger revokes every token its user holds, still stops it on every server within a poll, as it stops
   * every other credential.
   */
  private grantsEnd = true;

  constructor(
    private readonly db: Queryable,
    private readonly logger: Logger,
    /** How often a lasting failure to end grants is said again (a test says it at every read). */
    private readonly warnEveryMs = GRANTS_WARN_EVERY_MS,
  ) {}

  /** Reads the lists now and then every `intervalMs`. */
  start(intervalMs: number): Promise<void> {
    this.intervalMs = intervalMs;
    this.timer = setInterval(() => void this.refresh(), intervalMs);
    this.timer.unref();
    return this.refresh();
  }

  stop(): void {
    clearInterval(this.timer);
    clearTimeout(this.grantTimer);
    this.intervalMs = 0;
  }

  /**
   * Reads the lists; the promise ends with a read begun after the call. A caller that changed a list (the console)
   * must not be answered by a read that began before its change: it waits for the next one. A slow database never
   * stacks reads (at most one waits), nor lets an older answer overwrite a newer one.
   */
  refresh(): Promise<void> {
    if (this.reading === undefined) {
      this.reading = this.read().finally(() => (this.reading = undefined));
      return this.reading;
    }
    this.queued ??= this.reading.then(() => {
      this.queued = undefined;
      return this.refresh();
    });
    return this.queued;
  }

  /** Sessions this server has just ended: refused here from this moment (every other server within its poll). */
  endedHere(backend: string, sids: readonly string[], untilSeconds: number): void {
    this.addSessions(backend, sids, untilSeconds * 1000);
  }

  /** A token this server has just revoked (its row written): refused here from this moment. */
  revokedHere(backend: string, jti: string): void {
    this.localTokens.push({ backend, jti, markedAt: Date.now() });
    let set = this.tokens.get(backend);
    if (!set) this.tokens.set(backend, (set = new Set()));
    set.add(jti);
  }

  private async read(): Promise<void> {
    const began = Date.now();
    // Grants whose end has come are deleted first (their trigger revokes the user's tokens), so that this very
    // read sees the revocation: an ended grant stops admitting as a revoke does.
    await this.endGrants();
    try {
      const tokens = await this.optional<{ backend: string; jti: string }>('select backend, jti from xmlrest_revoked_token where expires_on > now()');
      const users = await this.optional<{ backend: string; sub: string; before: number | string }>(
        'select backend, sub, unix_timestamp(revoked_before) as `before` from xmlrest_revoked_user',
      );
      await this.readEndedSessions();
      this.tokens = new Map();
      // A mark this server made after this read began may be missing from its rows: kept until a later read.
      this.localTokens = this.localTokens.filter((mark) => mark.markedAt >= began);
      for (const row of [...(tokens ?? []), ...this.localTokens]) {
        let set = this.tokens.get(row.backend);
        if (!set) this.tokens.set(row.backend, (set = new Set()));
        set.add(row.jti);
      }
      this.users = new Map();
      for (const row of users ?? []) {
        let byUser = this.users.get(row.backend);
        if (!byUser) this.users.set(row.backend, (byUser = new Map()));
        byUser.set(row.sub, Number(row.before));
      }
    } catch (error) {
      if (!this.warned) this.logger.warn({ error: (error as Error).message }, 'cannot read token revocations; keeping the last lists');
      this.warned = true;
    }
  }

  /**
   * Adds the sessions ended since the last read began (all those whose tokens may still come, the first time), and
   * forgets those whose tokens have all expired: a poll reads what changed, not every session ended this hour.
   */
  private async readEndedSessions(): Promise<void> {
    const [clock] = await this.db.select<{ now: number | string }>('select unix_timestamp(now()) as now', []);
    const now = Number(clock!.now);
    // An ended session is listed until the last access token it may have issued expires (sessions.ts).
    const rows =
      this.sessionsReadAt === undefined
        ? await this.optional<SessionEnd>('select backend, sid, unix_timestamp(tokens_until) as until from xmlrest_session where tokens_until > now()')
        : await this.optional<SessionEnd>(
            'select backend, sid, unix_timestamp(tokens_until) as until from xmlrest_session where ended_on >= from_unixtime(?) and tokens_until > now()',
            [this.sessionsReadAt - ENDED_OVERLAP_SECONDS],
          );
    if (rows === undefined) return;
    this.sessionsReadAt = now;
    for (const row of rows) this.addSessions(row.backend, [row.sid], Number(row.until) * 1000);
    // Forgotten a minute after the database said their tokens end: a server's clock may run behind it.
    const gone = Date.now() - 60_000;
    for (const [backend, ended] of this.sessions) {
      for (const [sid, until] of ended) if (until < gone) ended.delete(sid);
      if (ended.size === 0) this.sessions.delete(backend);
    }
  }

  private addSessions(backend: string, sids: readonly string[], untilMs: number): void {
    let ended = this.sessions.get(backend);
    if (!ended) this.sessions.set(backend, (ended = new Map()));
    for (const sid of sids) ended.set(sid, Math.max(ended.get(sid) ?? 0, untilMs));
  }

  /** Ends the grants due now, and sets a timer for the next end when it comes before the next poll. */
  private async endGrants(): Promise<void> {
    let wait: number | undefined;
    try {
      wait = await endDueGrants(this.db);
    } catch (error) {
      this.grantsEnd = true;
      // An ended grant that stays in the table keeps admitting wherever a query reads it without its end (a token
      // request's own SQL, an AuthQuery of your own) and its holder's tokens are not revoked: said until it is fixed.
      if (Date.now() - this.grantsWarnedAt >= this.warnEveryMs) {
        this.grantsWarnedAt = Date.now();
        this.logger.warn(
          { error: (error as Error).message },
          'cannot end grants whose time has come (the server deletes them from usr_role: it needs DELETE there, and the tables of xmlrest db init); trying again at every poll',
        );
      }
      return;
    }
    this.grantsWarnedAt = -Infinity;
    this.grantsEnd = wait !== undefined;
    clearTimeout(this.grantTimer);
    this.grantTimer = undefined;
    if (wait !== undefined && this.intervalMs > 0 && wait < this.intervalMs) {
      // A few milliseconds late rather than early: the database's clock decides, to the second.
      // After any read under way (which may have begun before this end came), a read of its own.
      this.grantTimer = setTimeout(() => void (this.reading ?? Promise.resolve()).then(() => this.refresh()), wait + 5);
      this.grantTimer.unref();
    }
  }

  /**
   * A list's rows, or undefined when its table is not there (`xmlrest db init` has not made it: nothing is revoked)
   * or is of an earlier version: one list the database cannot give never keeps the server from reading the others.
   */
  private async optional<Row>(sql: string, values: readonly unknown[] = []): Promise<Row[] | undefined> {
    try {
      return await this.db.select<Row>(sql, values);
    } catch (error) {
      // No table: `xmlrest db init` has not run, so nothing is revoked. No column: a table of an earlier version.
      const errno = errnoOf(error);
      if (errno === NO_TABLE) return undefined;
      if (errno === NO_COLUMN) {
        if (!this.warned) this.logger.warn({ error: (error as Error).message }, 'a revocation table is of an earlier version: run xmlrest db init');
        this.warned = true;
        return undefined;
      }
      throw error;
    }
  }

  /** False once a read has found no grant that ends, until one finds some (or cannot tell). */
  get someGrantEnds(): boolean {
    return this.grantsEnd;
  }

  /**
   * Whether every credential `sub` held on `backend` up to `atMs` is revoked (`xmlrest token revoke`, a tenant's
   * change): what was read of the user then, a remembered tenant (credentials.ts), is read again.
   */
  isUserRevokedSince(backend: string, sub: string, defaultTables: boolean, atMs: number): boolean {
    const everyBackend = defaultTables ? (this.users.get('*')?.get(sub) ?? -Infinity) : -Infinity;
    const before = Math.max(this.users.get(backend)?.get(sub) ?? -Infinity, everyBackend);
    return before !== -Infinity && Math.floor(atMs / 1000) <= before;
  }

  isRevoked(backend: string, token: VerifiedToken, defaultTables: boolean): boolean {
    if (token.jti !== undefined && this.tokens.get(backend)?.has(token.jti)) return true;
    if (token.sid !== undefined && this.sessions.get(backend)?.has(token.sid)) return true;
    // `*`: every backend of the default user tables (a role revoked there, which each of them reads). A backend with
    // its own AuthQuery has users of its own: its user 5 is not usr's, whose revocation must not end theirs.
    const everyBackend = defaultTables ? (this.users.get('*')?.get(token.sub) ?? -Infinity) : -Infinity;
    const before = Math.max(this.users.get(backend)?.get(token.sub) ?? -Infinity, everyBackend);
    return before !== -Infinity && (token.iat === undefined || token.iat <= before);
  }
}

/** Revokes one token by its jti, remembered until `expiresOn` (seconds), after which it is refused anyway. */
export async function revokeToken(db: Writer, backend: string, jti: string, expiresOn: number): Promise<void> {
  await db.write('replace into xmlrest_revoked_token (backend, jti, expires_on) values (?, ?, from_unixtime(?))', [backend, jti, expiresOn]);
}

/** Revokes every token issued to `sub` up to now. */
export async function revokeUserTokens(db: Writer, backend: string, sub: string): Promise<void> {
  await db.write('replace into xmlrest_revoked_user (backend, sub, revoked_before) values (?, ?, now())', [backend, sub]);
}
