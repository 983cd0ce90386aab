import { createHash, randomUUID } from 'node:crypto';
import { Counter, Gauge, type Registry } from 'prom-client';
import { type BackendModule, receives } from '../contract.js';
import { type Database, errnoOf, NO_COLUMN, NO_PROCEDURE, NO_TABLE, type Queryable, type SqlValue } from '../db/index.js';
import { HttpError } from '../errors.js';
import type { Chore } from '../housekeeping.js';
import type { Logger } from '../log.js';
import { commitEvent, type EventRow, insertEvents } from './outbox.js';
import { outboxStats, pruneDelivered } from './outbox-admin.js';
import { OUTBOX_COMMIT_PROCEDURE } from './outbox-schema.js';
import { parseWebhookSecrets } from './signer.js';
import { DEFAULT_DELIVERY, type DeliverySettings, type DeliveryTarget, DeliveryWorker } from './worker.js';

/**
 * Events and webhooks (docs/internals/contract.md §12), the runtime's room for them:
 * - outbox.ts: the statements of the request and the deliveries on the outbox (the insert, claims, outcomes); its tables
 *   in outbox-schema.ts, and the operators' and housekeeping's statements (lists, retries, pruning) in outbox-admin.ts;
 * - signer.ts: Standard Webhooks secrets and signatures;
 * - sender.ts: one delivery attempt over HTTP;
 * - worker.ts: the deliveries of one server, shared with the others through the outbox.
 * The rest of the runtime sees `Events`: `event` as a request emits, `commit` as its transaction commits, `emitted` once it did.
 */
export type { EventRow } from './outbox.js';
export { listOutbox, type OutboxFilter, type OutboxRow, retryFailed, stoppedWebhooks } from './outbox-admin.js';
export { OUTBOX_COMMIT_PROCEDURE, OUTBOX_ROUTINES, OUTBOX_TABLES } from './outbox-schema.js';
export { MAKE_A_WEBHOOK_SECRET, parseWebhookSecrets } from './signer.js';
export { DEFAULT_DELIVERY, type DeliverySettings, retryDelay } from './worker.js';

export interface EventsOptions {
  database: Database;
  logger: Logger;
  /** Where the metrics go (the server's registry). */
  registry: Registry;
  /** Environment values by name: each webhook's `secret` names one. */
  secrets: Readonly<Record<string, string | undefined>>;
  delivery?: Partial<DeliverySettings>;
  /** Whether this server delivers (EVENTS_DELIVERY); it emits either way. Default true. */
  deliver?: boolean;
  /** Largest event body, in bytes (EVENTS_MAX_BYTES). */
  maxBytes?: number;
  /** This server's id, as the lease names it (xmlrest_server's). */
  serverId: string;
}

/**
 * An event whose body passes EVENTS_MAX_BYTES: the request fails with 413 and rolls back, rather than send part
 * of it. The size is the client's doing (a long text stored and sent back), so it is a 4xx, not a fault.
 */
function eventTooLarge(): HttpError {
  return new HttpError(413, 'The change is too large to be sent as an event: send smaller values', {}, 'event_too_large');
}

export const DEFAULT_EVENT_BYTES = 64 * 1024;
/** An order key longer than this is kept as its digest: equal keys stay equal, and the column stays bounded. */
const ORDER_KEY_CHARS = 200;

export class Events {
  private readonly worker: DeliveryWorker | undefined;
  /** Each backend's webhook URLs for each event type, worked out once. */
  private urls = new Map<string, Map<string, readonly string[]>>();
  private webhooks = new Map<string, BackendModule['webhooks']>();
  private readonly maxBytes: number;
  /** When each event type last said in the log that it was too large: once a minute at most. */
  private readonly tooLargeSaid = new Map<string, number>();
  private readonly retentionSeconds: number;
  /** The database answered that OUTBOX_ROUTINES are missing: events are inserted apart from their COMMIT until a restart. */
  private noCommitProcedure = false;
  private readonly stats: { at: number; depth: number; oldestSeconds: number; pending: Promise<void> | undefined } = {
    at: 0,
    depth: 0,
    oldestSeconds: 0,
    pending: undefined,
  };

