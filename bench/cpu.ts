import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** Clock ticks a second, as /proc counts CPU time. */
const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/**
 * CPU seconds (user and system) a process has used so far, from /proc/<pid>/stat; 0 for no pid. A figure of work
 * done, which a machine shared with other loads moves far less than it moves req/s.
 */
export function processCpuSeconds(pid: number | undefined): number {
  if (pid === undefined) return 0;
  // Fields after the command's closing parenthesis (a command may hold spaces): utime and stime are the 12th and 13th.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/** The machine's load average over 1, 5 and 15 minutes, as /proc/loadavg gives it: said beside every figure. */
export function loadAverage(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}
