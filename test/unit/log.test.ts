import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { isoTime } from '../../runtime/log.js';

describe("isoTime: pino's ISO time, made once a millisecond", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('writes what pino.stdTimeFunctions.isoTime writes, again within a millisecond and at the next', () => {
    for (const at of [0, 1, 1, 1767225600123, 1767225600123, 1767225600124, 1767225600123, 253402300799999]) {
      vi.spyOn(Date, 'now').mockReturnValue(at);
      expect(isoTime()).toBe(pino.stdTimeFunctions.isoTime());
    }
  });
});
