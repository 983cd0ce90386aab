import { describe, expect, it } from 'vitest';
import { CredentialCache } from '../../runtime/auth/passwords/credential-cache.js';

describe('CredentialCache.once', () => {
  it('runs one check for the same client, stored value and password at a time, and shares its answer', async () => {
    const cache = new CredentialCache();
    let runs = 0;
    let finish: (ok: boolean) => void = () => {};
    const check = () =>
      new Promise<{ ok: boolean; plain: boolean }>((resolve) => {
        runs++;
        finish = (ok) => resolve({ ok, plain: false });
      });
    const same = Array.from({ length: 10 }, () => cache.once('127.0.0.1', 'stored', 'pw', check));
    const otherPassword = cache.once('127.0.0.1', 'stored', 'other', async () => ({ ok: false, plain: false }));
    const otherClient = cache.once('10.0.0.1', 'stored', 'pw', async () => ({ ok: true, plain: false }));
    expect(runs).toBe(1);
    finish(true);
    expect((await Promise.all(same)).every((answer) => answer.ok)).toBe(true);
    expect((await otherPassword).ok).toBe(false);
    expect((await otherClient).ok).toBe(true);
    // Done: the next check runs afresh (what is remembered is `remember`'s, not this).
    const again = cache.once('127.0.0.1', 'stored', 'pw', check);
    expect(runs).toBe(2);
    finish(false);
    expect((await again).ok).toBe(false);
  });
});
