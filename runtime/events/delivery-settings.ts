// How deliveries are paced and bounded, and the delay between attempts: apart from the worker, since the
// configuration reads them and the outcomes' writer uses them too.

/** How deliveries are paced and bounded (runtime/config.ts reads them from EVENTS_*; tests shorten them). */
export interface DeliverySettings {
  /** How often an idle server looks for due events; a server that emitted one looks at once. */
  pollMs: number;
  /** How long a claimed event is this server's: past it, another server may take it (a killed server's events). */
  leaseSeconds: number;
  /** Longest one attempt may take, the answer included. */
  timeoutMs: number;
  /** The first retry waits about this long, each next one twice as long (with jitter), up to `retryMaxMs`. */
  retryBaseMs: number;
  retryMaxMs: number;
  /** From the first attempt: an event not delivered within this is kept as failed. */
  retryWindowSeconds: number;
  /** Delivered events are removed after this (by one server at a time: runtime/housekeeping.ts). */
  retentionSeconds: number;
  /** Most deliveries in flight at once on this server. */
  concurrency: number;
}

export const DEFAULT_DELIVERY: DeliverySettings = {
  pollMs: 1000,
  leaseSeconds: 60,
  timeoutMs: 10_000,
  retryBaseMs: 5000,
  retryMaxMs: 3_600_000,
  retryWindowSeconds: 86_400,
  retentionSeconds: 7 * 86_400,
  concurrency: 16,
};

/**
 * The delay before the attempt after attempt `attempt` (1 for the first): exponential, capped, with "equal
 * jitter" (half of it fixed, half random), so that the retries of events that failed together spread out.
 */
export function retryDelay(attempt: number, settings: Pick<DeliverySettings, 'retryBaseMs' | 'retryMaxMs'>, random = Math.random): number {
  const ceiling = Math.min(settings.retryMaxMs, settings.retryBaseMs * 2 ** Math.min(attempt - 1, 40));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/** Claims per statement at most this many rows (and a power of two: a few statement texts). */
export const MOST_CLAIMED = 64;
