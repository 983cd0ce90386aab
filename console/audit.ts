import type { Queryable } from '../runtime/index.js';

/**
 * Every change made on the console, who made it, when and from where
 * (xmlrest_console_audit, made by `xmlrest db init`), shown on the console's
 * History page. Written after the change succeeded; a failed write of the
 * audit row fails the request, so that no change goes unrecorded unnoticed.
 */
export const AUDIT_TABLE = `create table if not exists xmlrest_console_audit (
  id bigint unsigned not null auto_increment primary key,
  at timestamp(3) not null default current_timestamp(3),
  backend varchar(64) not null,
  actor varchar(255) character set utf8mb4 collate utf8mb4_nopad_bin not null,
  action varchar(64) not null,
  target varchar(512) character set utf8mb4 collate utf8mb4_nopad_bin not null,
  detail varchar(1024) character set utf8mb4 collate utf8mb4_nopad_bin not null default '',
  address varchar(64) not null,
  key xmlrest_console_audit_backend (backend, id)
) engine = InnoDB default charset = utf8mb4`;

export interface AuditEntry {
  backend: string;
  /** The operator: a user id, the name when the default user tables know it, and the credential (`bob (2) by token`). */
  actor: string;
  action: string;
  target: string;
  detail?: string;
  address: string;
}

export interface AuditRow extends Required<AuditEntry> {
  id: number;
  at: Date;
}

export class AuditLog {
  constructor(private readonly db: Queryable) {}

  async record(entry: AuditEntry): Promise<void> {
    await this.db.write('insert into xmlrest_console_audit (backend, actor, action, target, detail, address) values (?, ?, ?, ?, ?, ?)', [
      entry.backend,
      entry.actor.slice(0, 255),
      entry.action,
      entry.target.slice(0, 512),
      (entry.detail ?? '').slice(0, 1024),
      entry.address.slice(0, 64),
    ]);
  }

  /**
   * The newest first, a page at a time (ids before `before`; 0 for the newest). `shared`: with the changes to the
   * default user tables made outside any console (the command line, a grant's end), recorded under `*`.
   */
  async history(backend: string, before: number, limit: number, shared = false): Promise<{ entries: AuditRow[]; next: number | null }> {
    if (!Number.isSafeInteger(limit) || limit < 1) throw new Error(`not a page size: ${limit}`);
    // A bigint column arrives as exact text (the pool's bigNumberStrings); an audit log never outgrows 2^53 rows.
    const rows = await this.db.select<Omit<AuditRow, 'id'> & { id: number | string }>(
      `select id, at, backend, actor, action, target, detail, address from xmlrest_console_audit
        where backend in (?, ?) and (? = 0 or id < ?) order by id desc limit ${limit + 1}`,
      [backend, shared ? '*' : backend, before, before],
    );
    const entries = rows.slice(0, limit).map((row) => ({ ...row, id: Number(row.id) }));
    return { entries, next: rows.length > limit ? entries.at(-1)!.id : null };
  }
}
