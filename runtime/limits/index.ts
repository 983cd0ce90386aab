import { digestKey } from '../auth/digest.js';
import type { RateLimit } from '../contract.js';
import { HttpError } from '../errors.js';
import { type LeaseStore, MAX_LEASE } from './store.js';

export { DatabaseLeases, type LeaseStore, RATE_LIMIT_TABLE } from './store.js';

/**
 * Rate limits (docs/internals/contract.md §10): at most `limit` calls per caller in
 * each window of `seconds`, the windows fixed (aligned to the epoch, as
 * GitHub's and the IETF RateLimit fields' reset), counted for the whole
 * deployment. Each server admits calls from a lease it took from the
 * database (store.ts), a twentieth of the limit at a time, so that a call
 * costs a map lookup and an addition, and the database sees one statement
 * per lease; since leases never pass the limit together, no window admits
 * more than the limit across every server (a server may end a window with
 * part of its lease unused: the others are refused a little early, never
 * late). When the database cannot be asked, calls are admitted (fail open:
 * a limit must never turn a database fault into refusals), for a second at a
 * time, and the metric and the log say so.
 */

/** What a limited route tells its caller, on every answer once the caller is known. */
export interface Verdict {
  allowed: boolean;
  limit: number;
  /** Calls left in this window, for the whole deployment, as far as this server knows. */
  remaining: number;
  /** Seconds until the window ends. */
  reset: number;
}

/** What the limiter tells the rest of the server: a database fault it let calls through (metrics, the log). */
export interface LimitEvents {
  failedOpen(error: unknown): void;
}

interface Bucket {
  /** The window's start, seconds since the epoch. */
  window: number;
  /** Calls this server may admit in the window (its leases), and those it has admitted. */
  granted: number;
  used: number;
  /** The window's calls leased by every server, at the last lease. */
  leased: number;
  /** The database granted nothing more: every call is refused until the window ends. */
  exhausted: boolean;
  pending: Promise<void> | undefined;
  /** After a database fault, calls are admitted without asking until then (ms). */
  openUntil: number;
}

/** Callers remembered at once; past it, the oldest are forgotten (a forgotten caller leases afresh: never more than the limit). */
const MAX_BUCKETS = 100_000;
/** How long a database fault lets calls through before the database is asked again. */
const FAIL_OPEN_MS = 1000;

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly store: LeaseStore,
    private readonly events: LimitEvents,
  ) {}

  /**
   * Counts one call of the caller `key` against `rule`: at once, without a promise, while this server's lease
   * lasts (most calls), else after a lease from the database.
   */
  take(key: string, rule: RateLimit, now = Date.now()): Verdict | Promise<Verdict> {
    const window = Math.floor(now / 1000 / rule.seconds) * rule.seconds;
    let bucket = this.buckets.get(key);
    if (bucket === undefined || bucket.window !== window) {
      bucket = { window, granted: 0, used: 0, leased: 0, exhausted: false, pending: undefined, openUntil: 0 };
      if (this.buckets.size >= MAX_BUCKETS) this.buckets.delete(this.buckets.keys().next().value!);
      this.buckets.set(key, bucket);
    }
    return this.admit(bucket, key, rule, now);
  }

  /** Removes the database's rows of windows long over (every server calls it now and then). */
  prune(now = Date.now()): Promise<void> {
    return this.store.prune(Math.floor(now / 1000) - 2 * 3600);
  }

  private admit(bucket: Bucket, key: string, rule: RateLimit, now: number): Verdict | Promise<Verdict> {
    if (bucket.used < bucket.granted || now < bucket.openUntil) {
      if (bucket.used >= bucket.granted) bucket.granted++;
      bucket.used++;
      return verdict(true, bucket, rule, now);
    }
    if (bucket.exhausted) return verdict(false, bucket, rule, now);
    bucket.pending ??= this.lease(bucket, key, rule);
    return bucket.pending.then(() => this.admit(bucket, key, rule, Date.now()));
  }

  private async lease(bucket: Bucket, key: string, rule: RateLimit): Promise<void> {
    const want = Math.min(MAX_LEASE, Math.max(1, Math.ceil(rule.limit / 20)));
    try {
      const { granted, used } = await this.store.lease(digestKey(key), bucket.window, want, rule.limit);
      bucket.granted += granted;
      bucket.leased = used;
      if (granted === 0) bucket.exhausted = true;
    } catch (error) {
      bucket.openUntil = Date.now() + FAIL_OPEN_MS;
      this.events.failedOpen(error);
    } finally {
      bucket.pending = undefined;
    }
  }
}

function verdict(allowed: boolean, bucket: Bucket, rule: RateLimit, now: number): Verdict {
  return {
    allowed,
    limit: rule.limit,
    // The deployment's calls are the leases; this server's unused part of its own is still to be had.
    remaining: Math.max(0, rule.limit - bucket.leased + (bucket.granted - bucket.used)),
    reset: Math.max(1, Math.ceil(bucket.window + rule.seconds - now / 1000)),
  };
}

/** The three RateLimit fields every answer of a limited route carries (draft-ietf-httpapi-ratelimit-headers). */
export function rateLimitHeaders(verdict: Verdict): Record<string, string> {
  return { 'RateLimit-Limit': String(verdict.limit), 'RateLimit-Remaining': String(verdict.remaining), 'RateLimit-Reset': String(verdict.reset) };
}

/** The 429 of a call over its limit, with Retry-After and the RateLimit fields. */
export function tooManyRequests(verdict: Verdict): HttpError {
  return new HttpError(
    429,
    'Too many requests: the rate limit of this route is reached',
    { 'Retry-After': String(verdict.reset), ...rateLimitHeaders(verdict) },
    'rate_limited',
  );
}

/**
 * Counts a call of `caller` on a limited route: sets the RateLimit fields on the answer, or throws the 429.
 * At once, without a promise, while the lease lasts.
 */
export function countCall(limiter: RateLimiter, caller: string, rule: RateLimit, answer: { set(fields: Record<string, string>): void }): void | Promise<void> {
  const taken = limiter.take(caller, rule);
  if (taken instanceof Promise) return taken.then((verdict) => admitOrRefuse(verdict, answer));
  admitOrRefuse(taken, answer);
}

function admitOrRefuse(verdict: Verdict, answer: { set(fields: Record<string, string>): void }): void {
  if (!verdict.allowed) throw tooManyRequests(verdict);
  answer.set(rateLimitHeaders(verdict));
}