  constructor(private readonly options: EventsOptions) {
    this.maxBytes = options.maxBytes ?? DEFAULT_EVENT_BYTES;
    const delivery = { ...DEFAULT_DELIVERY, ...options.delivery };
    this.retentionSeconds = delivery.retentionSeconds;
    const registers = [options.registry];
    const outcomes = new Counter({
      name: 'xmlrest_events_deliveries_total',
      help: 'Webhook delivery attempts by outcome: delivered (2xx), retry (failed, tried again later), failed (kept as failed), gone (410: webhook stopped)',
      labelNames: ['outcome'],
      registers,
    });
    for (const outcome of ['delivered', 'retry', 'failed', 'gone']) outcomes.inc({ outcome }, 0);
    // Read from the database when scraped (every server sees the same outbox), at most every 2 s.
    const refresh = () => this.refreshStats();
    const stats = this.stats;
    const gauge = (name: string, help: string, read: () => number) =>
      new Gauge({
        name,
        help,
        registers,
        async collect() {
          await refresh();
          this.set(read());
        },
      });
    gauge('xmlrest_events_outbox_depth', 'Events not delivered yet (pending, in flight or held by a stopped webhook), in the whole outbox', () => stats.depth);
    gauge('xmlrest_events_oldest_pending_seconds', 'Age of the oldest event not delivered yet, in seconds (0 when none)', () => stats.oldestSeconds);
    if (options.deliver !== false) {
      this.worker = new DeliveryWorker(options.database, options.logger, { counted: (outcome) => outcomes.inc({ outcome }) }, delivery, options.serverId);
    }
  }

  /**
   * The backends served now: their webhooks' URLs by event type, and their signing keys from the
   * environment. A webhook whose secret is missing or malformed throws, naming the variable and never its
   * value: the server refuses to start (or a reload to happen) rather than send unsigned events.
   */
  configure(backends: readonly BackendModule[]): void {
    const targets: DeliveryTarget[] = [];
    const problems: string[] = [];
    for (const backend of backends) {
      for (const webhook of backend.webhooks ?? []) {
        const parsed = parseWebhookSecrets(this.options.secrets[webhook.secret]);
        // The URL's origin only: its path or query may hold a token, and it may come from the environment (docs/internals/contract.md §7).
        if ('problem' in parsed)
          problems.push(
            `${webhook.secret} ${parsed.problem} (backend ${backend.name}'s webhook to ${URL.canParse(webhook.url) ? new URL(webhook.url).origin : webhook.url})`,
          );
        else targets.push({ backend: backend.name, url: webhook.url, keys: parsed.keys });
      }
    }
    if (problems.length > 0) throw new Error(problems.join('; '));
    this.webhooks = new Map(backends.map((backend) => [backend.name, backend.webhooks]));
    this.urls = new Map();
    this.worker?.setTargets(targets);
  }

  /** Starts this server's deliveries (unless EVENTS_DELIVERY=off). */
  start(): void {
    this.worker?.start();
  }

  /**
   * The rows of an event for every webhook of `backend` that receives `type`: none when no webhook does. The
   * body is made once, here, and sent as it is on every attempt (its signature covers it); one over
   * EVENTS_MAX_BYTES refuses the request now (413), before anything commits. `commit` writes the rows.
   */
  event(backend: string, type: string, data: object, key: SqlValue, tenant?: string): EventRow[] {
    const urls = this.urlsOf(backend, type);
    if (urls.length === 0) return [];
    const timestamp = new Date().toISOString();
    // The key goes into the payload too: an event made of a write's result would not say which row it is about. A
    // tenant backend's route says whose tenant it was (docs/internals/contract.md §14): a receiver serving many keeps them apart.
    const keyed = key === undefined ? { type, timestamp } : { type, timestamp, key: keyValue(key) };
    const payload = JSON.stringify(tenant === undefined ? { ...keyed, data } : { ...keyed, tenant, data });
    if (payload.length > this.maxBytes / 3 && Buffer.byteLength(payload) > this.maxBytes) throw this.tooLarge(type, Buffer.byteLength(payload));
    const event = { msgId: messageId(), backend, type, orderKey: orderKey(type, key), payload };
    return urls.map((url) => ({ ...event, url }));
  }

  /**
   * A request's transaction commits with its events (`Database.transaction`'s `commit`): one row is written by
   * the statement that commits too (outbox.ts `commitEvent`), so that an event costs its request no round
   * trip of its own; several rows by one insert, and the COMMIT follows (false). On a database whose
   * `xmlrest db init` predates that statement, the rows are inserted as several are, and the log says once to run it.
   */
  commit(db: Queryable, rows: readonly EventRow[]): Promise<boolean> | false {
    return rows.length === 0 ? false : this.write(db, rows);
  }

