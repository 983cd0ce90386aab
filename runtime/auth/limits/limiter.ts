import { digestKey } from '../digest.js';
import { addressGroup } from './address.js';
import { type FailureStore, type Held, MemoryFailureStore } from './failure-store.js';
import { all, andThen, type Maybe, pause } from './maybe.js';
import { busy, refuse, refuseSessions, tooMany } from './refusals.js';

/**
 * Failed-login limits (OWASP API2): after `perUser` failed password checks
 * for one user name from one client, or `perAddress` from one client
 * whatever the names, within `windowSeconds`, further attempts from that
 * client answer 429 with Retry-After until the window ends, even with the
 * right password. A client is an address, an IPv6 one by its /64
 * (address.ts). The user signing in from anywhere else is never stopped: an
 * attacker's failures cannot lock the real user out. Guesses spread over many
 * clients are slowed instead: once a user name has failed `perUser` times
 * from all clients together, each further check of it waits, twice as long
 * each time from BACKOFF_BASE_MS up to `backoffMaxMs`, and then goes on. The
 * counters live in this process by default; servers behind one load balancer
 * can share them in the database (LOGIN_COUNTERS=database).
 */
export interface LoginLimits {
  perUser: number;
  perAddress: number;
  windowSeconds: number;
  /** Longest wait before a check of a user name that failed often (0: no backoff); default 3 s. */
  backoffMaxMs?: number;
  /**
   * Token requests that begin a session, per user of a backend within `windowSeconds`, right password or not (0: no
   * limit); default 60. Each one is a row every server may list for an hour once ended (docs/internals/contract.md §10).
   */
  sessionsPerUser?: number;
}

export const DEFAULT_LOGIN_LIMITS: LoginLimits = { perUser: 10, perAddress: 50, windowSeconds: 300, backoffMaxMs: 3000, sessionsPerUser: 60 };

/** The first wait of the backoff, doubled with each further failure of the name. */
export const BACKOFF_BASE_MS = 250;

/**
 * Longest an attempt waits for the outcome of the checks that fill its limit, before 503: each of them ends well
 * within it (its statement has a deadline, and its hash a bounded queue, hashing.ts).
 */
export const OUTCOME_WAIT_MS = 5000;

/**
 * How soon a wait looks again when the counts are shared by other servers, whose checks' ends wake no one here: at
 * first, then twice as long each time up to POLL_MAX_MS, so that a crowd of waiters is not a flood of statements.
 */
const POLL_MS = 25;
const POLL_MAX_MS = 400;
/** Most attempts one server keeps waiting for one key's outcomes; more answer 503 at once, as an over-long wait does. */
const MOST_WAITING = 64;

/** One password check: against which user tables, for which user name (when the request named one), from where. */
export interface LoginAttempt {
  /** The user tables the name is looked up in (backends reading the same tables count together). */
  directory: string;
  user: string | undefined;
  address: string;
  /** Its counters' keys, once made (a check's begin and end share them). */
  keys?: AttemptKeys;
}

interface AttemptKeys {
  /** The user name from this client. */
  account: string | undefined;
  /** This client, whatever the name. */
  address: string | undefined;
  /** The user name from every client: the backoff's count. */
  name: string | undefined;
}

/**
 * A password check counts against its keys only once it failed (issue 39: counted while it ran and taken back
 * after, correct logins fired together passed `perUser` though not one failed, and were refused and slowed). So
 * that concurrent guesses cannot all slip past a limit before any has failed, each check holds a place while it
 * runs, and an attempt is admitted only while its key's failures and the places held, its own included, stay
 * within the limit: never more than `perUser` checks of one name from one client running or failed in the window.
 * An attempt over it only because of checks still running holds nothing and waits for their outcome (at most
 * OUTCOME_WAIT_MS, then 503); it is refused (429) once enough of them failed. The backoff follows the name's
 * failures alone, and an attempt that would reach it only through checks still running waits for them the same way.
 * Every `begin` that returns is ended by exactly one of `succeeded`, `failed` or `cancelled`.
 */
export class LoginLimiter {
  private readonly addressKeys = new Map<string, string>();
  /** Attempts waiting for a check of a key to end, by key: entries only while some wait, so as many as wait at most. */
  private readonly waiting = new Map<string, (() => void)[]>();

  constructor(
    private readonly limits: LoginLimits = DEFAULT_LOGIN_LIMITS,
    private readonly store: FailureStore = new MemoryFailureStore(),
  ) {}

