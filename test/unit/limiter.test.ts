import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { addressGroup } from '../../runtime/auth/limits/address.js';
import { DatabaseFailureStore } from '../../runtime/auth/limits/failure-store.js';
import { BACKOFF_BASE_MS, type LoginAttempt, LoginLimiter, OUTCOME_WAIT_MS } from '../../runtime/auth/limits/limiter.js';
import { Hashing } from '../../runtime/auth/passwords/hashing.js';

/**
 * The limiter's in-memory path, which answers without a promise: what the HTTP
 * tests (integration/login-limits.test.ts) cannot reach cheaply, such as
 * thousands of client addresses.
 */
describe('login limiter (counters in memory)', () => {
  const attempt = (address: string, user?: string): LoginAttempt => ({ directory: 'default', user, address });

  /** One failed check: its place held, then its failure counted. */
  const fail = (limiter: LoginLimiter, address: string, user?: string) => {
    const failed = attempt(address, user);
    const begun = limiter.begin(failed);
    limiter.failed(failed);
    return begun;
  };

  it('answers at once, refuses past the limit by throwing, and a success gives the place back', () => {
    const limiter = new LoginLimiter({ perUser: 2, perAddress: 5, windowSeconds: 60, backoffMaxMs: 0 });
    expect(fail(limiter, '10.0.0.1', 'alice')).toBeUndefined();
    expect(fail(limiter, '10.0.0.1', 'alice')).toBeUndefined();
    expect(() => fail(limiter, '10.0.0.1', 'alice')).toThrow(expect.objectContaining({ status: 429 }));
    // The name from another address, and another name from this one, go on.
    expect(fail(limiter, '10.0.0.2', 'alice')).toBeUndefined();
    const right = attempt('10.0.0.1', 'bob');
    expect(limiter.begin(right)).toBeUndefined();
    expect(limiter.succeeded(right)).toBeUndefined();
  });

  it('counts an address across a flood of other addresses (its remembered key is made again the same)', () => {
    const limiter = new LoginLimiter({ perUser: 0, perAddress: 3, windowSeconds: 60 });
    for (let round = 0; round < 3; round++) {
      fail(limiter, '192.0.2.7');
      // More addresses than the limiter remembers keys for (each in a /64 of its own): the memo is emptied
      // between two of the address's failures.
      for (let other = 0; other < 12_000; other++) fail(limiter, `2001:db8:${round}:${other.toString(16)}::1`);
    }
    expect(() => fail(limiter, '192.0.2.7')).toThrow(expect.objectContaining({ status: 429 }));
    expect(fail(limiter, '192.0.2.8')).toBeUndefined();
  });

  it('counts an address too long to remember all the same', () => {
    const limiter = new LoginLimiter({ perUser: 0, perAddress: 2, windowSeconds: 60 });
    const long = `${'f'.repeat(100)}.example`;
    fail(limiter, long);
    fail(limiter, long);
    expect(() => fail(limiter, long)).toThrow(expect.objectContaining({ status: 429 }));
  });
});

