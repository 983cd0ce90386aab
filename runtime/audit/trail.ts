// The trail: a write's row in its transaction, every other row queued and written in batches, repeated refusals
// counted, old rows pruned; apart from the table and the list, so that the queue reads in one sitting.
import { Counter, Gauge, type Registry } from 'prom-client';
import { addressGroup } from '../auth/limits/address.js';
import { type Database, faultOf, type Queryable } from '../db/index.js';
import { httpErrorFromDatabase } from '../errors.js';
import type { Chore } from '../housekeeping.js';
import type { Logger } from '../log.js';
import { type AuditEntry, insertEntries, tableMissing } from './table.js';

/** Rows waiting at most; past it, new rows are dropped (and counted). */
const MAX_QUEUED = 10_000;
/** The queue is written this often, in statements of at most BATCH rows (a power of two: a few statement texts). */
const FLUSH_MS = 200;
const BATCH = 256;
/** Refusals of callers without credentials, counted per address and route over this long (one row, then one for the rest). */
const REPEAT_WINDOW_MS = 60_000;
/** Addresses and routes counted at once at most; past it, refusals are rows of their own (the queue's bound holds). */
const MAX_COUNTED = 10_000;
/** What a caller without valid credentials is answered before anything runs: 401, 403, 429. */
const REFUSALS = new Set([401, 403, 429]);
/** Rows removed per backend and statement when pruning: a bounded delete, however far behind. */
const PRUNE_BATCH = 5000;

/** Repeated refusals of one address on one route within a window: the row that will say how many followed the first. */
interface Repeats {
  until: number;
  count: number;
  last: AuditEntry | undefined;
}

export class AuditTrail {
  private queue: AuditEntry[] = [];
  private readonly repeats = new Map<string, Repeats>();
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> | undefined;
  private readonly dropped: Counter;
  private readonly quietUntil = new Map<string, number>();

  constructor(
    private readonly db: Database,
    private readonly logger: Logger,
    registry: Registry,
    /** Rows older than this many days are pruned (AUDIT_RETENTION_DAYS). */
    private readonly retentionDays = 90,
  ) {
    const registers = [registry];
    this.dropped = new Counter({
      name: 'xmlrest_audit_rows_dropped_total',
      help: 'Audit rows dropped: too many waited for the database (it was down or too slow), or the database refused the row',
      registers,
    });
    const queue = () => this.queue.length;
    new Gauge({
      name: 'xmlrest_audit_rows_waiting',
      help: 'Audit rows of reads (and failed calls) waiting to be written',
      registers,
      collect() {
        this.set(queue());
      },
    });
    this.timer = setInterval(() => {
      this.closeWindows(Date.now());
      void this.flush();
    }, FLUSH_MS);
    this.timer.unref();
  }

  /** A successful write's row, in its transaction (`db`): the write fails (rolled back) when it cannot be written. */
  async writeIn(db: Queryable, entry: AuditEntry): Promise<void> {
    try {
      await insertEntries(db, [entry]);
    } catch (error) {
      if (!tableMissing(error)) throw error;
      throw new Error('the table xmlrest_api_audit is missing or made by an earlier version: run xmlrest db init', { cause: error });
    }
  }

  /** Any other call's row: queued, written within FLUSH_MS. Never waits, never throws. */
  record(entry: AuditEntry): void {
    if (entry.userId === null && REFUSALS.has(entry.status) && this.counted(entry)) return;
    this.enqueue(entry);
  }

  /** Writes the rows waiting now; none while a flush is under way (its rows are that flush's, the later ones the next's). */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing;
    if (this.queue.length === 0) return Promise.resolve();
    this.flushing = this.write(this.queue.length).finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  /** A graceful stop, before the pool closes: every row waiting is written, those queued during a flush under way too. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.closeWindows(Number.POSITIVE_INFINITY);
    await this.flushing;
    await this.flush();
  }

  /**
   * Removes rows older than the retention, at most PRUNE_BATCH of each backend's a tick (runtime/housekeeping.ts:
   * one server at a time).
   */
  pruning(): Chore {
    return {
      name: 'audit rows',
      everyMs: 60_000,
      run: async () => {
        // A loose index scan of (backend, at): one entry per backend, however many rows.
        const backends = await this.db.select<{ backend: string }>('select distinct backend from xmlrest_api_audit', []);
        let removed = 0;
        let more = false;
        for (const { backend } of backends) {
          const { affectedRows } = await this.db.write(
            `delete from xmlrest_api_audit where backend = ? and at < now(3) - interval ? day limit ${PRUNE_BATCH}`,
            [backend, this.retentionDays],
          );
          removed += affectedRows;
          more ||= affectedRows >= PRUNE_BATCH;
        }
        return { removed, more };
      },
    };
  }

