import { describe, expect, it } from 'vitest';
import { digestKey, SecretDigest } from '../../runtime/auth/digest.js';

/** The keys of caches and counters: no two part lists may share one, whatever the parts hold. */
describe('framed digests', () => {
  const lists: string[][] = [
    ['a', 'b'],
    ['a:b'],
    ['ab'],
    ['1:a', 'b'],
    ['a', '1:b'],
    ['a\u0000', 'b'],
    ['a', '\u0000b'],
    ['plugin\u0000alice', 'pw'],
    ['plugin', 'alice\u0000pw'],
    ['\uD800'],
    ['\uDBFF'],
    ['\uFFFD'],
    [''],
    ['', ''],
    [],
  ];

  it('gives every list of parts its own key, boundaries, NUL, colons and lone surrogates included', () => {
    const digest = new SecretDigest();
    for (const key of [(parts: string[]) => digestKey(...parts), (parts: string[]) => digest.of(...parts)]) {
      const keys = lists.map(key);
      expect(new Set(keys).size).toBe(lists.length);
      // Fixed size whatever the input's length.
      expect(new Set(keys.map((value) => value.length)).size).toBe(1);
      expect(key(['x'.repeat(100_000)]).length).toBe(keys[0]!.length);
    }
  });

  it('is the same in every process for digestKey, and differs per start-up key for SecretDigest', () => {
    expect(digestKey('address', '127.0.0.1')).toBe(digestKey('address', '127.0.0.1'));
    expect(new SecretDigest().of('a')).not.toBe(new SecretDigest().of('a'));
  });
});
