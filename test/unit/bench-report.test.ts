import { describe, expect, it } from 'vitest';
import { ceilingLines, type Measurement, type ServerName } from '../../bench/report.js';

/**
 * The report's "Near the ceiling" table (issue 46): the generated server's rows carry the 0.9x target, and the rows
 * that explain the gap (the ceiling with the contract's duties, the same in Koa, the generated server against Koa's)
 * carry none, whatever their ratio.
 */
const rounds = (rps: number): Measurement[] => [1, 2, 3].map(() => ({ rps, p50: 1, p99: 2, total: rps * 3, non2xx: 0, errors: 0, cpuSeconds: 3 }));

describe("the report's Near the ceiling table", () => {
  it('gives the target to the generated server against the ceiling only', () => {
    const get = new Map<ServerName, Measurement[]>([
      ['generated', rounds(8000)],
      ['raw-http', rounds(10_000)],
      ['raw-duties', rounds(9500)],
      ['koa-duties', rounds(6000)],
    ]);
    const lines = ceilingLines(new Map([['public GET', get]]));
    const row = (start: string) => lines.find((line) => line.startsWith(`| ${start}`))!;
    expect(row('one-row public GET / the same SELECT')).toMatch(/^\| .* \| 0\.80 .* missed \(>= 0\.9\) \|$/);
    expect(row("the ceiling with the contract's duties")).toMatch(/^\| .* \| 0\.95 .* \| {2}\|$/);
    expect(row('the same duties in one Koa handler')).toMatch(/^\| .* \| 0\.60 .* \| {2}\|$/);
    expect(row('one-row public GET / the same duties in one Koa handler')).toMatch(/^\| .* \| 1\.33 .* \| {2}\|$/);
  });
});
