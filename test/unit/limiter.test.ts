import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addressGroup } from '../../runtime/auth/address.js';
import { Hashing } from '../../runtime/auth/hashing.js';
import { BACKOFF_BASE_MS, type LoginAttempt, LoginLimiter } from '../../runtime/auth/limiter.js';

/**
 * The limiter's in-memory path, which answers without a promise: what the HTTP
 * tests (integration/login-limits.test.ts) cannot reach cheaply, such as
 * thousands of client addresses.
 */
describe('login limiter (counters in memory)', () => {
  const attempt = (address: string, user?: string): LoginAttempt => ({ directory: 'default', user, address });

  /** One failed check: a place held and never given back. */
  const fail = (limiter: LoginLimiter, address: string, user?: string) => limiter.begin(attempt(address, user));

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
        // Skip the IPv4-mapped range, grouped as IPv4.
        fc.pre(!(words.slice(0, 5).every((w) => w === 0) && words[5] === 0xffff));
        const full = words.map((w) => w.toString(16).padStart(4, '0')).join(':');
        // Compress a run of zero words with '::', as any spelling may.
        const zeroed = words.map((w, i) => (i >= from && i < from + length ? 0 : w));
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
    for (const address of ['2001:db8:7:7::1', '2001:db8:7:7::2', '2001:db8:7:7:ffff::3']) limiter.begin(attempt(address));
    expect(() => limiter.begin(attempt('2001:db8:7:7:1:2:3:4'))).toThrow(expect.objectContaining({ status: 429 }));
    expect(limiter.begin(attempt('2001:db8:7:8::1'))).toBeUndefined();
    // A user name from one /64, wherever in it.
    limiter.begin(attempt('2001:db8:9:9::1', 'alice'));
    limiter.begin(attempt('2001:db8:9:9::2', 'alice'));
    expect(() => limiter.begin(attempt('2001:db8:9:9::3', 'alice'))).toThrow(expect.objectContaining({ status: 429 }));
    for (const address of ['192.0.2.9', '::ffff:192.0.2.9', '192.0.2.9']) limiter.begin(attempt(address));
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
    for (let i = 1; i <= 3; i++) expect(limiter.begin(attempt(`10.0.0.${i}`, 'alice'))).toBeUndefined();
    const started = Date.now();
    const fourth = attempt('10.0.0.4', 'alice');
    const waiting = limiter.begin(fourth);
    expect(waiting).toBeInstanceOf(Promise);
    await waiting;
    expect(Date.now() - started).toBeGreaterThanOrEqual(BACKOFF_BASE_MS - 5);
    // Another name is not slowed.
    expect(limiter.begin(attempt('10.0.0.4', 'bob'))).toBeUndefined();
    // The fourth was right: its place is given back, so the next waits as long as it did, not longer.
    limiter.succeeded(fourth);
    expect(limiter.backoffMs(3)).toBe(BACKOFF_BASE_MS);
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
