/**
 * Where the login limiter (limiter.ts) keeps its counts, per counter key: the
 * failed password checks in the key's window, and apart from them the places
 * held by checks still running, which are no failures (issue 39: correct
 * logins fired together were counted as failures while they ran). The memory
 * store answers without a promise (every login goes through here); the
 * database's with one, and its places are seen by every server.
 */
export interface FailureStore {
  /** Takes a place for one check of `key`; answers the key's failures, the places held (this one included), and when the failures' window ends. */
  hold(key: string, windowSeconds: number): Held | Promise<Held>;
  /** Gives a place back; `failed` counts the check's failure (the window begins at the key's first failure). */
  release(key: string, windowSeconds: number, failed: boolean): void | Promise<void>;
  /** Forgets the key's failures (the right password from this client); places held stay. Whether there were any, when known at once. */
  clear(key: string): boolean | Promise<void>;
  /** Places may be held by other processes too, which cannot wake this one's waiters: a wait looks again now and then. */
  readonly shared: boolean;
}

export interface Held {
  failures: number;
  held: number;
  resetAt: number;
}

/** Most failure counters kept in memory; the oldest go first, so a flood of names cannot exhaust it (about 15 MB). */
const MAX_COUNTERS = 100_000;

export class MemoryFailureStore implements FailureStore {
  readonly shared = false;
  private readonly counters = new Map<string, { failures: number; resetAt: number }>();
  /**
   * Places held, by key, only while some are: as many entries at most as checks are running, so this needs no
   * bound of its own, and no flood of other keys can push a held place out.
   */
  private readonly places = new Map<string, number>();

  hold(key: string, windowSeconds: number): Held {
    // Nothing asynchronous between the count and its answer: two checks cannot both read the old one.
    const held = (this.places.get(key) ?? 0) + 1;
    this.places.set(key, held);
    const counter = this.live(key);
    return { failures: counter?.failures ?? 0, held, resetAt: counter?.resetAt ?? Date.now() + windowSeconds * 1000 };
  }

  release(key: string, windowSeconds: number, failed: boolean): void {
    const held = this.places.get(key) ?? 0;
    if (held <= 1) this.places.delete(key);
    else this.places.set(key, held - 1);
    if (!failed) return;
    let counter = this.live(key);
    if (counter === undefined) {
      if (this.counters.size >= MAX_COUNTERS) this.counters.delete(this.counters.keys().next().value!);
      counter = { failures: 0, resetAt: Date.now() + windowSeconds * 1000 };
      this.counters.set(key, counter);
    }
    counter.failures++;
  }

  clear(key: string): boolean {
    return this.counters.delete(key);
  }

  /** The key's counter while its window lasts. */
  private live(key: string): { failures: number; resetAt: number } | undefined {
    const counter = this.counters.get(key);
    if (counter === undefined || counter.resetAt > Date.now()) return counter;
    this.counters.delete(key);
    return undefined;
  }
}

/** Counters are keyed by a digest (keys.ts): 43 characters whatever the user name; a key's places by `h:` and the key. */
export const LOGIN_FAILURE_TABLE = `create table if not exists xmlrest_login_failure (
  counter varchar(64) character set ascii collate ascii_bin not null primary key,
  failures int unsigned not null,
  reset_at timestamp(3) not null
) engine = InnoDB`;

/**
 * How long a key's places outlive the last one taken: a server that stopped mid-check never gives its places back,
 * and every check ends long before this (its statement and its hash are bounded in time).
 */
const PLACES_SECONDS = 60;

/**
 * Counts every server of a setup shares, in xmlrest_login_failure (created by `xmlrest db init`): a key's failures
 * in its row, the places held for it in a row of their own (`h:` and the key), so that the table is as it was.
 */
export class DatabaseFailureStore implements FailureStore {
  readonly shared = true;
  private prunedAt = 0;

  constructor(
    private readonly db: {
      select<Row>(sql: string, values: readonly unknown[]): Promise<Row[]>;
      write(sql: string, values: readonly unknown[]): Promise<unknown>;
    },
  ) {}

  async hold(key: string, windowSeconds: number): Promise<Held> {
    // Counters whose window ended are dead rows: each server clears some, at most once a minute, so that
    // a flood of names or addresses does not grow the table without end.
    if (Date.now() - this.prunedAt > 60_000) {
      this.prunedAt = Date.now();
      await this.db.write('delete from xmlrest_login_failure where reset_at < now(3) limit 10000', []);
    }
    // One statement takes the place, so that two servers taking one at once both count; then read what it made.
    await this.db.write(
      `insert into xmlrest_login_failure (counter, failures, reset_at) values (?, 1, now(3) + interval ${PLACES_SECONDS} second)
       on duplicate key update failures = if(reset_at > now(3), failures + 1, 1), reset_at = now(3) + interval ${PLACES_SECONDS} second`,
      [placesOf(key)],
    );
    const rows = await this.db.select<{ counter: string; failures: number; resetAt: number | string }>(
      'select counter, failures, unix_timestamp(reset_at) * 1000 as resetAt from xmlrest_login_failure where counter in (?, ?) and reset_at > now(3)',
      [key, placesOf(key)],
    );
    const failures = rows.find((row) => row.counter === key);
    const places = rows.find((row) => row.counter !== key);
    return {
      failures: Number(failures?.failures ?? 0),
      held: Math.max(1, Number(places?.failures ?? 1)),
      resetAt: failures ? Number(failures.resetAt) : Date.now() + windowSeconds * 1000,
    };
  }

  async release(key: string, windowSeconds: number, failed: boolean): Promise<void> {
    // The failure is counted before the place is given back, never beside it: another server's hold reads both rows,
    // and between a place given back and its failure not yet counted it would see one check too few and admit one
    // more than the limit (seen: 11 of 10 over two servers on a loaded machine).
    if (failed) {
      await this.db.write(
        `insert into xmlrest_login_failure (counter, failures, reset_at) values (?, 1, now(3) + interval ? second)
         on duplicate key update
           failures = if(reset_at > now(3), failures + 1, 1),
           reset_at = if(reset_at > now(3), reset_at, now(3) + interval ? second)`,
        [key, windowSeconds, windowSeconds],
      );
    }
    await this.db.write('update xmlrest_login_failure set failures = greatest(cast(failures as signed) - 1, 0) where counter = ?', [placesOf(key)]);
  }

  async clear(key: string): Promise<void> {
    await this.db.write('delete from xmlrest_login_failure where counter = ?', [key]);
  }
}

function placesOf(key: string): string {
  return `h:${key}`;
}