describe('clients by address (IPv6 by its /64)', () => {
  const attempt = (address: string, user?: string): LoginAttempt => ({ directory: 'default', user, address });

  it('groups an IPv6 address by its /64 however it is written, and an IPv4-mapped one as IPv4', () => {
    expect(addressGroup('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(addressGroup('2001:DB8:1:2::ffff')).toBe('2001:db8:1:2::/64');
    expect(addressGroup('2001:0db8:0001:0002:0000:0000:0000:0001')).toBe('2001:db8:1:2::/64');
    expect(addressGroup('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressGroup('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(addressGroup('[2001:db8:1:2::7]')).toBe('2001:db8:1:2::/64');
    expect(addressGroup('::ffff:192.0.2.7')).toBe('192.0.2.7');
    expect(addressGroup('::ffff:c000:207')).toBe('192.0.2.7');
    expect(addressGroup('::1')).toBe('0:0:0:0::/64');
    expect(addressGroup('192.0.2.7')).toBe('192.0.2.7');
    // Not an address (a proxy's header may say anything): its own group.
    expect(addressGroup('unknown')).toBe('unknown');
    expect(addressGroup('2001:db8::1::2')).toBe('2001:db8::1::2');
  });

  it('gives every spelling of an address the group of its first four words', () => {
    const word = fc.integer({ min: 0, max: 0xffff });
    fc.assert(
      fc.property(fc.array(word, { minLength: 8, maxLength: 8 }), fc.integer({ min: 0, max: 7 }), fc.integer({ min: 0, max: 8 }), (words, from, length) => {
        // Skip the IPv4-mapped range, grouped as IPv4: the address as drawn, and as zeroed below (zeroing the
        // first five words of one whose sixth is ffff makes it mapped, which the seed -685024416 once drew).
        const mapped = (address: number[]) => address.slice(0, 5).every((w) => w === 0) && address[5] === 0xffff;
        const zeroed = words.map((w, i) => (i >= from && i < from + length ? 0 : w));
        fc.pre(!mapped(words) && !mapped(zeroed));
        const full = words.map((w) => w.toString(16).padStart(4, '0')).join(':');
        // Compress a run of zero words with '::', as any spelling may.
        const hex = zeroed.map((w) => w.toString(16));
        const end = Math.min(8, from + length);
        const compressed = length === 0 ? hex.join(':') : `${hex.slice(0, from).join(':')}::${hex.slice(end).join(':')}`;
        const expected = `${zeroed
          .slice(0, 4)
          .map((w) => w.toString(16))
          .join(':')}::/64`;
        expect(addressGroup(compressed)).toBe(expected);
        expect(addressGroup(full)).toBe(
          `${words
            .slice(0, 4)
            .map((w) => w.toString(16))
            .join(':')}::/64`,
        );
      }),
    );
  });

  it('counts every address of one /64 as one client, and IPv4-mapped IPv6 with its IPv4 address', () => {
    const limiter = new LoginLimiter({ perUser: 2, perAddress: 3, windowSeconds: 60 });
    const fail = (failed: LoginAttempt) => {
      limiter.begin(failed);
      limiter.failed(failed);
    };
    for (const address of ['2001:db8:7:7::1', '2001:db8:7:7::2', '2001:db8:7:7:ffff::3']) fail(attempt(address));
    expect(() => limiter.begin(attempt('2001:db8:7:7:1:2:3:4'))).toThrow(expect.objectContaining({ status: 429 }));
    expect(limiter.begin(attempt('2001:db8:7:8::1'))).toBeUndefined();
    // A user name from one /64, wherever in it.
    fail(attempt('2001:db8:9:9::1', 'alice'));
    fail(attempt('2001:db8:9:9::2', 'alice'));
    expect(() => limiter.begin(attempt('2001:db8:9:9::3', 'alice'))).toThrow(expect.objectContaining({ status: 429 }));
    for (const address of ['192.0.2.9', '::ffff:192.0.2.9', '192.0.2.9']) fail(attempt(address));
    expect(() => limiter.begin(attempt('::ffff:c000:209'))).toThrow(expect.objectContaining({ status: 429 }));
  });
});

describe('the backoff of a user name failing from many clients', () => {
  const attempt = (address: string, user: string): LoginAttempt => ({ directory: 'default', user, address });

  it('waits nothing below the per-user limit, then twice as long per failure up to its cap, and never refuses', () => {
    const limiter = new LoginLimiter({ perUser: 3, perAddress: 0, windowSeconds: 60, backoffMaxMs: 3000 });
    expect([0, 1, 2, 3, 4, 5, 6, 7, 100].map((failures) => limiter.backoffMs(failures))).toEqual([
      0,
      0,
      0,
      BACKOFF_BASE_MS,
      BACKOFF_BASE_MS * 2,
      BACKOFF_BASE_MS * 4,
      BACKOFF_BASE_MS * 8,
      3000,
      3000,
    ]);
    expect(new LoginLimiter({ perUser: 3, perAddress: 0, windowSeconds: 60, backoffMaxMs: 0 }).backoffMs(100)).toBe(0);
    expect(new LoginLimiter({ perUser: 0, perAddress: 5, windowSeconds: 60 }).backoffMs(100)).toBe(0);
  });

  it('counts the name across clients: each from a new address, the fourth waits, and a right password gives its place back', async () => {
    const limiter = new LoginLimiter({ perUser: 3, perAddress: 0, windowSeconds: 60, backoffMaxMs: 3000 });
    for (let i = 1; i <= 3; i++) {
      const failed = attempt(`10.0.0.${i}`, 'alice');
      expect(limiter.begin(failed)).toBeUndefined();
      limiter.failed(failed);
    }
    const started = Date.now();
    const fourth = attempt('10.0.0.4', 'alice');
    const waiting = limiter.begin(fourth);
    expect(waiting).toBeInstanceOf(Promise);
    await waiting;
    expect(Date.now() - started).toBeGreaterThanOrEqual(BACKOFF_BASE_MS - 5);
    // Another name is not slowed.
    expect(limiter.begin(attempt('10.0.0.4', 'bob'))).toBeUndefined();
    // The fourth was right: no failure more, so the next waits as long as it did, not longer.
    limiter.succeeded(fourth);
    expect(limiter.backoffMs(3)).toBe(BACKOFF_BASE_MS);
  });
});

describe('checks fired together (issue 39): only failures count', () => {
  const attempt = (address: string, user: string): LoginAttempt => ({ directory: 'default', user, address });
  afterEach(() => vi.useRealTimers());

  /** Begins `count` attempts at once; each settles to 'admitted' or its refusal's status. */
  function fire(limiter: LoginLimiter, attempts: LoginAttempt[]): Promise<(number | 'admitted')[]> {
    return Promise.all(
      attempts.map(async (one) => {
        try {
          await limiter.begin(one);
          return 'admitted' as const;
        } catch (error) {
          return (error as { status: number }).status;
        }
      }),
    );
  }

  it('lets right passwords past the limit: those over it wait for the checks running, and none is refused or slowed', async () => {
    vi.useFakeTimers();
    const limiter = new LoginLimiter({ perUser: 3, perAddress: 50, windowSeconds: 60, backoffMaxMs: 3000 });
    const attempts = Array.from({ length: 12 }, () => attempt('10.0.0.1', 'alice'));
    // Three hold their places at once, without a promise; the rest wait.
    const begun = attempts.map((one) => limiter.begin(one));
    expect(begun.slice(0, 3)).toEqual([undefined, undefined, undefined]);
    expect(begun.slice(3).every((one) => one instanceof Promise)).toBe(true);
    let admitted = 3;
    for (const one of begun.slice(3)) void (one as Promise<void>).then(() => admitted++);
    // Each right password lets one more in, with no time passing: no backoff, no failure counted.
    for (let ended = 0; ended < 12; ended++) {
      limiter.succeeded(attempts[ended]!);
      await vi.advanceTimersByTimeAsync(0);
      expect(admitted).toBe(Math.min(12, ended + 4));
    }
    // Nothing was counted: the limit is whole, from this client and from any other.
    const wrong = Array.from({ length: 2 }, () => attempt('10.0.0.1', 'alice'));
    for (const one of wrong) {
      expect(limiter.begin(one)).toBeUndefined();
      limiter.failed(one);
    }
    expect(limiter.begin(attempt('10.0.0.1', 'alice'))).toBeUndefined();
  });

  it('refuses those waiting once the checks they waited for failed: never more than perUser checks from one client', async () => {
    const limiter = new LoginLimiter({ perUser: 3, perAddress: 0, windowSeconds: 60 });
    const attempts = Array.from({ length: 20 }, () => attempt('10.0.0.1', 'carol'));
    const outcomes = fire(limiter, attempts);
    // The three admitted were wrong.
    for (const one of attempts.slice(0, 3)) limiter.failed(one);
    expect(await outcomes).toEqual([...Array(3).fill('admitted'), ...Array(17).fill(429)]);
  });

  it('admits as many waiting as the checks that failed left room for, a right one starting the count over', async () => {
    vi.useFakeTimers();
    const limiter = new LoginLimiter({ perUser: 3, perAddress: 0, windowSeconds: 60, backoffMaxMs: 0 });
    const attempts = Array.from({ length: 6 }, () => attempt('10.0.0.1', 'dave'));
    const admitted = new Set<number>();
    attempts.forEach((one, i) => void Promise.resolve(limiter.begin(one)).then(() => admitted.add(i)));
    await vi.advanceTimersByTimeAsync(0);
    expect([...admitted]).toEqual([0, 1, 2]);
    // One failure: the place it held stays taken, as a failure now.
    limiter.failed(attempts[0]!);
    await vi.advanceTimersByTimeAsync(0);
    expect(admitted.size).toBe(3);
    // A right one: the name's count at this client starts over, so its place and the failure's are free.
    limiter.succeeded(attempts[1]!);
    await vi.advanceTimersByTimeAsync(0);
    expect(admitted.size).toBe(5);
    // A failure (one, since the count started over) beside two running: no room.
    limiter.failed(attempts[2]!);
    await vi.advanceTimersByTimeAsync(0);
    expect(admitted.size).toBe(5);
    limiter.succeeded(attempts[3]!);
    await vi.advanceTimersByTimeAsync(0);
    expect(admitted.size).toBe(6);
  });

  it('waits no longer than OUTCOME_WAIT_MS for checks that do not end: 503, and no attempt counted', async () => {
    vi.useFakeTimers();
    const limiter = new LoginLimiter({ perUser: 1, perAddress: 0, windowSeconds: 60 });
    const first = attempt('10.0.0.1', 'erin');
    limiter.begin(first);
    const second = fire(limiter, [attempt('10.0.0.1', 'erin')]);
    await vi.advanceTimersByTimeAsync(OUTCOME_WAIT_MS + 1);
    expect(await second).toEqual([503]);
    limiter.succeeded(first);
    expect(limiter.begin(attempt('10.0.0.1', 'erin'))).toBeUndefined();
  });

  it('puts no backoff on a name whose checks from many clients at once were right', async () => {
    vi.useFakeTimers();
    const limiter = new LoginLimiter({ perUser: 3, perAddress: 0, windowSeconds: 60, backoffMaxMs: 60_000 });
    const attempts = Array.from({ length: 30 }, (_, i) => attempt(`10.0.1.${i}`, 'frank'));
    let admitted = 0;
    const begun = attempts.map((one) => Promise.resolve(limiter.begin(one)).then(() => admitted++));
    for (const one of attempts) {
      await vi.advanceTimersByTimeAsync(0);
      limiter.succeeded(one);
    }
    await vi.advanceTimersByTimeAsync(0);
    // Every one admitted without any time passing: no backoff was waited.
    expect(admitted).toBe(30);
    await Promise.all(begun);
  });

  it('keeps the backoff for a name that failed from many clients at once', async () => {
    vi.useFakeTimers();
    const limiter = new LoginLimiter({ perUser: 3, perAddress: 0, windowSeconds: 60, backoffMaxMs: 60_000 });
    const attempts = Array.from({ length: 6 }, (_, i) => attempt(`10.0.2.${i}`, 'gina'));
    let admitted = 0;
    for (const one of attempts) void Promise.resolve(limiter.begin(one)).then(() => admitted++);
    await vi.advanceTimersByTimeAsync(0);
    expect(admitted).toBe(3);
    for (const one of attempts.slice(0, 3)) limiter.failed(one);
    // The three waiting now meet the backoff of a name that failed three times, and go on after it.
    await vi.advanceTimersByTimeAsync(BACKOFF_BASE_MS - 1);
    expect(admitted).toBe(3);
    await vi.advanceTimersByTimeAsync(1);
    expect(admitted).toBe(6);
  });
});

describe('bounded hashing', () => {
  it('runs at most `concurrency` at once, queues up to `maxWaiting`, and answers 503 with Retry-After past that', async () => {
    const hashing = new Hashing(2, 3);
    let running = 0;
    let most = 0;
    const releases: (() => void)[] = [];
    const work = () =>
      new Promise<void>((resolve) => {
        running++;
        most = Math.max(most, running);
        releases.push(() => {
          running--;
          resolve();
        });
      });
    const admitted = Array.from({ length: 5 }, () => hashing.run(work));
    await expect(hashing.run(work)).rejects.toMatchObject({ status: 503, headers: { 'Retry-After': '1' } });
    while (releases.length > 0 || running > 0) {
      await new Promise((resolve) => setTimeout(resolve, 1));
      releases.shift()?.();
    }
    await Promise.all(admitted);
    expect(most).toBe(2);
    // Free again: the next runs at once.
    await hashing.run(async () => undefined);
  });

  it('frees its place when the work fails', async () => {
    const hashing = new Hashing(1, 0);
    await expect(hashing.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(hashing.run(async () => 'ok')).resolves.toBe('ok');
  });
});

describe('counts every server shares (DatabaseFailureStore)', () => {
  it('counts a failed check before it gives its place back, never beside it', async () => {
    // Another server's hold reads the failures and the places together: with the place given back and the failure
    // not yet written, it would see one check too few and admit one over the limit (seen: 11 of 10, two servers).
    const issued: string[] = [];
    let finishFirst: () => void = () => {};
    const db = {
      select: async <Row>() => [] as Row[],
      write: (sql: string) => {
        issued.push(sql.includes('greatest') ? 'place given back' : 'failure counted');
        return issued.length === 1 ? new Promise<void>((resolve) => (finishFirst = resolve)) : Promise.resolve();
      },
    };
    const released = new DatabaseFailureStore(db).release('key', 60, true);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(issued).toEqual(['failure counted']);
    finishFirst();
    await released;
    expect(issued).toEqual(['failure counted', 'place given back']);
  });
});
