import { describe, expect, it } from 'vitest';
import { RunCache } from '../../generator/run-cache.js';

/** The dev loop's cache (generator/run-cache.ts): a value serves only its own text, and only what the last run used stays. */
describe('RunCache', () => {
  it('serves a value only to a run that would make it from the same text', () => {
    const cache = new RunCache<string>();
    expect(cache.through('a.xml', 'text 1', () => 'made from 1')).toBe('made from 1');
    expect(cache.through('a.xml', 'text 1', () => 'made again')).toBe('made from 1');
    expect(cache.get('a.xml', 'text 2')).toBeUndefined();
    expect(cache.through('a.xml', 'text 2', () => 'made from 2')).toBe('made from 2');
    // A key holds its latest value only: an edited file's older texts are not kept.
    expect(cache.get('a.xml', 'text 1')).toBeUndefined();
  });

  it('forgets, when a run ends, what the run did not use; a run that used nothing keeps everything', () => {
    const cache = new RunCache<string>();
    cache.set('a.xml', 'a', 'A');
    cache.set('b.xml', 'b', 'B');
    cache.endRun();
    // A run that stopped before it used the cache (an error) leaves it as it was.
    cache.endRun();
    expect(cache.get('a.xml', 'a')).toBe('A');
    cache.endRun();
    // b.xml was not used by the run that just ended (a removed file): it is gone.
    expect(cache.get('b.xml', 'b')).toBeUndefined();
    expect(cache.get('a.xml', 'a')).toBe('A');
  });
});
