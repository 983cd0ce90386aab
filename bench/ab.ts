import { mkdirSync, writeFileSync } from 'node:fs';
import { loadAverage, processCpuSeconds } from './cpu.js';
import type { BenchServer } from './profile.js';
import { pairedRatio, type Ratio, ratioText } from './ratios.js';
import type { Measurement } from './report.js';

/**
 * `npm run bench -- --ab REF` (docs/internals/contract.md §17): this checkout's generated server and REF's
 * (bench/baseline.ts builds it), both on the servers' one core, each scenario's request at each in slices
 * interleaved A B B A ... within each round. Req/s of a shared machine move by 2x; the ratio of two runs adjacent in
 * time moves far less, and CPU a request (the server's and MariaDB's, from /proc) less still: each is given as the
 * median of the rounds' own ratios with their spread.
 */
export interface AbScenario {
  scenario: string;
  /** The server of the scenario whose request is sent to both builds. */
  server: string;
  load(server: BenchServer, seconds: number): Promise<Measurement>;
}

export interface AbRun {
  ours: BenchServer;
  theirs: BenchServer;
  /** How each side is named in the report: this checkout's commit, and REF with its commit. */
  oursLabel: string;
  theirsLabel: string;
  scenarios: AbScenario[];
  mariadbPid: number | undefined;
  duration: number;
  rounds: number;
  slices: number;
  connections: string;
  say(line: string): void;
}

/** One side's round: its slices' requests and CPU summed. */
interface Round {
  requests: number;
  serverCpu: number;
  mariadbCpu: number;
  failed: number;
}

const perRequest = (of: (round: Round) => number) => (round: Round) => of(round) / Math.max(round.requests, 1);

export async function compareBuilds(run: AbRun): Promise<string> {
  const lines = [
    `# A/B: ${run.oursLabel} vs ${run.theirsLabel}`,
    '',
    `${new Date().toISOString()}; load average ${loadAverage()} at the start (1, 5, 15 min). Both servers on one core, the load`,
    `generator on the other (taskset); ${run.connections} connections, ${run.rounds} rounds of ${run.duration} s a side in ${run.slices} slices,`,
    "interleaved A B B A. Ratios: the median of the rounds' own ratios, (min-max) of the rounds. CPU ratios are",
    "REF's CPU a request over this checkout's: above 1, this checkout spends less (read as req/s ratios are).",
    '',
  ];
  for (const each of run.scenarios) {
    const sides = { ours: [] as Round[], theirs: [] as Round[] };
    // Both warm (JIT, pool connections, caches) before the first round, so that round 1 counts like the others.
    for (const side of ['ours', 'theirs'] as const) await each.load(run[side], 2);
    for (let round = 0; round < run.rounds; round++) {
      const order = round % 2 === 0 ? (['ours', 'theirs'] as const) : (['theirs', 'ours'] as const);
      for (const side of order) await each.load(run[side], 1); // warm-up: JIT, pool connections
      const totals: Record<'ours' | 'theirs', Round> = {
        ours: { requests: 0, serverCpu: 0, mariadbCpu: 0, failed: 0 },
        theirs: { requests: 0, serverCpu: 0, mariadbCpu: 0, failed: 0 },
      };
      for (let slice = 0; slice < run.slices; slice++) {
        for (const side of slice % 2 === 0 ? order : [...order].reverse()) {
          const server = run[side];
          const serverBefore = processCpuSeconds(server.child.pid);
          const mariadbBefore = processCpuSeconds(run.mariadbPid);
          const measured = await each.load(server, run.duration / run.slices);
          totals[side].serverCpu += processCpuSeconds(server.child.pid) - serverBefore;
          totals[side].mariadbCpu += processCpuSeconds(run.mariadbPid) - mariadbBefore;
          totals[side].requests += measured.total;
          totals[side].failed += measured.non2xx + measured.errors;
        }
      }
      sides.ours.push(totals.ours);
      sides.theirs.push(totals.theirs);
      const rps = (side: Round) => Math.round(side.requests / run.duration);
      run.say(
        `ab round ${round + 1}/${run.rounds} ${each.scenario}: this ${rps(totals.ours)} req/s, ${(perRequest((r) => r.serverCpu)(totals.ours) * 1e6).toFixed(0)} us server CPU a request; REF ${rps(totals.theirs)} req/s, ${(perRequest((r) => r.serverCpu)(totals.theirs) * 1e6).toFixed(0)} us`,
      );
    }
    lines.push(...scenarioLines(each, sides.ours, sides.theirs, run));
  }
  lines.push(`Load average ${loadAverage()} at the end.`, '');
  const text = lines.join('\n');
  mkdirSync('bench/results', { recursive: true });
  const file = `bench/results/ab-${new Date()
    .toISOString()
    .replace(/:\d\d\.\d+Z$/, 'Z')
    .replaceAll(':', '')}.md`;
  writeFileSync(file, text);
  process.stdout.write(`${text}\n`);
  return file;
}

function scenarioLines(each: AbScenario, ours: Round[], theirs: Round[], run: AbRun): string[] {
  const us = (rounds: Round[], of: (round: Round) => number) => {
    const requests = rounds.reduce((sum, round) => sum + round.requests, 0);
    return ((rounds.reduce((sum, round) => sum + of(round), 0) / Math.max(requests, 1)) * 1e6).toFixed(0);
  };
  const rps = pairedRatio(ours, theirs, (round) => round.requests);
  // Their CPU a request over ours: higher is better for this checkout, as req/s.
  const cheaper = (of: (round: Round) => number): Ratio => pairedRatio(theirs, ours, perRequest(of));
  const both = (round: Round) => round.serverCpu + round.mariadbCpu;
  const failed = ours.concat(theirs).reduce((sum, round) => sum + round.failed, 0);
  const mariadb = run.mariadbPid !== undefined;
  return [
    `## ${each.scenario} (the request of its server ${each.server})`,
    '',
    "| figure | this checkout | REF | ratio (rounds' spread) |",
    '|---|---|---|---|',
    `| req/s (this / REF) | ${Math.round(ours.reduce((s, r) => s + r.requests, 0) / (run.rounds * run.duration))} | ${Math.round(theirs.reduce((s, r) => s + r.requests, 0) / (run.rounds * run.duration))} | ${ratioText(rps)} |`,
    `| server CPU a request, us (REF / this) | ${us(ours, (r) => r.serverCpu)} | ${us(theirs, (r) => r.serverCpu)} | ${ratioText(cheaper((r) => r.serverCpu))} |`,
    ...(mariadb
      ? [
          `| MariaDB CPU a request, us (REF / this) | ${us(ours, (r) => r.mariadbCpu)} | ${us(theirs, (r) => r.mariadbCpu)} | ${ratioText(cheaper((r) => r.mariadbCpu))} |`,
          `| server and MariaDB CPU a request, us (REF / this) | ${us(ours, both)} | ${us(theirs, both)} | ${ratioText(cheaper(both))} |`,
        ]
      : ['| MariaDB CPU a request | n/a (DATABASE_URL given: the bench did not start it) | | |']),
    '',
    `Rounds' req/s ratios: ${rps.rounds.map((r) => r.toFixed(2)).join(', ')}.${failed > 0 ? ` WARNING: ${failed} answers not 2xx or failed.` : ''}`,
    '',
  ];
}
