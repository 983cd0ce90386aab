import { Counter, Gauge, type Registry } from 'prom-client';
import { type Database, errnoOf, NO_TABLE, type Queryable, type SqlValue } from '../db/index.js';
import type { Logger } from '../log.js';

/**
 * Who called what (docs/contract.md §12): a row in xmlrest_api_audit per
 * call of an operation with `audit="true"`. A write that succeeds writes its
 * row in its own transaction (`writeIn`): the change and its record commit or
 * roll back together. Every other call (a read, a refused or failed call)
 * is recorded after its answer has gone (`record`): queued in memory and
 * written by a timer, many rows a statement, so that a read waits for no
 * insert. The queue is bounded (MAX_QUEUED rows): while the database is down
 * the rows wait and are written when it is back; past the bound, further
 * rows are dropped and counted (`xmlrest_audit_rows_dropped_total`) and the
 * log says so. A graceful stop writes what waits; a killed server loses the
 * rows of its last FLUSH_MS (and those it held while the database was down).
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
  key xmlrest_api_audit_at (backend, at),
  key xmlrest_api_audit_user (backend, user_id, at)
) engine = InnoDB`;

/** One call, as its route knows it. */
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
  address: string;
  /** The parameters the operation read, as it read them; null when it read none (refused before). */
  params: Readonly<Record<string, unknown>> | null;
}

/**
 * Whether a parameter's value is left out of the record: its name, in any letter case, holds one of these.
 * Wide on purpose (a `keyword` or an `author` is left out too): a secret written to an audit table is a
 * leak that outlives the request, a word left out is not.
 */
const SECRET_WORDS = ['pass', 'pwd', 'secret', 'token', 'key', 'auth', 'credential', 'signature'];
export const LEFT_OUT = '[FILTERED]';

export function leftOut(name: string): boolean {
  const lower = name.toLowerCase();
  return SECRET_WORDS.some((word) => lower.includes(word));
}

/** Longest value kept, in characters, and longest record of parameters: an audit row stays small. */
const VALUE_CHARS = 256;
const PARAMS_CHARS = 4096;

/** The parameters as the record holds them: secrets left out, long values cut, the whole bounded. */
export function recordedParams(params: Readonly<Record<string, unknown>> | null): string | null {
  if (params === null) return null;
  const kept: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(params)) {
    if (leftOut(name)) kept[name] = LEFT_OUT;
    else if (typeof value === 'string' && value.length > VALUE_CHARS) kept[name] = `${value.slice(0, VALUE_CHARS)}…`;
    else kept[name] = value instanceof Date ? value.toISOString() : value;
  }
  const text = JSON.stringify(kept);
  return text.length <= PARAMS_CHARS ? text : JSON.stringify({ truncated: true, names: Object.keys(kept).slice(0, 50) });
}

const COLUMNS = '(at, backend, resource, version, method, user_id, key_prefix, status, request_id, address, params)';
const ROW = '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)';

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
    entry.address.slice(0, 64),
    recordedParams(entry.params),
  ];
}

/** Rows waiting at most; past it, new rows are dropped (and counted). */
const MAX_QUEUED = 10_000;
/** The queue is written this often, in statements of at most BATCH rows (a power of two: a few statement texts). */
const FLUSH_MS = 200;
const BATCH = 256;

export class AuditTrail {
  private queue: AuditEntry[] = [];
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> | undefined;
  private readonly dropped: Counter;
  private quietUntil = 0;

  constructor(
    private readonly db: Database,
    private readonly logger: Logger,
    registry: Registry,
  ) {
    const registers = [registry];
    this.dropped = new Counter({
      name: 'xmlrest_audit_rows_dropped_total',
      help: 'Audit rows of reads dropped because too many waited for the database (it was down or too slow)',
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
    this.timer = setInterval(() => void this.flush(), FLUSH_MS);
    this.timer.unref();
  }

  /** A successful write's row, in its transaction (`db`). */
  async writeIn(db: Queryable, entry: AuditEntry): Promise<void> {
    await db.write(`insert into xmlrest_api_audit ${COLUMNS} values ${ROW}`, values(entry));
  }

  /** Any other call's row: queued, written within FLUSH_MS. Never waits, never throws. */
  record(entry: AuditEntry): void {
    if (this.queue.length >= MAX_QUEUED) {
      this.dropped.inc();
      this.warn(undefined, `audit rows dropped: ${MAX_QUEUED} wait already for the database`);
      return;
    }
    this.queue.push(entry);
  }

  /** Writes every row waiting (a graceful stop calls it before the pool closes). */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing;
    if (this.queue.length === 0) return Promise.resolve();
    this.flushing = this.write().finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  stop(): Promise<void> {
    clearInterval(this.timer);
    return this.flush();
  }

  private async write(): Promise<void> {
    while (this.queue.length > 0) {
      let size = BATCH;
      while (size > this.queue.length) size /= 2;
      const batch = this.queue.slice(0, size);
      try {
        await this.db.write(`insert into xmlrest_api_audit ${COLUMNS} values ${Array.from({ length: size }, () => ROW).join(', ')}`, batch.flatMap(values));
      } catch (error) {
        // Kept for the next flush: the database may be back by then.
        this.warn(error, 'cannot write audit rows: they wait (in memory, bounded) for the database');
        return;
      }
      this.queue.splice(0, size);
    }
  }

  /** Said once in 10 s at most. */
  private warn(error: unknown, message: string): void {
    if (Date.now() < this.quietUntil) return;
    this.quietUntil = Date.now() + 10_000;
    const missing = errnoOf(error) === NO_TABLE;
    this.logger.warn(
      { error: (error as Error | undefined)?.message, waiting: this.queue.length },
      missing ? 'audit: the table xmlrest_api_audit is missing (run xmlrest db init)' : message,
    );
  }
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
    `select id, at, backend, resource, version, method, user_id, key_prefix, status, request_id, address, params from xmlrest_api_audit
      ${conditions.length > 0 ? `where ${conditions.join(' and ')}` : ''} order by id desc limit ${filter.limit + 1}`,
    params,
  );
  const page = rows.slice(0, filter.limit).map((row) => ({ ...row, id: Number(row.id), status: Number(row.status) }));
  return { rows: page, next: rows.length > filter.limit ? page.at(-1)!.id : null };
}
