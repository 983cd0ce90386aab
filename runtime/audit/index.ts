import { Counter, Gauge, type Registry } from 'prom-client';
import { addressGroup } from '../auth/address.js';
import { type Database, errnoOf, faultOf, NO_COLUMN, NO_TABLE, type Queryable, type SqlValue } from '../db/index.js';
import { httpErrorFromDatabase } from '../errors.js';
import type { Chore } from '../housekeeping.js';
import type { Logger } from '../log.js';

/**
 * Who called what (docs/contract.md §12): a row in xmlrest_api_audit per
 * call of an operation with `audit="true"`. A write that succeeds writes its
 * row in its own transaction (`writeIn`): the change and its record commit or
 * roll back together. Every other call (a read, a refused or failed call)
 * is recorded after its answer has gone (`record`): queued in memory and
 * written by a timer, many rows a statement, so that a read waits for no
 * insert. An entry is queued in its recorded form (values cut, only those
 * the module keeps: at most PARAMS_CHARS, whatever the request carried), and
 * the queue is bounded (MAX_QUEUED rows): while the database is down the rows
 * wait and are written when it is back; past the bound, further rows are
 * dropped and counted (`xmlrest_audit_rows_dropped_total`) and the log says
 * so. A row the database refuses is dropped alone (counted too), never held
 * at the head of the queue. Refusals of callers who gave no valid credentials
 * are counted rather than written one by one: the first of a minute from one
 * address to one route is a row, the rest of that minute one more row with
 * `repeats`, so that a client looping without credentials writes two rows a
 * minute, not thousands a second. Rows older than AUDIT_RETENTION_DAYS are
 * removed by one server at a time (`prune`, runtime/housekeeping.ts). A
 * graceful stop writes what waits; a killed server loses the rows of its last
 * FLUSH_MS (and those it held while the database was down).
 */
export const API_AUDIT_TABLE = `create table if not exists xmlrest_api_audit (
  id bigint unsigned not null auto_increment primary key,
  at timestamp(3) not null,
  backend varchar(64) character set ascii collate ascii_bin not null,
  resource varchar(128) character set ascii collate ascii_bin not null,
  version varchar(32) character set ascii collate ascii_bin not null,
  method varchar(8) character set ascii collate ascii_bin not null,
  user_id varchar(255) character set utf8mb4 collate utf8mb4_bin null,
  key_prefix char(8) character set ascii collate ascii_bin null,
  status smallint unsigned not null,
  request_id varchar(64) character set ascii collate ascii_bin not null,
  address varchar(64) character set ascii collate ascii_bin not null,
  params text character set utf8mb4 collate utf8mb4_bin null,
  repeats int unsigned not null default 1,
  key xmlrest_api_audit_at (backend, at),
  key xmlrest_api_audit_user (backend, user_id, at)
) engine = InnoDB`;

/** `repeats` on a table made before it (xmlrest db init adds it): how many alike calls the row stands for. */
export const API_AUDIT_REPEATS = 'alter table xmlrest_api_audit add column repeats int unsigned not null default 1 after params';

/** One call, as its record holds it: bounded, whatever the request carried. */
export interface AuditEntry {
  at: Date;
  backend: string;
  resource: string;
  version: string;
  method: string;
  userId: string | null;
  /** The first 8 characters of the API key the caller presented (`xr_` and 5), when it came with one. */
  keyPrefix: string | null;
  status: number;
  requestId: string;
  /** The client's address as printable ASCII, at most 64 characters (`recordedAddress`). */
  address: string;
  /** The parameters the operation read, as `recordedParams` makes them; null when it read none (refused before). */
  params: string | null;
  /** How many alike calls the row stands for: 1, but for repeated refusals of a caller without credentials. */
  repeats?: number;
}

/**
 * What a row holds for a parameter the generator did not list as kept (docs/contract.md §12): a secret (named
 * like one, meeting a password column, reaching a password argument) or one `audit_params` leaves out. The rule
 * is the module's (`AuditRule`, made when generating), never decided per call.
 */
export const LEFT_OUT = '[FILTERED]';

/** Longest value kept, in characters, and longest record of parameters: an audit row stays small. */
const VALUE_CHARS = 256;
const PARAMS_CHARS = 4096;

/** The parameters as the record holds them: only the values of `keeps` (every other one left out), long values cut, the whole bounded. */
export function recordedParams(params: Readonly<Record<string, unknown>> | null | undefined, keeps: ReadonlySet<string>): string | null {
  if (params === null || params === undefined) return null;
  const kept: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(params)) {
    if (!keeps.has(name)) kept[name] = LEFT_OUT;
    else if (typeof value === 'string' && value.length > VALUE_CHARS) kept[name] = `${value.slice(0, VALUE_CHARS)}…`;
    else kept[name] = value instanceof Date ? value.toISOString() : value;
  }
  const text = JSON.stringify(kept);
  return text.length <= PARAMS_CHARS ? text : JSON.stringify({ truncated: true, names: Object.keys(kept).slice(0, 50) });
}

/**
 * A client's address as the column takes it: printable ASCII, at most 64 characters. It comes from a proxy's
 * header when PROXY_HOPS says so, and such a header may hold any text: a row the database refused for it would
 * lose the record of the call.
 */
export function recordedAddress(address: string): string {
  return address.replace(/[^\x20-\x7e]/g, '?').slice(0, 64) || '-';
}

const COLUMNS = '(at, backend, resource, version, method, user_id, key_prefix, status, request_id, address, params, repeats)';
const ROW = '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)';