  /**
   * Holds a place for this attempt; throws 429 when its client, or its user name from that client, has failed up
   * to the limit; waits for checks still running when they alone fill it; then waits as long as the name's
   * backoff asks. With the memory store, room, and no backoff due it answers at once, without a promise (every
   * login passes here); await it.
   */
  begin(attempt: LoginAttempt): void | Promise<void> {
    const keys = this.keys(attempt);
    const step = this.admit(keys);
    if (step === undefined) return;
    return this.proceed(keys, step, Date.now() + OUTCOME_WAIT_MS);
  }

  /** The password was right: the user name's failures at this client start over, and the places are given back. */
  succeeded(attempt: LoginAttempt): void | Promise<void> {
    const { account, address, name } = this.keys(attempt);
    const cleared = account === undefined ? undefined : this.store.clear(account);
    // Failures forgotten leave room for more than this one place: every waiter looks again.
    const ended = cleared instanceof Promise ? cleared.then(() => this.end(account, false)) : this.end(account, false, cleared === true);
    return all([ended, this.end(address, false), this.end(name, false)]);
  }

  /** The password was wrong: a failure of each of the attempt's keys. */
  failed(attempt: LoginAttempt): void | Promise<void> {
    const { account, address, name } = this.keys(attempt);
    return all([this.end(account, true), this.end(address, true), this.end(name, true)]);
  }

  /** No password was checked after all (the database failed, or the hashing was too busy): the places are given back. */
  cancelled(attempt: LoginAttempt): void | Promise<void> {
    const { account, address, name } = this.keys(attempt);
    return all([this.end(account, false), this.end(address, false), this.end(name, false)]);
  }

  /**
   * One pass over the attempt's keys, the address first (an address over its limit leaves nothing behind for the
   * names it sends): `undefined` when admitted, the milliseconds of its backoff when admitted after them, or the
   * key whose checks still running it must wait for, having given back every place it took. Throws 429.
   */
  private admit(keys: AttemptKeys): Maybe<Step | undefined> {
    const { perAddress, perUser, windowSeconds } = this.limits;
    return andThen(this.gate(keys.address, perAddress, []), (byAddress) => {
      if (byAddress !== undefined) return byAddress;
      return andThen(this.gate(keys.account, perUser, [keys.address]), (byAccount) => {
        const name = keys.name;
        if (byAccount !== undefined || name === undefined) return byAccount;
        return andThen(this.store.hold(name, windowSeconds), (byName) => {
          // Failed often: slowed, never refused, whatever else is running.
          if (byName.failures >= perUser) return this.backoffMs(byName.failures) || undefined;
          if (byName.failures + byName.held <= perUser) return undefined;
          return andThen(this.giveBack([name, keys.account, keys.address], name), () => ({ wait: name }));
        });
      });
    });
  }

  /** Takes a place at `key`: nothing more to do (`undefined`), or the key to wait for; 429 when it failed `limit` times. */
  private gate(key: string | undefined, limit: number, taken: (string | undefined)[]): Maybe<Step | undefined> {
    if (key === undefined) return undefined;
    return andThen(this.store.hold(key, this.limits.windowSeconds), (count) => {
      if (count.failures >= limit) return andThen(this.giveBack([key, ...taken]), () => refuse(count));
      if (count.failures + count.held <= limit) return undefined;
      return andThen(this.giveBack([key, ...taken], key), () => ({ wait: key }));
    });
  }

  /** After the first pass: its backoff, or waits for outcomes and passes again until admitted, refused, or out of time (503). */
  private async proceed(keys: AttemptKeys, first: Maybe<Step | undefined>, deadline: number): Promise<void> {
    let pass = first;
    for (let polls = 0; ; polls++) {
      // A pass that answered at once is not awaited: its waiter is then registered in the same turn as the pass
      // that found the key full, so that no check ending in between goes unheard.
      const step = pass instanceof Promise ? await pass : pass;
      if (step === undefined) return;
      if (typeof step === 'number') return pause(step);
      const left = deadline - Date.now();
      if (left <= 0 || (this.waiting.get(step.wait)?.length ?? 0) >= MOST_WAITING) throw busy();
      // Other servers' checks wake no one here (and may end between a pass and its wait): with shared counters,
      // look again now and then.
      await this.wait(step.wait, this.store.shared ? Math.min(left, POLL_MS * 2 ** Math.min(polls, 4), POLL_MAX_MS) : left);
      pass = this.admit(keys);
    }
  }

