/**
 * A value now or a promise of it: the memory store answers at once, the database's with a promise, and the limiter
 * (limiter.ts) makes no promise where none is needed, as every login goes through it.
 */
export type Maybe<T> = T | Promise<T>;

/** `next(value)` at once when the store answered at once, else when its promise does: no promise where none is needed.
 * Not named `then`: a module that exports `then` is a thenable to `await import()`, and never loads. */
export function andThen<T, U>(value: Maybe<T>, next: (value: T) => Maybe<U>): Maybe<U> {
  return value instanceof Promise ? value.then(next) : next(value);
}

/** Every write done; no promise to wait on when the store answered at once (the memory store always does). */
export function all(writes: (void | Promise<void>)[]): void | Promise<void> {
  if (writes.some((write) => write instanceof Promise)) return Promise.all(writes).then(() => undefined);
}

/** Waits `ms`; no promise at all for no wait. */
export function pause(ms: number): void | Promise<void> {
  if (ms > 0) return new Promise((resolve) => setTimeout(resolve, ms));
}
