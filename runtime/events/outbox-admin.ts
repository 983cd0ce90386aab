// What operators and housekeeping do with the outbox's rows (lists, retries, pruning, the depth): apart from the
// request's insert and the deliveries' claims (outbox.ts), which the request path runs.
import type { Queryable, SqlValue } from '../db/index.js';
import { idList, type Target } from './outbox.js';

/** The row as operators see it (xmlrest events list, the console's Events page). */
export interface OutboxRow {
  id: number;
  msg_id: string;
  backend: string;
  event: string;
  url: string;
  order_key: string | null;
  state: 'pending' | 'delivered' | 'failed';
  created: Date;
  due: Date;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  /** Its webhook is stopped by a 410: the row waits until an operator retries. */
  held: boolean;
  payload?: string;
}

/**
 * Removes delivered rows older than the retention, at most `batch` of each webhook's; returns how many went (the
 * caller comes back soon while a batch was full). One server at a time calls it (runtime/housekeeping.ts).
 */
export async function pruneDelivered(db: Queryable, retentionSeconds: number, batch = 5000): Promise<number> {
  // A loose index scan of (state, backend, url): one entry per webhook, however many rows.
  const targets = await db.select<Target>(`select distinct backend, url from xmlrest_outbox where state = 'delivered'`, []);
  let removed = 0;
  for (const target of targets) {
    const { affectedRows } = await db.write(
      `delete from xmlrest_outbox where state = 'delivered' and backend = ? and url = ? and due < now(3) - interval ? second limit ${Math.trunc(batch)}`,
      [target.backend, target.url, retentionSeconds],
    );
    removed += affectedRows;
  }
  return removed;
}

/** Pending rows (the outbox's depth) and the age of the oldest, in seconds; read from the index alone but for one row. */
export async function outboxStats(db: Queryable): Promise<{ depth: number; oldestSeconds: number }> {
  const [counted] = await db.select<{ depth: number | string; oldest: number | string | null }>(
    `select count(*) as depth, min(id) as oldest from xmlrest_outbox where state = 'pending'`,
    [],
  );
  if (!counted || counted.oldest === null) return { depth: 0, oldestSeconds: 0 };
  const [aged] = await db.select<{ age: number | string }>(`select timestampdiff(microsecond, created, now(3)) as age from xmlrest_outbox where id = ?`, [
    counted.oldest,
  ]);
  return { depth: Number(counted.depth), oldestSeconds: Math.max(0, Number(aged?.age ?? 0) / 1e6) };
}

export interface OutboxFilter {
  backend?: string | undefined;
  state?: OutboxRow['state'] | undefined;
  /** Only ids below this one (paging, newest first); 0 for the newest. */
  before?: number | undefined;
  limit: number;
  /** The payload too (xmlrest events list --json). */
  payload?: boolean;
}

/** Rows newest first, a page at a time; the `where` holds only the filters given, so that an index serves it. */
export async function listOutbox(db: Queryable, filter: OutboxFilter): Promise<{ rows: OutboxRow[]; next: number | null }> {
  if (!Number.isSafeInteger(filter.limit) || filter.limit < 1 || filter.limit > 1000) throw new Error(`not a page size: ${filter.limit}`);
  const conditions: string[] = [];
  const values: SqlValue[] = [];
  const where = (condition: string, value: SqlValue) => {
    conditions.push(condition);
    values.push(value);
  };
  if (filter.backend !== undefined) where('o.backend = ?', filter.backend);
  if (filter.state !== undefined) where('o.state = ?', filter.state);
  if (filter.before) where('o.id < ?', filter.before);
  const rows = await db.select<Omit<OutboxRow, 'id' | 'held'> & { id: number | string; held: number | string }>(
    `select o.id, o.msg_id, o.backend, o.event, o.url, o.order_key, o.state, o.created, o.due, o.attempts, o.last_status, o.last_error,
        (o.state = 'pending' and exists (select 1 from xmlrest_webhook_stop s where s.backend = o.backend and s.url = o.url)) as held
        ${filter.payload ? ', o.payload' : ''}
      from xmlrest_outbox o
      ${conditions.length > 0 ? `where ${conditions.join(' and ')}` : ''}
      order by o.id desc limit ${filter.limit + 1}`,
    values,
  );
  const page = rows.slice(0, filter.limit).map((row) => ({
    ...row,
    id: Number(row.id),
    attempts: Number(row.attempts),
    last_status: row.last_status === null ? null : Number(row.last_status),
    held: Number(row.held) === 1,
  }));
  return { rows: page, next: rows.length > filter.limit ? page.at(-1)!.id : null };
}

/** Webhooks stopped by a 410, and the row that was answered so. */
export async function stoppedWebhooks(db: Queryable, backend?: string): Promise<{ backend: string; url: string; stopped: Date; outbox_id: number }[]> {
  const rows = await db.select<{ backend: string; url: string; stopped: Date; outbox_id: number | string }>(
    'select backend, url, stopped, outbox_id from xmlrest_webhook_stop where ? is null or backend = ? order by stopped',
    [backend ?? null, backend ?? null],
  );
  return rows.map((row) => ({ ...row, outbox_id: Number(row.outbox_id) }));
}

/**
 * Failed rows due again at once, with a new retry window; their webhooks resume (a retry says the receiver
 * is back, so a 410's stop is lifted). `ids` undefined retries every failed row (of `backend`, when given).
 * Returns the rows retried.
 */
export async function retryFailed(
  db: { transaction<T>(work: (db: Queryable) => Promise<T>): Promise<T> },
  which: { ids?: readonly number[] | undefined; backend?: string | undefined },
): Promise<number> {
  return db.transaction(async (tx) => {
    const byId = which.ids !== undefined;
    if (byId && which.ids!.length === 0) return 0;
    const list = byId ? idList(which.ids!) : { sql: '', values: [] };
    const where = `state = 'failed' and (? is null or backend = ?)${byId ? ` and id in ${list.sql}` : ''}`;
    const params = [which.backend ?? null, which.backend ?? null, ...list.values];
    const targets = await tx.select<Target>(`select distinct backend, url from xmlrest_outbox where ${where}`, params);
    const { affectedRows } = await tx.write(
      `update xmlrest_outbox set state = 'pending', due = now(3), attempts = 0, give_up = null, leased_by = null where ${where}`,
      params,
    );
    for (const target of targets) {
      const lifted = await tx.write('delete from xmlrest_webhook_stop where backend = ? and url = ?', [target.backend, target.url]);
      // The rows its stop held get a whole retry window from their next attempt too, not what was left of an earlier one.
      if (lifted.affectedRows > 0)
        await tx.write("update xmlrest_outbox set give_up = null where state = 'pending' and backend = ? and url = ?", [target.backend, target.url]);
    }
    return affectedRows;
  });
}