  /** Whether this refusal is one more of its address and route in the current window (counted, not a row of its own). */
  private counted(entry: AuditEntry): boolean {
    const key = `${entry.backend} ${entry.resource} ${entry.version} ${entry.method} ${entry.status} ${addressGroup(entry.address)}`;
    const window = this.repeats.get(key);
    if (window === undefined) {
      // The first of a window is a row as any other.
      if (this.repeats.size < MAX_COUNTED) this.repeats.set(key, { until: Date.now() + REPEAT_WINDOW_MS, count: 0, last: undefined });
      return false;
    }
    window.count++;
    window.last = entry;
    return true;
  }

  /** Windows over by `now`: the refusals after the first, one row saying how many (the last one's time and request id). */
  private closeWindows(now: number): void {
    for (const [key, window] of this.repeats) {
      if (window.until > now) continue;
      this.repeats.delete(key);
      if (window.last !== undefined) this.enqueue({ ...window.last, repeats: window.count });
    }
  }

  private enqueue(entry: AuditEntry): void {
    if (this.queue.length >= MAX_QUEUED) {
      this.dropped.inc();
      this.warn(undefined, `audit rows dropped: ${MAX_QUEUED} wait already for the database`);
      return;
    }
    this.queue.push(entry);
  }

  /**
   * Writes the `count` rows at the queue's head: those that waited when the flush began. The rows queued while it
   * writes wait for the next flush rather than follow in inserts of their own: on a busy server a flush that
   * chased them wrote a stream of inserts of a few rows each (a round trip and a statement for every 8 rows of
   * a read a second, measured) where a few inserts of up to BATCH rows do.
   */
  private async write(count: number): Promise<void> {
    let left = count;
    while (left > 0 && this.queue.length > 0) {
      let size = BATCH;
      while (size > Math.min(left, this.queue.length)) size /= 2;
      const batch = this.queue.slice(0, size);
      try {
        await insertEntries(this.db, batch);
      } catch (error) {
        // The database is away or the table missing: kept for the next flush, the database may be back by then.
        if (!refusedValue(error)) {
          this.warn(error, 'cannot write audit rows: they wait (in memory, bounded) for the database');
          return;
        }
        // A value the database refuses: each row alone, the refused ones dropped, the others written (each taken
        // off the queue as it goes, so that a database gone meanwhile leaves no written row to be written twice).
        if (!(await this.oneByOne(batch))) return;
        left -= size;
        continue;
      }
      this.queue.splice(0, size);
      left -= size;
    }
  }

  /**
   * Writes `batch`, the queue's head, a row at a time, dropping the rows the database refuses, and takes each off
   * the queue once written or dropped; false when the database went away meanwhile (the rest wait).
   */
  private async oneByOne(batch: AuditEntry[]): Promise<boolean> {
    for (const entry of batch) {
      try {
        await insertEntries(this.db, [entry]);
      } catch (error) {
        if (!refusedValue(error)) {
          this.warn(error, 'cannot write audit rows: they wait (in memory, bounded) for the database');
          return false;
        }
        this.dropped.inc();
        this.warn(error, 'audit row dropped: the database refused a value of it', { requestId: entry.requestId });
      }
      this.queue.shift();
    }
    return true;
  }

  /** Each message said once in 10 s at most. */
  private warn(error: unknown, message: string, more: object = {}): void {
    const said = tableMissing(error) ? 'audit: the table xmlrest_api_audit is missing or made by an earlier version (run xmlrest db init)' : message;
    if (Date.now() < (this.quietUntil.get(said) ?? 0)) return;
    this.quietUntil.set(said, Date.now() + 10_000);
    this.logger.warn({ error: (error as Error | undefined)?.message, waiting: this.queue.length, ...more }, said);
  }
}

/** The database refused a value of a row (the client's doing, not the database's state): that row alone is at fault. */
function refusedValue(error: unknown): boolean {
  return faultOf(error) === undefined && httpErrorFromDatabase(error) !== undefined;
}
