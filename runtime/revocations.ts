import type { Queryable } from './db.js';
import type { VerifiedToken } from './jwt.js';
import type { Logger } from './log.js';

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
  // Users whose password or roles xmlrest changed: every server forgets its remembered password checks of them.
  `create table if not exists xmlrest_credential_change (
    id bigint unsigned not null auto_increment primary key,
    user_name varchar(190) character set utf8mb4 collate utf8mb4_nopad_bin not null,
    changed_on timestamp not null default current_timestamp
  ) engine = InnoDB`,
];

const NO_TABLE = 1146; // ER_NO_SUCH_TABLE: `xmlrest db init` has not run, so nothing is revoked.

/** All a revocation needs: one statement. */
type Writer = { write(sql: string, values: readonly unknown[]): Promise<unknown> };

export class Revocations {
  private tokens = new Set<string>();
  private users = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private warned = false;
  /** The last credential change seen; undefined until the first read, which only learns where the list ends. */
  private lastChange: number | undefined;
  private reading: Promise<void> | undefined;

  constructor(
    private readonly db: Queryable,
    private readonly logger: Logger,
    /** Called with each user whose password or roles changed since the last read. */
    private readonly onCredentialChange: (user: string) => void = () => {},
  ) {}

  /** Reads the lists now and then every `intervalMs`. */
  start(intervalMs: number): Promise<void> {
    this.timer = setInterval(() => void this.refresh(), intervalMs);
    this.timer.unref();
    return this.refresh();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  async refresh(): Promise<void> {
    // A slow database must not stack reads, nor let an older answer overwrite a newer one.
    if (this.reading) return this.reading;
    this.reading = this.read().finally(() => (this.reading = undefined));
    return this.reading;
  }

  private async read(): Promise<void> {
    try {
      const tokens = await this.db.select<{ backend: string; jti: string }>('select backend, jti from xmlrest_revoked_token where expires_on > now()', []);
      const users = await this.db.select<{ backend: string; sub: string; before: number | string }>(
        'select backend, sub, unix_timestamp(revoked_before) as `before` from xmlrest_revoked_user',
        [],
      );
      this.tokens = new Set(tokens.map((row) => `${row.backend}\0${row.jti}`));
      this.users = new Map(users.map((row) => [`${row.backend}\0${row.sub}`, Number(row.before)]));
      const changes = await this.db.select<{ id: number | string; user_name: string }>(
        this.lastChange === undefined ? 'select coalesce(max(id), 0) as id, null as user_name from xmlrest_credential_change' : 'select id, user_name from xmlrest_credential_change where id > ? order by id',
        this.lastChange === undefined ? [] : [this.lastChange],
      );
      if (this.lastChange !== undefined) for (const change of changes) this.onCredentialChange(change.user_name);
      this.lastChange = Number(changes.at(-1)?.id ?? this.lastChange ?? 0);
    } catch (error) {
      if ((error as { errno?: number }).errno === NO_TABLE) return;
      if (!this.warned) this.logger.warn('cannot read token revocations; keeping the last lists', { error: (error as Error).message });
      this.warned = true;
    }
  }

  isRevoked(backend: string, token: VerifiedToken): boolean {
    if (token.jti !== undefined && this.tokens.has(`${backend}\0${token.jti}`)) return true;
    // `*`: every backend (a role revoked by `xmlrest role revoke`, which knows no backend).
    const before = Math.max(this.users.get(`${backend}\0${token.sub}`) ?? -Infinity, this.users.get(`*\0${token.sub}`) ?? -Infinity);
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

/** Tells every server to forget its remembered password checks of `user` (their password or roles changed). */
export async function recordCredentialChange(db: Writer, user: string): Promise<void> {
  await db.write('insert into xmlrest_credential_change (user_name) values (?)', [user]);
  await db.write('delete from xmlrest_credential_change where changed_on < now() - interval 1 day', []);
}
