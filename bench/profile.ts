import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { loadAverage, processCpuSeconds } from './cpu.js';
import { type CpuProfile, profileSummary } from './profile-summary.js';
import type { Measurement } from './report.js';

/**
 * `npm run bench -- --profile SCENARIO` (docs/internals/contract.md §17): the process serving one scenario's
 * server (`--server`, else the scenario's first) started again under `node --cpu-prof`, warmed up, loaded with the
 * scenario's request for `rounds` x `duration` seconds, and stopped, which writes the profile; beside it a text
 * summary of the samples within the measured loads alone, with the server's and MariaDB's CPU a request.
 */
export interface BenchServer {
  name: string;
  child: { pid?: number | undefined };
  url: string;
}

export interface ProfileRun {
  scenario: string;
  server: string;
  /** The server's process started again with these Node flags in place of the running one (every alias of it too). */
  restart(nodeArgs: string[]): Promise<BenchServer>;
  /** Stops it and waits until it has exited (and so written its profile). */
  stop(server: BenchServer): Promise<void>;
  /** One load of the scenario's request at the server, the database settled after it as the scenario asks. */
  load(server: BenchServer, seconds: number): Promise<Measurement>;
  mariadbPid: number | undefined;
  duration: number;
  rounds: number;
  connections: string;
  say(line: string): void;
}

const slug = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
const monotonicMicros = () => Number(process.hrtime.bigint() / 1000n);

/** Runs the profile; returns the summary's path (the .cpuprofile is beside it, of the same name). */
export async function profileScenario(run: ProfileRun): Promise<string> {
  const when = new Date()
    .toISOString()
    .replace(/:\d\d\.\d+Z$/, 'Z')
    .replaceAll(':', '');
  const dir = path.resolve('bench/results');
  mkdirSync(dir, { recursive: true });
  const stem = `profile-${slug(run.scenario)}-${run.server}-${when}`;
  const server = await run.restart(['--cpu-prof', `--cpu-prof-dir=${dir}`, `--cpu-prof-name=${stem}.cpuprofile`]);
  run.say(`profiling ${run.server} (process ${server.name}) under "${run.scenario}": warming up ...`);
  await run.load(server, 2);
  const loadBefore = loadAverage();
  const from = monotonicMicros();
  const serverBefore = processCpuSeconds(server.child.pid);
  const mariadbBefore = processCpuSeconds(run.mariadbPid);
  let requests = 0;
  let unexpected = 0;
  for (let round = 0; round < run.rounds; round++) {
    const measured = await run.load(server, run.duration);
    requests += measured.total;
    unexpected += measured.non2xx + measured.errors;
    run.say(`profile load ${round + 1}/${run.rounds}: ${Math.round(measured.rps)} req/s`);
  }
  const serverCpuSeconds = processCpuSeconds(server.child.pid) - serverBefore;
  const mariadbCpuSeconds = run.mariadbPid === undefined ? undefined : processCpuSeconds(run.mariadbPid) - mariadbBefore;
  const to = monotonicMicros();
  const loadAfter = loadAverage();
  await run.stop(server);
  const file = path.join(dir, `${stem}.cpuprofile`);
  if (!existsSync(file)) throw new Error(`no profile at ${file}: the server did not exit by itself on SIGTERM`);
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const heading = [
    `Profile of ${run.server} (process ${server.name}) under "${run.scenario}", ${when}: ${run.rounds} loads of ${run.duration} s, ${run.connections} connections.`,
    `Load average ${loadBefore} before, ${loadAfter} after (1, 5, 15 min).${unexpected > 0 ? ` WARNING: ${unexpected} answers not 2xx or failed.` : ''}`,
    `Profile: ${path.relative(process.cwd(), file)} (open it in Chrome DevTools or speedscope).`,
  ].join('\n');
  const summary = profileSummary(
    profile,
    {
      from,
      to,
      requests,
      seconds: run.rounds * run.duration,
      serverCpuSeconds,
      mariadbCpuSeconds,
    },
    heading,
  );
  const summaryFile = path.join(dir, `${stem}.txt`);
  writeFileSync(summaryFile, summary);
  process.stdout.write(summary);
  return path.relative(process.cwd(), summaryFile);
}
