import { HttpError } from '../errors.js';
import { addressGroup } from './address.js';
import { digestKey } from './keys.js';

/**
 * Failed-login limits (OWASP API2): after `perUser` failed password checks
 * for one user name from one client, or `perAddress` from one client
 * whatever the names, within `windowSeconds`, further attempts from that
 * client answer 429 with Retry-After until the window ends, even with the
 * right password. A client is an address, an IPv6 one by its /64
 * (address.ts). The user signing in from anywhere else is never stopped: an
 * attacker's failures cannot lock the real user out. Guesses spread over many
 * clients are slowed instead: once a user name has failed `perUser` times
 * from all clients together, each further check of it waits, twice as long
 * each time from BACKOFF_BASE_MS up to `backoffMaxMs`, and then goes on. The
 * counters live in this process by default; servers behind one load balancer
 * can share them in the database (LOGIN_COUNTERS=database).
 */
export interface LoginLimits {
  perUser: number;
  perAddress: number;
  windowSeconds: number;
  /** Longest wait before a check of a user name that failed often (0: no backoff); default 3 s. */
  backoffMaxMs?: number;
  /**
   * Token requests that begin a session, per user of a backend within `windowSeconds`, right password or not (0: no
   * limit); default 60. Each one is a row every server may list for an hour once ended (docs/contract.md §10).
   */
  sessionsPerUser?: number;
}

export const DEFAULT_LOGIN_LIMITS: LoginLimits = { perUser: 10, perAddress: 50, windowSeconds: 300, backoffMaxMs: 3000, sessionsPerUser: 60 };

/** The first wait of the backoff, doubled with each further failure of the name. */
export const BACKOFF_BASE_MS = 250;

/**
 * Where attempt counts live: `add` counts one and answers the count and when its window ends, at once.
 * The memory store answers without a promise (every login goes through here); the database's with one.
 */
export interface FailureStore {
  add(key: string, windowSeconds: number): Counted | Promise<Counted>;
  /** Takes back one count (a check that turned out right). */
  subtract(key: string): void | Promise<void>;
  clear(key: string): void | Promise<void>;
}

interface Counted {
  failures: number;
  resetAt: number;
}

/** Most counters kept in memory; the oldest go first, so a flood of names cannot exhaust it (about 15 MB). */
const MAX_COUNTERS = 100_000;

export class MemoryFailureStore implements FailureStore {
  private readonly counters = new Map<string, { failures: number; resetAt: number }>();

  add(key: string, windowSeconds: number): Counted {
    // Nothing asynchronous before the count: two requests cannot both read the old one.
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

  subtract(key: string): void {
    const counter = this.counters.get(key);
    if (counter && counter.failures > 0) counter.failures--;
  }

  clear(key: string): void {
    this.counters.delete(key);
  }
}

/** Counters are keyed by a digest (keys.ts): 43 characters whatever the user name. */
export const LOGIN_FAILURE_TABLE = `create table if not exists xmlrest_login_failure (
  counter varchar(64) character set ascii collate ascii_bin not null primary key,
  failures int unsigned not null,
  reset_at timestamp(3) not null
) engine = InnoDB`;

/** Counters every server of a setup shares, in xmlrest_login_failure (created by `xmlrest db init`). */
export class DatabaseFailureStore implements FailureStore {
  private prunedAt = 0;

  constructor(
    private readonly db: {
      select<Row>(sql: string, values: readonly unknown[]): Promise<Row[]>;
      write(sql: string, values: readonly unknown[]): Promise<unknown>;
    },
  ) {}

