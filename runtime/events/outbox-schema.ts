// The outbox's tables and its commit procedure as `xmlrest db init` makes them: apart from the statements on them
// (outbox.ts, outbox-admin.ts), since the schema command needs these and nothing else.

/** One row per event and webhook: its states, and how servers claim it, are described in outbox.ts. */
export const OUTBOX_TABLE = `create table if not exists xmlrest_outbox (
  id bigint unsigned not null auto_increment primary key,
  msg_id char(36) character set ascii collate ascii_bin not null,
  backend varchar(64) character set ascii collate ascii_bin not null,
  event varchar(255) character set ascii collate ascii_bin not null,
  url varchar(512) character set ascii collate ascii_bin not null,
  order_key varchar(255) character set utf8mb4 collate utf8mb4_bin null,
  payload mediumtext character set utf8mb4 collate utf8mb4_bin not null,
  state enum('pending', 'delivered', 'failed') character set ascii not null default 'pending',
  created timestamp(3) not null default current_timestamp(3),
  due timestamp(3) not null default current_timestamp(3),
  leased_by char(36) character set ascii collate ascii_bin null,
  attempts smallint unsigned not null default 0,
  give_up timestamp(3) null,
  last_status smallint unsigned null,
  last_error varchar(255) character set utf8mb4 collate utf8mb4_bin null,
  key xmlrest_outbox_due (state, backend, url, due),
  key xmlrest_outbox_order (backend, url, order_key, state, id)
) engine = InnoDB`;

/** Webhooks stopped by a 410 Gone from their receiver: nothing is sent to them until an operator retries. */
export const WEBHOOK_STOP_TABLE = `create table if not exists xmlrest_webhook_stop (
  backend varchar(64) character set ascii collate ascii_bin not null,
  url varchar(512) character set ascii collate ascii_bin not null,
  stopped timestamp(3) not null default current_timestamp(3),
  outbox_id bigint unsigned not null,
  primary key (backend, url)
) engine = InnoDB`;

/**
 * A request's one event row and its COMMIT in one statement: on this kind of machine a round trip costs each
 * side about as much as the insert itself (the write with one Emit went from 0.72x to 0.80x the same write
 * without it, as mysql2 alone runs them). The caller's rights (SQL SECURITY INVOKER): it inserts into the
 * outbox as the server's user does. Parameters take the columns' character sets, never the database's default
 * (a latin1 database would otherwise lose a payload's other characters). Replaced by every `xmlrest db init`.
 */
export const OUTBOX_COMMIT_PROCEDURE = 'xmlrest_outbox_commit';
export const OUTBOX_ROUTINES = [
  `drop procedure if exists ${OUTBOX_COMMIT_PROCEDURE}`,
  `create procedure ${OUTBOX_COMMIT_PROCEDURE}(
  in p_msg_id char(36) character set ascii,
  in p_backend varchar(64) character set ascii,
  in p_event varchar(255) character set ascii,
  in p_url varchar(512) character set ascii,
  in p_order_key varchar(255) character set utf8mb4,
  in p_payload mediumtext character set utf8mb4)
  modifies sql data
  sql security invoker
begin
  insert into xmlrest_outbox (msg_id, backend, event, url, order_key, payload) values (p_msg_id, p_backend, p_event, p_url, p_order_key, p_payload);
  commit;
end`,
];

export const OUTBOX_TABLES = [OUTBOX_TABLE, WEBHOOK_STOP_TABLE];