function values(entry: AuditEntry): SqlValue[] {
  return [
    entry.at,
    entry.backend,
    entry.resource,
    entry.version,
    entry.method,
    entry.userId === null ? null : entry.userId.slice(0, 255),
    entry.keyPrefix,
    entry.status,
    entry.requestId,
    entry.address,
    entry.params,
    entry.repeats ?? 1,
  ];
}

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
      await db.write(`insert into xmlrest_api_audit ${COLUMNS} values ${ROW}`, values(entry));
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
        await this.insert(batch);
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
        await this.insert([entry]);
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

  private async insert(batch: readonly AuditEntry[]): Promise<void> {
    await this.db.write(`insert into xmlrest_api_audit ${COLUMNS} values ${Array.from({ length: batch.length }, () => ROW).join(', ')}`, batch.flatMap(values));
  }

  /** Each message said once in 10 s at most. */
  private warn(error: unknown, message: string, more: object = {}): void {
    const said = tableMissing(error) ? 'audit: the table xmlrest_api_audit is missing or made by an earlier version (run xmlrest db init)' : message;
    if (Date.now() < (this.quietUntil.get(said) ?? 0)) return;
    this.quietUntil.set(said, Date.now() + 10_000);
    this.logger.warn({ error: (error as Error | undefined)?.message, waiting: this.queue.length, ...more }, said);
  }
}

/** ER_NO_SUCH_TABLE, ER_BAD_FIELD_ERROR: `xmlrest db init` has not run since this version (or at all). */
export function tableMissing(error: unknown): boolean {
  const errno = errnoOf(error);
  return errno === NO_TABLE || errno === NO_COLUMN;
}

/** The database refused a value of a row (the client's doing, not the database's state): that row alone is at fault. */
function refusedValue(error: unknown): boolean {
  return faultOf(error) === undefined && httpErrorFromDatabase(error) !== undefined;
}

export interface AuditFilter {
  backend?: string | undefined;
  userId?: string | undefined;
  resource?: string | undefined;
  /** Calls at or after, and before. */
  from?: Date | undefined;
  to?: Date | undefined;
  /** An exact status (404), or a class (4 for 4xx). */
  status?: number | undefined;
  statusClass?: number | undefined;
  /** Only ids below this one (paging, newest first); 0 for the newest. */
  before?: number | undefined;
  limit: number;
}

export interface AuditRow {
  id: number;
  at: Date;
  backend: string;
  resource: string;
  version: string;
  method: string;
  user_id: string | null;
  key_prefix: string | null;
  status: number;
  request_id: string;
  address: string;
  params: string | null;
  /** How many alike calls the row stands for (repeated refusals of a caller without credentials); 1 for most. */
  repeats: number;
}

/** A status filter as operators write it (xmlrest audit list, the console): a status (404) or a class (4xx); undefined when neither. */
export function statusFilter(text: string): Pick<AuditFilter, 'status' | 'statusClass'> | undefined {
  const match = /^([1-5])(?:xx|([0-9]{2}))$/i.exec(text);
  if (!match) return undefined;
  return match[2] === undefined ? { statusClass: Number(match[1]) } : { status: Number(text) };
}

/**
 * A time filter as operators write it: an ISO time, read as UTC when it names no zone (as the console's
 * datetime-local field sends it), or a time ago (30m, 12h, 7d); undefined when neither.
 */
export function timeFilter(text: string, now = Date.now()): Date | undefined {
  const ago = /^([0-9]{1,6})([smhd])$/.exec(text);
  if (ago) return new Date(now - Number(ago[1]) * { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[ago[2] as 's' | 'm' | 'h' | 'd']);
  if (!/^[0-9]{4}-[0-9]{2}-[0-9]{2}/.test(text)) return undefined;
  const time = Date.parse(/T.*([zZ]|[+-][0-9]{2}:?[0-9]{2})$/.test(text) || !text.includes('T') ? text : `${text}Z`);
  return Number.isNaN(time) ? undefined : new Date(time);
}

/** Rows newest first, filtered, a page at a time (xmlrest audit list, the console's Audit page). */
export async function listAudit(db: Queryable, filter: AuditFilter): Promise<{ rows: AuditRow[]; next: number | null }> {
  if (!Number.isSafeInteger(filter.limit) || filter.limit < 1 || filter.limit > 1000) throw new Error(`not a page size: ${filter.limit}`);
  const conditions: string[] = [];
  const params: SqlValue[] = [];
  const where = (condition: string, ...values: SqlValue[]) => {
    conditions.push(condition);
    params.push(...values);
  };
  if (filter.backend !== undefined) where('backend = ?', filter.backend);
  if (filter.userId !== undefined) where('user_id = ?', filter.userId);
  if (filter.resource !== undefined) where('resource = ?', filter.resource);
  if (filter.from !== undefined) where('at >= ?', filter.from);
  if (filter.to !== undefined) where('at < ?', filter.to);
  if (filter.status !== undefined) where('status = ?', filter.status);
  if (filter.statusClass !== undefined) where('status div 100 = ?', filter.statusClass);
  if (filter.before) where('id < ?', filter.before);
  const rows = await db.select<AuditRow & { id: number | string }>(
    `select id, at, backend, resource, version, method, user_id, key_prefix, status, request_id, address, params, repeats from xmlrest_api_audit
      ${conditions.length > 0 ? `where ${conditions.join(' and ')}` : ''} order by id desc limit ${filter.limit + 1}`,
    params,
  );
  const page = rows.slice(0, filter.limit).map((row) => ({ ...row, id: Number(row.id), status: Number(row.status), repeats: Number(row.repeats) }));
  return { rows: page, next: rows.length > filter.limit ? page.at(-1)!.id : null };
}