  private async write(db: Queryable, rows: readonly EventRow[]): Promise<boolean> {
    try {
      if (rows.length === 1 && !this.noCommitProcedure) {
        try {
          await commitEvent(db, rows[0]!);
          return true;
        } catch (error) {
          if (errnoOf(error) !== NO_PROCEDURE) throw error;
          this.noCommitProcedure = true;
          this.options.logger.warn(
            { procedure: OUTBOX_COMMIT_PROCEDURE },
            'events: the procedure that writes an event with its COMMIT is missing (run xmlrest db init); each event takes a round trip of its own meanwhile',
          );
        }
      }
      await insertEvents(db, rows);
      return false;
    } catch (error) {
      throw withHint(error);
    }
  }

  /** Removes one bounded batch of delivered events past the retention (runtime/housekeeping.ts: one server at a time). */
  pruning(): Chore {
    const batch = 5000;
    return {
      name: 'delivered events',
      everyMs: Math.min(60_000, this.retentionSeconds * 1000),
      run: async () => {
        const removed = await pruneDelivered(this.options.database, this.retentionSeconds, batch);
        return { removed, more: removed >= batch };
      },
    };
  }

  private tooLarge(type: string, bytes: number): HttpError {
    if (Date.now() >= (this.tooLargeSaid.get(type) ?? 0)) {
      this.tooLargeSaid.set(type, Date.now() + 60_000);
      this.options.logger.warn(
        { event: type, bytes, maxBytes: this.maxBytes },
        'an event over EVENTS_MAX_BYTES refused its request (413): emit a smaller step (the ids and what receivers need, not whole rows of text)',
      );
    }
    return eventTooLarge();
  }

  /** A request that emitted has committed: this server looks for due events now rather than at its next poll. */
  emitted(): void {
    this.worker?.nudge();
  }

  /** A graceful stop: no more claims; deliveries in flight end and their outcomes are written. */
  async stop(): Promise<void> {
    await this.worker?.stop();
  }

  private urlsOf(backend: string, type: string): readonly string[] {
    let byType = this.urls.get(backend);
    if (byType === undefined) this.urls.set(backend, (byType = new Map()));
    let urls = byType.get(type);
    if (urls === undefined) {
      urls = (this.webhooks.get(backend) ?? []).filter((webhook) => receives(webhook, type)).map((webhook) => webhook.url);
      byType.set(type, urls);
    }
    return urls;
  }

  private refreshStats(): Promise<void> {
    if (Date.now() - this.stats.at < 2000) return Promise.resolve();
    this.stats.pending ??= outboxStats(this.options.database)
      .then(
        (read) => void Object.assign(this.stats, read, { at: Date.now() }),
        () => undefined,
      )
      .finally(() => (this.stats.pending = undefined));
    return this.stats.pending;
  }
}

/** A missing table as what to do about it: the request still fails (500), and its log line says to run xmlrest db init. */
function withHint(error: unknown): unknown {
  const errno = errnoOf(error);
  if (errno !== NO_TABLE && errno !== NO_COLUMN) return error;
  return new Error('the table xmlrest_outbox is missing or made by an earlier version: run xmlrest db init', { cause: error });
}

/** Every webhook secret the backends need, by the variable each names (runtime/config.ts checks them at start). */
export function webhookSecretsNeeded(backends: readonly BackendModule[]): { variable: string; backend: string; url: string }[] {
  return backends.flatMap((backend) => (backend.webhooks ?? []).map((webhook) => ({ variable: webhook.secret, backend: backend.name, url: webhook.url })));
}

/**
 * A Standard Webhooks message id: unique per event (122 random bits), the same on every attempt and for every
 * webhook; no `.`. randomUUID draws from a pool of random bytes rather than asking the system each time.
 */
function messageId(): string {
  return `msg_${randomUUID().replaceAll('-', '')}`;
}

/** A key as the payload holds it: a number or a text as it is, a time as ISO 8601, bytes as hex. */
function keyValue(key: SqlValue): string | number | null {
  if (key === null) return null;
  if (typeof key === 'number' || typeof key === 'string') return key;
  return key instanceof Date ? key.toISOString() : Buffer.isBuffer(key) ? key.toString('hex') : String(key);
}

/**
 * The order key of an event (docs/internals/contract.md §12): the first word of its type and the key's value, so that
 * `order.placed` and `order.shipped` of order 7 are delivered in order, and `invoice.paid` of invoice 7 apart.
 */
function orderKey(type: string, key: SqlValue): string | null {
  if (key === undefined || key === null) return null;
  const value = key instanceof Date ? key.toISOString() : Buffer.isBuffer(key) ? key.toString('hex') : String(key);
  const text = `${type.split('.')[0]}:${value}`;
  return text.length <= ORDER_KEY_CHARS ? text : `sha256:${createHash('sha256').update(text).digest('hex')}`;
}
