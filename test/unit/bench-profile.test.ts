import { describe, expect, it } from 'vitest';
import { type CpuProfile, groupOf, profileSummary } from '../../bench/profile-summary.js';
import { pairedRatio, ratioText } from '../../bench/ratios.js';

/**
 * The bench's profile summary (`npm run bench -- --profile`) and its ratios: a hand-made profile whose counts are
 * known, so that self and inclusive time, the measured window and recursion are checked exactly.
 */
const frame = (functionName: string, url = '', lineNumber = 0) => ({ functionName, url, lineNumber });
const cwd = `file://${process.cwd()}`;

// root -> handle (ours) -> stringify (native); root -> handle -> handle (recursion) -> execute (mysql2); root -> (idle)
const profile: CpuProfile = {
  nodes: [
    { id: 1, callFrame: frame('(root)'), children: [2, 5] },
    { id: 2, callFrame: frame('handle', `${cwd}/.xmlrest/bench-dist/runtime/routes.js`, 83), children: [3, 4] },
    { id: 3, callFrame: frame('stringify') },
    { id: 4, callFrame: frame('handle', `${cwd}/.xmlrest/bench-dist/runtime/routes.js`, 83), children: [6] },
    { id: 5, callFrame: frame('(idle)') },
    { id: 6, callFrame: frame('execute', `${cwd}/node_modules/mysql2/lib/commands/command.js`, 22) },
  ],
  startTime: 1_000,
  endTime: 2_000,
  // Times 1010, 1020, ... 1100: the window [1015, 1085] holds the samples at 1020 ... 1080, seven of them.
  samples: [3, 3, 3, 6, 6, 2, 5, 5, 3, 3],
  timeDeltas: [10, 10, 10, 10, 10, 10, 10, 10, 10, 10],
};

describe('the bench profile summary', () => {
  const text = profileSummary(profile, { from: 1_015, to: 1_085, requests: 100, seconds: 1, serverCpuSeconds: 0.01, mariadbCpuSeconds: 0.002 }, 'heading');

  it('counts only the samples in the window, the idle ones apart', () => {
    // In the window: 3, 3, 6, 6, 2, 5, 5: five busy, two idle.
    expect(text).toContain('Samples in the window: 7, of which busy 5');
    expect(text).toContain('CPU a request (from /proc over the measured loads): server 100.0 us, MariaDB 20.0 us.');
  });

  it('gives self time by function and by whose code', () => {
    const self = text.slice(text.indexOf('Top 30 functions by self time:'), text.indexOf('Top 30 functions by inclusive time:'));
    expect(self).toContain('  40.0%     40.0  stringify  [native');
    expect(self).toContain('  40.0%     40.0  execute node_modules/mysql2/lib/commands/command.js:23  [mysql2');
    expect(self).toContain('  20.0%     20.0  handle .xmlrest/bench-dist/runtime/routes.js:84  [xmlrest: runtime]');
  });

  it('counts a function once a sample in its inclusive time, however often it recurs on the stack', () => {
    const inclusive = text.slice(text.indexOf('Top 30 functions by inclusive time:'));
    // handle is on every busy stack (twice on the mysql2 ones): 5 of 5, not 7.
    expect(inclusive).toContain(' 100.0%    100.0  handle .xmlrest/bench-dist/runtime/routes.js:84');
    const groups = text.slice(text.indexOf('By whose code, inclusive'), text.indexOf('Top 30 functions by self time:'));
    expect(groups).toContain(' 100.0%    100.0  xmlrest: runtime');
    expect(groups).toContain('  40.0%     40.0  mysql2 (with its dependencies)');
  });

  it("groups a package's code with Koa's or mysql2's when it is theirs", () => {
    expect(groupOf(frame('f', 'file:///x/node_modules/koa-compose/index.js'))).toBe('koa (with its dependencies)');
    expect(groupOf(frame('f', 'file:///x/node_modules/@koa/router/lib/router.js'))).toBe('koa (with its dependencies)');
    expect(groupOf(frame('f', 'file:///x/node_modules/lru.min/lib/index.js'))).toBe('mysql2 (with its dependencies)');
    expect(groupOf(frame('f', 'file:///x/node_modules/pino/pino.js'))).toBe('npm: pino');
    expect(groupOf(frame('f', 'file:///x/.xmlrest/bench-dist/bench/generated/api/catalog.js'))).toBe('xmlrest: generated modules');
    expect(groupOf(frame('f', 'node:_http_outgoing'))).toMatch(/^node internals/);
    expect(groupOf(frame('(garbage collector)'))).toBe('V8: garbage collector');
  });
});

describe('a ratio of the bench', () => {
  it("is the median of the rounds' own ratios, with their spread", () => {
    const ratio = pairedRatio([{ rps: 90 }, { rps: 200 }, { rps: 100 }], [{ rps: 100 }, { rps: 200 }, { rps: 80 }], (m) => m.rps);
    expect(ratio.rounds).toEqual([0.9, 1, 1.25]);
    expect(ratioText(ratio)).toBe('1.00 (0.90-1.25)');
  });
});
