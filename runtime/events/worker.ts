import { type Database, errnoOf, NO_TABLE } from '../db/index.js';
import type { Logger } from '../log.js';
import { type DeliverySettings, MOST_CLAIMED } from './delivery-settings.js';
import { type Claimed, claim, release, type Target } from './outbox.js';
import { type DeliveryCounts, type DeliveryTarget, type Outcome, type OutcomeRecorder, recordOutcomes } from './outcomes.js';
import { Sender } from './sender.js';
import { signature } from './signer.js';

export { DEFAULT_DELIVERY, type DeliverySettings, retryDelay } from './delivery-settings.js';
export type { DeliveryCounts, DeliveryTarget } from './outcomes.js';

/** Outcomes are written together once this many wait, or this long after the first. */
const FLUSH_AT = 32;
const FLUSH_MS = 20;
/**
 * Events committed on this server are looked for this soon, all the commits of that time with one claim: a
 * server taking a thousand writes a second makes fifty claims of twenty events, not a thousand claims of one.
 */
const NUDGE_MS = 20;

type Leased = { row: Claimed; target: DeliveryTarget };

/**
 * Every server runs one (docs/internals/contract.md §12): it claims due events of the
 * webhooks it knows, a batch at a time (outbox.ts), keeps at most
 * `concurrency` deliveries in flight and as many claimed ones ready to go
 * (so that a free slot never waits for a claim's round trip), and writes the
 * outcomes in batches (outcomes.ts). It looks for work every `pollMs` while idle, NUDGE_MS
 * after this server committed an event, and again as soon as there is room
 * while it finds some. A webhook that answers 429, 502, 503 or 504 rests:
 * this server claims none of its events until its Retry-After (or the first
 * retry's delay) has passed. Memory stays bounded: twice `concurrency` events
 * (each at most EVENTS_MAX_BYTES) and their outcomes.
 */
export class DeliveryWorker {
  private targets: DeliveryTarget[] = [];
  private inFlight = 0;
  /** Claimed (leased to this server), waiting for a free slot. */
  private ready: Leased[] = [];
  private outcomes: Outcome[] = [];
  private timer: NodeJS.Timeout | undefined;
  private nudgeTimer: NodeJS.Timeout | undefined;
  private flushTimer: NodeJS.Timeout | undefined;
  private pumping: Promise<void> | undefined;
  private flushing: Promise<void> | undefined;
  private again = false;
  /** The last look found work: look again as soon as there is room, not at the next poll. */
  private busy = false;
  private running = false;
  private rotation = 0;
  /** Webhooks resting after a throttling answer, by `backend url`: until when. */
  private readonly resting = new Map<string, number>();
  private quietUntil = 0;
  private drained: (() => void) | undefined;
  private stopping: Promise<void> | undefined;
  private readonly sender: Sender;
  private readonly recorder: OutcomeRecorder;

  constructor(
    private readonly db: Database,
    private readonly logger: Logger,
    counts: DeliveryCounts,
    readonly settings: DeliverySettings,
    private readonly serverId: string,
  ) {
    this.sender = new Sender(settings.concurrency, settings.timeoutMs);
    this.recorder = {
      db,
      logger,
      counts,
      settings,
      serverId,
      rest: (target, retryAfterMs) => this.rest(target, retryAfterMs),
      warn: (error, message) => this.warn(error, message),
    };
  }

  /** The webhooks of the backends served now (a reload changes them). */
  setTargets(targets: readonly DeliveryTarget[]): void {
    this.targets = [...targets];
    // A reload that brings the first webhooks starts the polling.
    if (this.targets.length > 0 && this.running) void this.pump();
  }

  start(): void {
    this.running = true;
    void this.pump();
  }

  /** This server just committed an event: it looks for due events within NUDGE_MS, with the others committed meanwhile. */
  nudge(): void {
    if (!this.running || this.nudgeTimer !== undefined) return;
    this.nudgeTimer = setTimeout(() => {
      this.nudgeTimer = undefined;
      clearTimeout(this.timer);
      this.timer = undefined;
      void this.pump();
    }, NUDGE_MS);
  }

  /**
   * A graceful stop: claims nothing more, hands the claimed events not started back (due at once, for any
   * server), lets the deliveries in flight end (each within its timeout), and writes their outcomes.
   */
  stop(): Promise<void> {
    // Called by whoever stops first (the listener's close, a graceful stop): once.
    this.stopping ??= this.end();
    return this.stopping;
  }

  private async end(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    clearTimeout(this.nudgeTimer);
    await this.pumping;
    const unsent = this.ready.splice(0);
    if (unsent.length > 0)
      await release(
        this.db,
        unsent.map(({ row }) => row.id),
        this.serverId,
      ).catch(() => undefined);
    if (this.inFlight > 0) await new Promise<void>((resolve) => (this.drained = resolve));
    await this.flush();
    this.sender.close();
  }

