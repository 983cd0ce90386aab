import type { Logger } from './log.js';

/**
 * Rows that age out of tables every server shares (delivered events past EVENTS_RETENTION_SECONDS, audit rows
 * past AUDIT_RETENTION_DAYS): removed by one server at a time (the live one with the lowest id, runtime/peers.ts),
 * a bounded batch per chore and tick, on a timer of its own, off every request's and delivery's path. A tick
 * that removed a whole batch comes back a second later rather than at the next interval, so a backlog of
 * millions of rows goes in minutes, a batch at a time, without holding anything up. Servers that would all
 * delete the same rows at once would only wait on each other's locks.
 */
export interface Chore {
  /** For the log: `delivered events`, `audit rows`. */
  name: string;
  /** How often it runs while it finds little to do. */
  everyMs: number;
  /** Removes one bounded batch; returns how many rows went, and whether more are waiting (a batch was full). */
  run(): Promise<{ removed: number; more: boolean }>;
}

/** Whether this server is the one that tidies now (`Peers.first`). */
export interface Turn {
  first(): Promise<boolean>;
}

/** A tick that removed a whole batch: the next one after this long. */
const SOON_MS = 1000;

export class Housekeeping {
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;
  private quietUntil = 0;

  constructor(
    private readonly turn: Turn,
    private readonly logger: Logger,
  ) {}

  start(chores: readonly Chore[]): void {
    for (const chore of chores) this.schedule(chore, chore.everyMs);
  }

  stop(): void {
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  private schedule(chore: Chore, ms: number): void {
    if (this.stopped) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      void this.tick(chore).then((more) => this.schedule(chore, more ? SOON_MS : chore.everyMs));
    }, ms);
    timer.unref();
    this.timers.add(timer);
  }

  private async tick(chore: Chore): Promise<boolean> {
    try {
      if (!(await this.turn.first())) return false;
      const { removed, more } = await chore.run();
      if (removed > 0) this.logger.info({ removed, more }, `${chore.name} pruned`);
      return more;
    } catch (error) {
      // Said once a minute at most: a database that is down would otherwise say it on every tick.
      if (Date.now() >= this.quietUntil) {
        this.quietUntil = Date.now() + 60_000;
        const missing = (error as { errno?: number }).errno === 1146;
        this.logger.warn({ error: (error as Error).message }, `cannot prune ${chore.name}${missing ? ': a table is missing (run xmlrest db init)' : ''}`);
      }
      return false;
    }
  }
}
