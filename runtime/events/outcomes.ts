// The outcomes of a worker's deliveries written to the outbox in batches, logged and counted: apart from the
// worker (worker.ts), which claims and sends, so that each reads in one sitting.
import type { Database } from '../db/index.js';
import type { Logger } from '../log.js';
import { type DeliverySettings, MOST_CLAIMED, retryDelay } from './delivery-settings.js';
import { type Claimed, markAttemptFailed, markDelivered, markGone, releaseNext, type Target } from './outbox.js';
import type { Attempt } from './sender.js';

/** A webhook this server delivers to, with its signing keys. */
export interface DeliveryTarget extends Target {
  keys: readonly Buffer[];
}

/** What the worker tells the metrics. */
export interface DeliveryCounts {
  counted(outcome: 'delivered' | 'retry' | 'failed' | 'gone'): void;
}

export type Outcome = { row: Claimed; target: DeliveryTarget; attempt: Attempt; ms: number };

/** Answers that ask the sender to slow down (Standard Webhooks, "Delivery success and failure"): the whole webhook rests. */
const THROTTLED = new Set([429, 502, 503, 504]);

/** What writing outcomes needs of its worker. */
export interface OutcomeRecorder {
  db: Database;
  logger: Logger;
  counts: DeliveryCounts;
  settings: DeliverySettings;
  serverId: string;
  /** A webhook asked to slow down: the worker claims none of its events for a while. */
  rest(target: Target, retryAfterMs: number | undefined): void;
  /** Said once in a while at most. */
  warn(error: unknown, message: string): void;
}

/** Writes a batch of outcomes: delivered ones a statement per status, failures one by one; then frees the keys they held. */
export async function recordOutcomes(worker: OutcomeRecorder, batch: Outcome[]): Promise<void> {
  const delivered = new Map<number, Outcome[]>();
  for (const outcome of batch) {
    const { attempt } = outcome;
    if (attempt.outcome === 'delivered') delivered.set(attempt.status, [...(delivered.get(attempt.status) ?? []), outcome]);
  }
  // Keys whose head is done: their next event, parked behind it by a claim, is due at once (outbox.ts `releaseNext`).
  const done: Outcome[] = [];
  const logged = worker.logger.isLevelEnabled('info');
  try {
    for (const [status, outcomes] of delivered) {
      for (let start = 0; start < outcomes.length; start += MOST_CLAIMED) {
        const chunk = outcomes.slice(start, start + MOST_CLAIMED);
        await markDelivered(
          worker.db,
          chunk.map((outcome) => outcome.row.id),
          status,
          worker.serverId,
        );
      }
      for (const outcome of outcomes) {
        worker.counts.counted('delivered');
        done.push(outcome);
        if (logged) worker.logger.info(fields(outcome), 'event delivered');
      }
    }
    for (const outcome of batch) {
      const { attempt, row, target } = outcome;
      if (attempt.outcome === 'gone') {
        await markGone(worker.db, row.id, target, worker.serverId);
        worker.counts.counted('gone');
        worker.logger.warn(
          fields(outcome),
          'webhook stopped: its receiver answered 410 Gone; nothing more is sent to it until an operator retries (xmlrest events retry)',
        );
      } else if (attempt.outcome === 'failed') {
        const delayMs = Math.min(worker.settings.retryMaxMs, Math.max(retryDelay(row.attempts, worker.settings), attempt.retryAfterMs ?? 0));
        if (attempt.status !== null && THROTTLED.has(attempt.status)) worker.rest(target, attempt.retryAfterMs);
        const recorded = await markAttemptFailed(worker.db, row.id, { status: attempt.status, error: attempt.error, delayMs }, worker.serverId);
        if (recorded === 'lost') {
          // Its lease ended meanwhile and another server took it: that server's outcome is the one that counts.
          worker.logger.warn({ ...fields(outcome), error: attempt.error }, 'event delivery failed after its lease ended: another server has it now');
          continue;
        }
        worker.counts.counted(recorded);
        if (recorded === 'failed') {
          done.push(outcome);
          worker.logger.error(
            { ...fields(outcome), error: attempt.error },
            'event not delivered within the retry window: kept as failed (xmlrest events retry)',
          );
        } else worker.logger.warn({ ...fields(outcome), error: attempt.error, retryInMs: delayMs }, 'event delivery failed; it will be tried again');
      }
    }
    await releaseKeys(worker, done);
  } catch (error) {
    // The leases end and another server (or this one) delivers those events again: at least once, never lost.
    worker.warn(error, 'cannot record delivery outcomes: the database did not answer; those events will be delivered again');
  }
}

/** The next event of each key whose head is done, per webhook. */
async function releaseKeys(worker: OutcomeRecorder, done: readonly Outcome[]): Promise<void> {
  const byTarget = new Map<DeliveryTarget, string[]>();
  for (const { row, target } of done) if (row.order_key !== null) byTarget.set(target, [...(byTarget.get(target) ?? []), row.order_key]);
  for (const [target, keys] of byTarget) await releaseNext(worker.db, target, keys);
}

/** What a delivery's log line says: the event id first, never the body, nor the URL's query (where secrets travel). */
function fields({ row, target, attempt, ms }: Outcome) {
  const url = new URL(target.url);
  return {
    eventId: row.msg_id,
    outboxId: row.id,
    event: row.event,
    backend: target.backend,
    webhook: `${url.origin}${url.pathname}`,
    attempt: row.attempts,
    status: attempt.status ?? undefined,
    ms: Math.round(ms * 10) / 10,
  };
}