  async add(key: string, windowSeconds: number): Promise<{ failures: number; resetAt: number }> {
    // Counters whose window ended are dead rows: each server clears some, at most once a minute, so that
    // a flood of names or addresses does not grow the table without end.
    if (Date.now() - this.prunedAt > 60_000) {
      this.prunedAt = Date.now();
      await this.db.write('delete from xmlrest_login_failure where reset_at < now(3) limit 10000', []);
    }
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

/** One password check: against which user tables, for which user name (when the request named one), from where. */
export interface LoginAttempt {
  /** The user tables the name is looked up in (backends reading the same tables count together). */
  directory: string;
  user: string | undefined;
  address: string;
  /** Its counters' keys, once made (a check's begin and end share them). */
  keys?: AttemptKeys;
}

interface AttemptKeys {
  /** The user name from this client. */
  account: string | undefined;
  /** This client, whatever the name. */
  address: string | undefined;
  /** The user name from every client: the backoff's count. */
  name: string | undefined;
}

/**
 * A password check is counted as a failure only once it failed. To keep
 * concurrent guesses from all slipping past the limit before any of them has
 * failed, each check holds its place in the count while it runs (`begin`) and
 * gives it back when its password was right (`succeeded`).
 */
export class LoginLimiter {
  private readonly addressKeys = new Map<string, string>();

  constructor(
    private readonly limits: LoginLimits = DEFAULT_LOGIN_LIMITS,
    private readonly store: FailureStore = new MemoryFailureStore(),
  ) {}

  /**
   * Holds a place for this attempt; throws 429 when its client, or its user name from that client, is over the
   * limit; then waits as long as the name's backoff asks. With the memory store and no backoff due it answers at
   * once, without a promise (every login passes here); await it.
   */
  begin(attempt: LoginAttempt): void | Promise<void> {
    const { account, address, name } = this.keys(attempt);
    const { perAddress, perUser, windowSeconds } = this.limits;
    // The address first: an address over its limit leaves nothing behind for the names it sends.
    return then(address === undefined ? undefined : this.store.add(address, windowSeconds), (byAddress) => {
      if (byAddress && byAddress.failures > perAddress) return then(this.store.subtract(address!), () => refuse(byAddress));
      return then(account === undefined ? undefined : this.store.add(account, windowSeconds), (byAccount) => {
        if (byAccount && byAccount.failures > perUser) {
          // A refused attempt checked no password: its places are given back.
          return then(both(this.store.subtract(account!), address === undefined ? undefined : this.store.subtract(address)), () => refuse(byAccount));
        }
        return name === undefined ? undefined : then(this.store.add(name, windowSeconds), (byName) => pause(this.backoffMs(byName.failures - 1)));
      });
    });
  }

  /** The password was right: the user name's count at this client starts over, the other places are given back. */
  succeeded(attempt: LoginAttempt): void | Promise<void> {
    const { account, address, name } = this.keys(attempt);
    return all([account === undefined ? undefined : this.store.clear(account), this.giveBack(address), this.giveBack(name)]);
  }

  /** No password was checked after all (the database failed, or the hashing was too busy): the attempt's places are given back. */
  cancelled(attempt: LoginAttempt): void | Promise<void> {
    const { account, address, name } = this.keys(attempt);
    return all([this.giveBack(account), this.giveBack(address), this.giveBack(name)]);
  }

  /**
   * A token request that begins a session for this user of this backend (sessions.ts): counted, and 429 past
   * `sessionsPerUser` in the window. Counted once the user is known, after the password: an outsider's guesses are
   * the login limits' business.
   */
  sessionBegun(backend: string, userId: string): void | Promise<void> {
    const { sessionsPerUser = DEFAULT_LOGIN_LIMITS.sessionsPerUser!, windowSeconds } = this.limits;
    if (sessionsPerUser <= 0) return;
    const key = digestKey('sessions', backend, userId);
    return then(this.store.add(key, windowSeconds), (counted) => {
      if (counted.failures > sessionsPerUser) return then(this.store.subtract(key), () => refuseSessions(counted));
    });
  }

  /** How long a check of a name waits after `failures` of it from every client: nothing below `perUser`, then doubling. */
  backoffMs(failures: number): number {
    const { perUser, backoffMaxMs = DEFAULT_LOGIN_LIMITS.backoffMaxMs! } = this.limits;
    if (perUser <= 0 || backoffMaxMs <= 0 || failures < perUser) return 0;
    return Math.min(backoffMaxMs, BACKOFF_BASE_MS * 2 ** Math.min(failures - perUser, 30));
  }

  private giveBack(key: string | undefined): void | Promise<void> {
    return key === undefined ? undefined : this.store.subtract(key);
  }

  private keys(attempt: LoginAttempt): AttemptKeys {
    if (attempt.keys !== undefined) return attempt.keys;
    const { perUser, perAddress, backoffMaxMs = DEFAULT_LOGIN_LIMITS.backoffMaxMs! } = this.limits;
    const named = attempt.user !== undefined && perUser > 0;
    attempt.keys = {
      account: named ? digestKey('account', attempt.directory, attempt.user!, addressGroup(attempt.address)) : undefined,
      address: perAddress <= 0 ? undefined : this.addressKey(attempt.address),
      name: named && backoffMaxMs > 0 ? digestKey('name', attempt.directory, attempt.user!) : undefined,
    };
    return attempt.keys;
  }

  /**
   * A client's counter key, remembered by its address: a client signs in from the same address again and again,
   * and a SHA-256 per login was a measurable part of issuing a token. At most ADDRESS_KEYS are kept, all
   * forgotten at once when full, so that a flood of addresses costs bounded memory and only the digests it would
   * cost anyway; an address longer than any IP address's text (from a proxy's header) is never kept.
   */
  private addressKey(address: string): string {
    if (address.length > LONGEST_ADDRESS) return digestKey('address', address);
    let key = this.addressKeys.get(address);
    if (key === undefined) {
      if (this.addressKeys.size >= ADDRESS_KEYS) this.addressKeys.clear();
      key = digestKey('address', addressGroup(address));
      this.addressKeys.set(address, key);
    }
    return key;
  }
}

/** Most address keys a limiter remembers (about 2 MB). */
const ADDRESS_KEYS = 10_000;
/** An IPv6 address with an IPv4 tail and a zone is at most about 60 characters. */
const LONGEST_ADDRESS = 64;

type Maybe<T> = T | Promise<T>;

/** `next(value)` at once when the store answered at once, else when its promise does: no promise where none is needed. */
function then<T, U>(value: Maybe<T>, next: (value: T) => Maybe<U>): Maybe<U> {
  return value instanceof Promise ? value.then(next) : next(value);
}

/** Both writes done; no promise to wait on when the store answered at once (the memory store always does). */
function both(first: void | Promise<void>, second: void | Promise<void>): void | Promise<void> {
  return all([first, second]);
}

function all(writes: (void | Promise<void>)[]): void | Promise<void> {
  if (writes.some((write) => write instanceof Promise)) return Promise.all(writes).then(() => undefined);
}

/** Waits `ms`; no promise at all for no wait. */
function pause(ms: number): void | Promise<void> {
  if (ms > 0) return new Promise((resolve) => setTimeout(resolve, ms));
}

function refuse(counted: Counted): never {
  throw tooMany(counted.resetAt);
}

function refuseSessions(counted: Counted): never {
  throw new HttpError(
    429,
    'Too many sign-ins for this user: try again later',
    { 'Retry-After': String(Math.max(1, Math.ceil((counted.resetAt - Date.now()) / 1000))) },
    'too_many_sessions',
  );
}

function tooMany(resetAt: number): HttpError {
  return new HttpError(
    429,
    'Too many failed logins: try again later',
    { 'Retry-After': String(Math.max(1, Math.ceil((resetAt - Date.now()) / 1000))) },
    'rate_limited',
  );
}
