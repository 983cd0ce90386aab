// The audit's table as `xmlrest db init` makes it, one call's entry and the insert that writes entries: apart from
// the trail that queues them (trail.ts), since the schema command needs the table alone.
import { errnoOf, NO_COLUMN, NO_TABLE, type Queryable, type SqlValue } from '../db/index.js';

/** A row per call of an audited operation (index.ts says when each is written). */
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
  tenant varchar(255) character set utf8mb4 collate utf8mb4_bin null,
  key xmlrest_api_audit_at (backend, at),
  key xmlrest_api_audit_user (backend, user_id, at)
) engine = InnoDB`;

/** `repeats` on a table made before it (xmlrest db init adds it): how many alike calls the row stands for. */
export const API_AUDIT_REPEATS = 'alter table xmlrest_api_audit add column repeats int unsigned not null default 1 after params';

/** `tenant` on a table made before it (xmlrest db init adds it): a tenant backend's caller's tenant (docs/internals/contract.md §14). */
export const API_AUDIT_TENANT = 'alter table xmlrest_api_audit add column tenant varchar(255) character set utf8mb4 collate utf8mb4_bin null after repeats';

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
  /** The caller's tenant on a tenant backend's route, once known (scope.caller); null elsewhere. */
  tenant?: string | null;
}

const COLUMNS = '(at, backend, resource, version, method, user_id, key_prefix, status, request_id, address, params, repeats';
const ROW = '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?';

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

/** Inserts `batch`, many rows a statement (one for a write's own row). */
export async function insertEntries(db: Queryable, batch: readonly AuditEntry[]): Promise<void> {
  // `tenant` named only when a row has one: a backend without tenants writes to a table of an earlier version as before.
  const tenants = batch.some((entry) => entry.tenant != null);
  const columns = tenants ? `${COLUMNS}, tenant)` : `${COLUMNS})`;
  const row = tenants ? `${ROW}, ?)` : `${ROW})`;
  const rows = tenants ? batch.flatMap((entry) => [...values(entry), entry.tenant ?? null]) : batch.flatMap(values);
  await db.write(`insert into xmlrest_api_audit ${columns} values ${Array.from({ length: batch.length }, () => row).join(', ')}`, rows);
}

/** ER_NO_SUCH_TABLE, ER_BAD_FIELD_ERROR: `xmlrest db init` has not run since this version (or at all). */
export function tableMissing(error: unknown): boolean {
  const errno = errnoOf(error);
  return errno === NO_TABLE || errno === NO_COLUMN;
}