  /** Room for more claimed events: as many in flight and ready as twice the concurrency. */
  private room(): number {
    return 2 * this.settings.concurrency - this.inFlight - this.ready.length;
  }

  private pump(): Promise<void> {
    if (this.pumping) {
      this.again = true;
      return this.pumping;
    }
    this.pumping = this.claimWhileThereIsWork().finally(() => {
      this.pumping = undefined;
      this.schedule();
    });
    return this.pumping;
  }

  private async claimWhileThereIsWork(): Promise<void> {
    // A server of backends without webhooks never asks the database anything.
    if (this.targets.length === 0) return;
    let found = false;
    do {
      this.again = false;
      for (let turn = 0; turn < this.targets.length && this.running; turn++) {
        const target = this.targets[(this.rotation + turn) % this.targets.length]!;
        if ((this.resting.get(restKey(target)) ?? 0) > Date.now()) continue;
        const room = Math.min(MOST_CLAIMED, this.room());
        if (room < 1) break;
        const limit = 2 ** Math.floor(Math.log2(room));
        let rows: Claimed[];
        let parked: number;
        try {
          ({ claimed: rows, parked } = await claim(this.db, target, limit, {
            serverId: this.serverId,
            seconds: this.settings.leaseSeconds,
            retryWindowSeconds: this.settings.retryWindowSeconds,
          }));
        } catch (error) {
          this.warn(error, 'cannot claim events: the database did not answer; trying again');
          this.busy = false;
          return;
        }
        for (const row of rows) this.ready.push({ row, target });
        this.startReady();
        if (rows.length > 0) found = true;
        // A full batch (claimed, or parked behind their keys' heads): there may be more of this webhook's.
        if (rows.length + parked === limit) this.again = true;
      }
      this.rotation++;
    } while (this.again && this.running && this.room() >= 1);
    this.busy = found;
  }

  /** Idle: look again after `pollMs`. Busy: each delivery that ends, and each batch of outcomes written, looks again. */
  private schedule(): void {
    if (!this.running || this.timer !== undefined || this.targets.length === 0) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.pump();
    }, this.settings.pollMs);
    this.timer.unref();
  }

  /** Starts ready events while slots are free; those of a resting webhook go back to the outbox, due at once for any server. */
  private startReady(): void {
    while (this.inFlight < this.settings.concurrency && this.ready.length > 0) {
      const next = this.ready.shift()!;
      if ((this.resting.get(restKey(next.target)) ?? 0) > Date.now()) void this.handBack(next);
      else this.deliver(next);
    }
  }

  private async handBack({ row }: Leased): Promise<void> {
    await release(this.db, [row.id], this.serverId).catch((error: unknown) => this.warn(error, 'cannot hand an event back; its lease ends'));
  }

  private deliver({ row, target }: Leased): void {
    this.inFlight++;
    const started = performance.now();
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = {
      'webhook-id': row.msg_id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signature(target.keys, row.msg_id, timestamp, row.payload),
    };
    void this.sender.send(target.url, headers, row.payload).then((attempt) => {
      this.inFlight--;
      this.outcomes.push({ row, target, attempt, ms: performance.now() - started });
      if (this.outcomes.length >= FLUSH_AT) void this.flush();
      else this.flushTimer ??= setTimeout(() => void this.flush(), FLUSH_MS);
      if (this.running) this.startReady();
      // While there is work, claim more as soon as half the room is free, not at the next poll.
      if (this.running && this.busy && this.room() >= this.settings.concurrency / 2) void this.pump();
      if (this.inFlight === 0) this.drained?.();
    });
  }

  /** Writes the outcomes waiting, then looks for more work (the next event of a key waits for its predecessor's). */
  private flush(): Promise<void> {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.flushing) return this.flushing.then(() => this.flush());
    if (this.outcomes.length === 0) return Promise.resolve();
    const batch = this.outcomes.splice(0);
    this.flushing = recordOutcomes(this.recorder, batch).finally(() => {
      this.flushing = undefined;
      if (this.running) void this.pump();
    });
    return this.flushing;
  }

  /** A webhook asked to slow down: this server claims none of its events for a while (its Retry-After, or the first retry's delay). */
  private rest(target: Target, retryAfterMs: number | undefined): void {
    const until = Date.now() + Math.min(this.settings.retryMaxMs, retryAfterMs ?? this.settings.retryBaseMs);
    const key = restKey(target);
    if ((this.resting.get(key) ?? 0) < until) this.resting.set(key, until);
  }

  /** Said once in 10 s at most: a database that is down would otherwise write a line per poll. */
  private warn(error: unknown, message: string): void {
    if (Date.now() < this.quietUntil) return;
    this.quietUntil = Date.now() + 10_000;
    const missing = errnoOf(error) === NO_TABLE;
    this.logger.warn({ error: (error as Error).message }, missing ? 'events: the table xmlrest_outbox is missing (run xmlrest db init)' : `events: ${message}`);
  }
}

function restKey(target: Target): string {
  return `${target.backend} ${target.url}`;
}