  /** Resolves when a check of `key` ends, or after `ms`. */
  private wait(key: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      let waiters = this.waiting.get(key);
      if (waiters === undefined) this.waiting.set(key, (waiters = []));
      const wake = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        const left = this.waiting.get(key);
        const at = left?.indexOf(wake) ?? -1;
        if (at !== -1) left!.splice(at, 1);
        if (left?.length === 0) this.waiting.delete(key);
        resolve();
      }, ms);
      waiters.push(wake);
    });
  }

  /**
   * A check of `key` ended: its place is given back, and a waiter looks again; after a failure every waiter does,
   * since it may have filled the limit and they are to hear 429 now.
   */
  private end(key: string | undefined, failed: boolean, everyone = failed): void | Promise<void> {
    if (key === undefined) return;
    return andThen(this.store.release(key, this.limits.windowSeconds, failed), () => this.wake(key, everyone));
  }

  private wake(key: string, everyone: boolean): void {
    const waiters = this.waiting.get(key);
    if (waiters === undefined) return;
    const woken = everyone ? waiters.splice(0) : waiters.splice(0, 1);
    if (waiters.length === 0) this.waiting.delete(key);
    for (const wake of woken) wake();
  }

  /**
   * Places taken by a pass that is refused or must wait, given back. A waiter of each is woken, but none of the
   * key the pass waits for: this place may be one a check's end had just freed (a waiter woken for it, which then
   * met another full key), and a waiter of the full key would only find the same checks running.
   */
  private giveBack(keys: (string | undefined)[], waitsFor?: string): void | Promise<void> {
    return all(
      keys.map((key) =>
        key === undefined
          ? undefined
          : andThen(this.store.release(key, this.limits.windowSeconds, false), () => (key === waitsFor ? undefined : this.wake(key, false))),
      ),
    );
  }

  /**
   * A token request that begins a session for this user of this backend (sessions.ts): counted, and 429 past
   * `sessionsPerUser` in the window. Counted once the user is known, after the password: an outsider's guesses are
   * the login limits' business.
   */
  sessionBegun(backend: string, userId: string): void | Promise<void> {
    const { sessionsPerUser = DEFAULT_LOGIN_LIMITS.sessionsPerUser!, windowSeconds } = this.limits;
    if (sessionsPerUser <= 0) return;
    const key = digestKey('sessions', backend, userId);
    // A sign-in is counted as the store counts a failure: a place taken, then given back counted. Those begun in
    // the window and those being begun now (the places) together stay within the limit.
    return andThen(this.store.hold(key, windowSeconds), (held) => {
      if (held.failures + held.held > sessionsPerUser) return andThen(this.store.release(key, windowSeconds, false), () => refuseSessions(held));
      return this.store.release(key, windowSeconds, true);
    });
  }

  /** How long a check of a name waits after `failures` of it from every client: nothing below `perUser`, then doubling. */
  backoffMs(failures: number): number {
    const { perUser, backoffMaxMs = DEFAULT_LOGIN_LIMITS.backoffMaxMs! } = this.limits;
    if (perUser <= 0 || backoffMaxMs <= 0 || failures < perUser) return 0;
    return Math.min(backoffMaxMs, BACKOFF_BASE_MS * 2 ** Math.min(failures - perUser, 30));
  }

  private keys(attempt: LoginAttempt): AttemptKeys {
    if (attempt.keys !== undefined) return attempt.keys;
    const { perUser, perAddress, backoffMaxMs = DEFAULT_LOGIN_LIMITS.backoffMaxMs! } = this.limits;
    const named = attempt.user !== undefined && perUser > 0;
    attempt.keys = {
      account: named ? digestKey('account', attempt.directory, attempt.user!, addressGroup(attempt.address)) : undefined,
      address: perAddress <= 0 ? undefined : this.addressKey(attempt.address),
      name: named && backoffMaxMs > 0 ? digestKey('name', attempt.directory, attempt.user!) : undefined,
    };
    return attempt.keys;
  }

  /**
   * A client's counter key, remembered by its address: a client signs in from the same address again and again,
   * and a SHA-256 per login was a measurable part of issuing a token. At most ADDRESS_KEYS are kept, all
   * forgotten at once when full, so that a flood of addresses costs bounded memory and only the digests it would
   * cost anyway; an address longer than any IP address's text (from a proxy's header) is never kept.
   */
  private addressKey(address: string): string {
    if (address.length > LONGEST_ADDRESS) return digestKey('address', address);
    let key = this.addressKeys.get(address);
    if (key === undefined) {
      if (this.addressKeys.size >= ADDRESS_KEYS) this.addressKeys.clear();
      key = digestKey('address', addressGroup(address));
      this.addressKeys.set(address, key);
    }
    return key;
  }
}

/** Most address keys a limiter remembers (about 2 MB). */
const ADDRESS_KEYS = 10_000;
/** An IPv6 address with an IPv4 tail and a zone is at most about 60 characters. */
const LONGEST_ADDRESS = 64;

/** What a pass over an attempt's keys leaves to do: its backoff (ms), or the key whose running checks it waits for. */
type Step = number | { wait: string };
