import { HttpError } from '../../errors.js';
import type { Held } from './failure-store.js';

/** The limiter's answers when it refuses (limiter.ts): each a status, its Retry-After and its reason, in one place. */
export function refuse(counted: Held): never {
  throw tooMany(counted.resetAt);
}

export function refuseSessions(counted: Held): never {
  throw new HttpError(
    429,
    'Too many sign-ins for this user: try again later',
    { 'Retry-After': String(Math.max(1, Math.ceil((counted.resetAt - Date.now()) / 1000))) },
    'too_many_sessions',
  );
}

export function tooMany(resetAt: number): HttpError {
  return new HttpError(
    429,
    'Too many failed logins: try again later',
    { 'Retry-After': String(Math.max(1, Math.ceil((resetAt - Date.now()) / 1000))) },
    'rate_limited',
  );
}

/** Out of time waiting for the checks that fill a limit: no attempt, as when the hashing is too busy (hashing.ts). */
export function busy(): HttpError {
  return new HttpError(503, 'Too many password checks at once: try again shortly', { 'Retry-After': '1' }, 'login_busy');
}
