import { availableParallelism } from 'node:os';
import { HttpError } from '../../errors.js';

/**
 * The server's password hashing, bounded: argon2id takes 19 MiB and tens of
 * milliseconds of a core per check, so a flood of wrong passwords would
 * otherwise take every core and queue without end, and a right password
 * would wait behind all of it. At most `concurrency` checks run at once (one
 * per core but one, which stays for the event loop and whatever else the
 * requests need: on 2 cores, with every core hashing, a remembered login
 * waited seconds for its turn on the event loop); at most `maxWaiting` wait
 * for a turn, each for well under a second; past that a login answers 503
 * with Retry-After at once, having cost nothing. A login whose password is remembered
 * (credential-cache.ts) hashes nothing and never waits here. One instance per
 * server, shared by every backend.
 */
export class Hashing {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  /** Checks run since start, for the metrics (xmlrest_password_checks_total). */
  checked = 0;

  constructor(
    readonly concurrency = Math.max(1, availableParallelism() - 1),
    readonly maxWaiting = concurrency * 16,
  ) {}

  /** Runs `work` (one argon2id computation) when a core is free; throws 503 when too many wait already. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.running < this.concurrency) this.running++;
    else if (this.waiting.length >= this.maxWaiting) throw busy();
    // A turn handed over by a check that ended: `running` already counts this one.
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      this.checked++;
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }

  /** Checks waiting for a turn now, for the metrics (xmlrest_password_checks_waiting). */
  get queued(): number {
    return this.waiting.length;
  }
}

function busy(): HttpError {
  return new HttpError(503, 'Too many password checks at once: try again shortly', { 'Retry-After': '1' }, 'login_busy');
}
