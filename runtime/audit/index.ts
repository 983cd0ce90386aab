/**
 * Who called what (docs/internals/contract.md §12): a row in xmlrest_api_audit per
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
 *
 * Its parts: the table, an entry and their insert (table.ts), what a row keeps
 * of a call (recorded.ts), the queue and its batched flush (trail.ts), and the
 * operators' list (list.ts).
 */
export { type AuditFilter, type AuditRow, listAudit, statusFilter, timeFilter } from './list.js';
export { LEFT_OUT, recordedAddress, recordedParams } from './recorded.js';
export { API_AUDIT_REPEATS, API_AUDIT_TABLE, API_AUDIT_TENANT, type AuditEntry, tableMissing } from './table.js';
export { AuditTrail } from './trail.js';
