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

/** Where failure counts live. `failures` answers 0 for a window that has ended. */
export interface FailureStore {
  failures(key: string): Promise<{ failures: number; resetAt: number }>;
  add(key: string, windowSeconds: number): Promise<void>;
  clear(key: string): Promise<void>;
}

/** Most counters kept in memory; the oldest go first, so a flood of names cannot exhaust it. */
const MAX_COUNTERS = 100_000;

export class MemoryFailureStore implements FailureStore {
  private readonly counters = new Map<string, { failures: number; resetAt: number }>();

  async failures(key: string): Promise<{ failures: number; resetAt: number }> {
    const counter = this.counters.get(key);
    if (!counter || counter.resetAt <= Date.now()) return { failures: 0, resetAt: 0 };
    return counter;
  }

  async add(key: string, windowSeconds: number): Promise<void> {
    const counter = this.counters.get(key);
    if (counter && counter.resetAt > Date.now()) {
      counter.failures++;
      return;
    }
    this.counters.delete(key);
    if (this.counters.size >= MAX_COUNTERS) this.counters.delete(this.counters.keys().next().value!);
    this.counters.set(key, { failures: 1, resetAt: Date.now() + windowSeconds * 1000 });
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

  async failures(key: string): Promise<{ failures: number; resetAt: number }> {
    const [row] = await this.db.select<{ failures: number; resetAt: number | string }>(
      'select failures, unix_timestamp(reset_at) * 1000 as resetAt from xmlrest_login_failure where counter = ? and reset_at > now(3)',
      [key],
    );
    return row ? { failures: Number(row.failures), resetAt: Number(row.resetAt) } : { failures: 0, resetAt: 0 };
  }

  async add(key: string, windowSeconds: number): Promise<void> {
    // One statement, so that two servers counting at once both count.
    await this.db.write(
      `insert into xmlrest_login_failure (counter, failures, reset_at) values (?, 1, now(3) + interval ? second)
       on duplicate key update
         failures = if(reset_at > now(3), failures + 1, 1),
         reset_at = if(reset_at > now(3), reset_at, now(3) + interval ? second)`,
      [key, windowSeconds, windowSeconds],
    );
  }

  async clear(key: string): Promise<void> {
    await this.db.write('delete from xmlrest_login_failure where counter = ?', [key]);
  }
}

export class LoginLimiter {
  constructor(
    private readonly limits: LoginLimits = DEFAULT_LOGIN_LIMITS,
    private readonly store: FailureStore = new MemoryFailureStore(),
  ) {}

  /** Throws 429 when this user name or address has failed too often; a user name may be unknown (undefined). */
  async check(user: string | undefined, address: string): Promise<void> {
    const [byUser, byAddress] = await Promise.all([
      user === undefined || this.limits.perUser <= 0 ? { failures: 0, resetAt: 0 } : this.store.failures(`user\0${user}`),
      this.limits.perAddress <= 0 ? { failures: 0, resetAt: 0 } : this.store.failures(`address\0${address}`),
    ]);
    const blockedUntil = Math.max(
      byUser.failures >= this.limits.perUser && this.limits.perUser > 0 ? byUser.resetAt : 0,
      byAddress.failures >= this.limits.perAddress && this.limits.perAddress > 0 ? byAddress.resetAt : 0,
    );
    const now = Date.now();
    if (blockedUntil > now) {
      throw new HttpError(429, 'Too many failed logins: try again later', { 'Retry-After': String(Math.ceil((blockedUntil - now) / 1000)) });
    }
  }

  async failed(user: string | undefined, address: string): Promise<void> {
    await Promise.all([
      user === undefined || this.limits.perUser <= 0 ? undefined : this.store.add(`user\0${user}`, this.limits.windowSeconds),
      this.limits.perAddress <= 0 ? undefined : this.store.add(`address\0${address}`, this.limits.windowSeconds),
    ]);
  }

  /** A right password clears that user's count (not the address's: one address may guess for many users). */
  async succeeded(user: string): Promise<void> {
    if (this.limits.perUser > 0) await this.store.clear(`user\0${user}`);
  }
}
