import { HttpError } from './errors.js';

/**
 * Failed-login limits (OWASP API2): after `perUser` failed password checks
 * for one user name, or `perAddress` from one client address, within
 * `windowSeconds`, further attempts answer 429 with Retry-After until the
 * window ends, even with the right password. Counters live in this process;
 * with several servers each counts its own share of the attempts.
 */
export interface LoginLimits {
  perUser: number;
  perAddress: number;
  windowSeconds: number;
}

export const DEFAULT_LOGIN_LIMITS: LoginLimits = { perUser: 10, perAddress: 50, windowSeconds: 300 };

/** Most counters kept; the oldest go first, so a flood of names cannot exhaust memory. */
const MAX_COUNTERS = 100_000;

interface Counter {
  failures: number;
  resetAt: number;
}

export class LoginLimiter {
  private readonly users = new Map<string, Counter>();
  private readonly addresses = new Map<string, Counter>();

  constructor(private readonly limits: LoginLimits = DEFAULT_LOGIN_LIMITS) {}

  /** Throws 429 when this user name or address has failed too often; a user name may be unknown (undefined). */
  check(user: string | undefined, address: string): void {
    const now = Date.now();
    const blockedUntil = Math.max(
      user === undefined ? 0 : this.blocked(this.users, user, this.limits.perUser, now),
      this.blocked(this.addresses, address, this.limits.perAddress, now),
    );
    if (blockedUntil > now) {
      throw new HttpError(429, 'Too many failed logins: try again later', { 'Retry-After': String(Math.ceil((blockedUntil - now) / 1000)) });
    }
  }

  failed(user: string | undefined, address: string): void {
    if (user !== undefined) this.count(this.users, user);
    this.count(this.addresses, address);
  }

  /** A right password clears that user's count (not the address's: one address may guess for many users). */
  succeeded(user: string): void {
    this.users.delete(user);
  }

  private blocked(counters: Map<string, Counter>, key: string, limit: number, now: number): number {
    if (limit <= 0) return 0;
    const counter = counters.get(key);
    if (!counter) return 0;
    if (counter.resetAt <= now) {
      counters.delete(key);
      return 0;
    }
    return counter.failures >= limit ? counter.resetAt : 0;
  }

  private count(counters: Map<string, Counter>, key: string): void {
    const now = Date.now();
    const counter = counters.get(key);
    if (counter && counter.resetAt > now) {
      counter.failures++;
      return;
    }
    if (counters.size >= MAX_COUNTERS) counters.delete(counters.keys().next().value!);
    counters.set(key, { failures: 1, resetAt: now + this.limits.windowSeconds * 1000 });
  }
}
