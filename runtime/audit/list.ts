// The operators' list of audit rows (xmlrest audit list, the console's Audit page) and the filters as they write
// them: apart from the trail, since it only reads what the trail wrote and no request runs it.
import type { Queryable, SqlValue } from '../db/index.js';

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
