import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { errnoOf, NO_TABLE, type Queryable } from './db/index.js';
import type { Logger } from './log.js';

/**
 * The servers that share this database. Each writes its row every few
 * seconds and removes it when it stops gracefully; a row not written for
 * ALIVE_SECONDS is a server that died (a killed process ages out). The
 * console asks before it rewrites a resource file: a file changed on one
 * server's disk changes that server's guards only (console/resources-api.ts).
 * Times are the database's own, so clocks that differ between hosts do not matter.
 */
export const SERVER_TABLE = `create table if not exists xmlrest_server (
  id char(36) character set ascii collate ascii_bin not null primary key,
  host varchar(255) not null,
  pid int unsigned not null,
  started timestamp not null default current_timestamp,
  seen timestamp not null default current_timestamp,
  key xmlrest_server_seen (seen)
) engine = InnoDB`;

/** A row written within this many seconds is a live server: three beats of 5 s. */
export const ALIVE_SECONDS = 15;

export interface Peer {
  id: string;
  host: string;
  pid: number;
  started: Date;
  seen: Date;
}

export class Peers {
  /** This server's row. */
  readonly id = randomUUID();
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> | undefined;
  private stopped = false;
  private warned = false;

  constructor(
    private readonly db: Queryable,
    private readonly logger: Logger,
  ) {}

  /** Announces this server now and then every `intervalMs`; resolves once the first row is written (or could not be). */
  start(intervalMs: number): Promise<void> {
    this.timer = setInterval(() => void this.beat(), intervalMs);
    this.timer.unref();
    return this.beat();
  }

  /** Writes this server's row now; a slow database never stacks writes. */
  beat(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    this.beating ??= this.write().finally(() => (this.beating = undefined));
    return this.beating;
  }

  /** The other live servers on this database. Throws when the database cannot say (no table: `xmlrest db init`). */
  async others(): Promise<Peer[]> {
    const rows = await this.db.select<Omit<Peer, 'pid'> & { pid: number | string }>(
      `select id, host, pid, started, seen from xmlrest_server where id <> ? and seen >= now() - interval ${ALIVE_SECONDS} second order by started`,
      [this.id],
    );
    return rows.map((row) => ({ ...row, pid: Number(row.pid) }));
  }

  /**
   * Whether this server takes its turn at work one server does for all (runtime/housekeeping.ts): it is the live
   * server with the lowest id, or no live server is listed (announcements off, or no table: each does it).
   */
  async first(): Promise<boolean> {
    try {
      const [lowest] = await this.db.select<{ id: string }>(
        `select id from xmlrest_server where seen >= now() - interval ${ALIVE_SECONDS} second order by id limit 1`,
        [],
      );
      return lowest === undefined || lowest.id === this.id;
    } catch (error) {
      if ((error as { errno?: number }).errno === NO_TABLE) return true;
      throw error;
    }
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  /** A graceful stop: no more beats, and the row goes, so that the others know at once. */
  async leave(): Promise<void> {
    this.stop();
    // A beat still writing would put the row back after the delete.
    await this.beating;
    await this.db.write('delete from xmlrest_server where id = ?', [this.id]).catch(() => undefined);
  }

  private async write(): Promise<void> {
    try {
      await this.db.write('insert into xmlrest_server (id, host, pid, started, seen) values (?, ?, ?, now(), now()) on duplicate key update seen = now()', [
        this.id,
        hostname().slice(0, 255),
        process.pid,
      ]);
      // Rows of servers that were killed, long gone; any server tidies them.
      await this.db.write('delete from xmlrest_server where seen < now() - interval 1 hour', []);
    } catch (error) {
      if (errnoOf(error) === NO_TABLE) return;
      if (!this.warned) this.logger.warn({ error: (error as Error).message }, 'cannot announce this server in xmlrest_server; trying again every few seconds');
      this.warned = true;
    }
  }
}
