import { describe, expect, it } from 'vitest';
import { type LoginAttempt, LoginLimiter } from '../../runtime/auth/limiter.js';

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
    const limiter = new LoginLimiter({ perUser: 2, perAddress: 5, windowSeconds: 60 });
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
      // More addresses than the limiter remembers keys for: the memo is emptied between two of the address's failures.
      for (let other = 0; other < 12_000; other++) fail(limiter, `2001:db8::${round}:${other.toString(16)}`);
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
