import { HttpError } from './errors.js';

/**
 * Failed-login limits (OWASP API2): after `perUser` failed password checks
 * for one user name, or `perAddress` from one client address, within
 * `windowSeconds`, further attempts answer 429 with Retry-After until the
 * window ends, even with the right password. The counters live in this
 * process by default; servers behind one load balancer can share them in the
 * database (LOGIN_COUNTERS=database), so that each does not count alone.
 */
export interface LoginLimits {
  perUser: number;
  perAddress: number;
  windowSeconds: number;
}

export const DEFAULT_LOGIN_LIMITS: LoginLimits = { perUser: 10, perAddress: 50, windowSeconds: 300 };

/** Where attempt counts live: `add` counts one and answers the count and when its window ends, at once. */
export interface FailureStore {
  add(key: string, windowSeconds: number): Promise<{ failures: number; resetAt: number }>;
  /** Takes back one count (a check that turned out right). */
  subtract(key: string): Promise<void>;
  clear(key: string): Promise<void>;
}

/** Most counters kept in memory; the oldest go first, so a flood of names cannot exhaust it. */
const MAX_COUNTERS = 100_000;

export class MemoryFailureStore implements FailureStore {
  private readonly counters = new Map<string, { failures: number; resetAt: number }>();

  async add(key: string, windowSeconds: number): Promise<{ failures: number; resetAt: number }> {
    // No await before the count: two requests cannot both read the old one.
    let counter = this.counters.get(key);
    if (!counter || counter.resetAt <= Date.now()) {
      this.counters.delete(key);
      if (this.counters.size >= MAX_COUNTERS) this.counters.delete(this.counters.keys().next().value!);
      counter = { failures: 0, resetAt: Date.now() + windowSeconds * 1000 };
      this.counters.set(key, counter);
    }
    counter.failures++;
    return { ...counter };
  }

  async subtract(key: string): Promise<void> {
    const counter = this.counters.get(key);
    if (counter && counter.failures > 0) counter.failures--;
  }

  async clear(key: string): Promise<void> {
    this.counters.delete(key);
  }
}

export const LOGIN_FAILURE_TABLE = `create table if not exists xmlrest_login_failure (
  counter varchar(255) character set utf8mb4 collate utf8mb4_nopad_bin not null primary key,
  failures int unsigned not null,
  reset_at timestamp(3) not null
) engine = InnoDB`;

/** Counters every server of a setup shares, in xmlrest_login_failure (created by `xmlrest db init`). */
export class DatabaseFailureStore implements FailureStore {
  constructor(private readonly db: { select<Row>(sql: string, values: readonly unknown[]): Promise<Row[]>; write(sql: string, values: readonly unknown[]): Promise<unknown> }) {}

  async add(key: string, windowSeconds: number): Promise<{ failures: number; resetAt: number }> {
    // One statement counts, so that two servers counting at once both count; then read what it made.
    await this.db.write(
      `insert into xmlrest_login_failure (counter, failures, reset_at) values (?, 1, now(3) + interval ? second)
       on duplicate key update
         failures = if(reset_at > now(3), failures + 1, 1),
         reset_at = if(reset_at > now(3), reset_at, now(3) + interval ? second)`,
      [key, windowSeconds, windowSeconds],
    );
    const [row] = await this.db.select<{ failures: number; resetAt: number | string }>(
      'select failures, unix_timestamp(reset_at) * 1000 as resetAt from xmlrest_login_failure where counter = ?',
      [key],
    );
    return row ? { failures: Number(row.failures), resetAt: Number(row.resetAt) } : { failures: 1, resetAt: Date.now() + windowSeconds * 1000 };
  }

  async subtract(key: string): Promise<void> {
    await this.db.write('update xmlrest_login_failure set failures = greatest(cast(failures as signed) - 1, 0) where counter = ?', [key]);
  }

  async clear(key: string): Promise<void> {
    await this.db.write('delete from xmlrest_login_failure where counter = ?', [key]);
  }
}

/**
 * Every password check is counted before it runs, in one step that also
 * answers the count, and taken back when it was right: so concurrent guesses
 * cannot all slip between a check and a count.
 */
export class LoginLimiter {
  constructor(
    private readonly limits: LoginLimits = DEFAULT_LOGIN_LIMITS,
    private readonly store: FailureStore = new MemoryFailureStore(),
  ) {}

  /** Counts an attempt for this user name (when known) and address; throws 429 past a limit. */
  async begin(user: string | undefined, address: string): Promise<void> {
    const [byUser, byAddress] = await Promise.all([
      user === undefined || this.limits.perUser <= 0 ? undefined : this.store.add(`user\0${user}`, this.limits.windowSeconds),
      this.limits.perAddress <= 0 ? undefined : this.store.add(`address\0${address}`, this.limits.windowSeconds),
    ]);
    const blockedUntil = Math.max(
      byUser && byUser.failures > this.limits.perUser ? byUser.resetAt : 0,
      byAddress && byAddress.failures > this.limits.perAddress ? byAddress.resetAt : 0,
    );
    const now = Date.now();
    if (blockedUntil > now) {
      // A refused attempt checked no password: it is not counted.
      await Promise.all([
        byUser ? this.store.subtract(`user\0${user}`) : undefined,
        byAddress ? this.store.subtract(`address\0${address}`) : undefined,
      ]);
      throw new HttpError(429, 'Too many failed logins: try again later', { 'Retry-After': String(Math.ceil((blockedUntil - now) / 1000)) });
    }
  }

  /** The attempt was right: the user's count starts over, the address's attempt is taken back. */
  async succeeded(user: string | undefined, address: string): Promise<void> {
    await Promise.all([
      user === undefined || this.limits.perUser <= 0 ? undefined : this.store.clear(`user\0${user}`),
      this.limits.perAddress <= 0 ? undefined : this.store.subtract(`address\0${address}`),
    ]);
  }
}
