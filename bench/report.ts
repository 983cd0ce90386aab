import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as vega from 'vega';
import type { GenerationTiming } from './generate.js';
import type { TenantGenerationTiming } from './generate-tenant.js';
import { pairedRatio, type Ratio, ratioOf, ratioText } from './ratios.js';

/** The benchmark's results: a Markdown table with the ratios against the targets, and a chart (bench/results/). */

export type ServerName =
  | 'generated'
  | 'handwritten'
  | 'raw-http'
  | 'koa-hello'
  | 'koa-select'
  | 'platformatic'
  | 'idp-rs256'
  | 'idp-es256'
  | 'api-key'
  | 'rate-limited'
  | 'emit'
  | 'audited'
  // Issue 39: one user's Basic GET at 32 connections, its password remembered (an argon2id hash checked once), and
  // compared in SQL by the seed's AuthQuery (every request a check under the login limits).
  | 'basic-remembered'
  | 'basic-seed'
  | 'baseline'
  | 'traced'
  // Issue 46: the generated server traced with a 10% ratio sampler, and Platformatic DB with its own telemetry on
  // (a span a request and one a query, exported over OTLP to the same collector), beside it untraced.
  | 'traced-10'
  // The generated server in a process of its own, serving only the scenarios that time it against a variant of itself
  // in another (tracing unset; with its ETags as 'etags-on', against 'etags-off').
  | 'untraced'
  | 'etags-on'
  | 'platformatic-traced'
  // Issue 31: the first page and the page after 900,000 rows of one table, from the generated server and from
  // Platformatic DB by limit/offset and by its cursor (each the same process as its server).
  | 'page-first'
  | 'page-deep'
  // The ceiling of a first page: node:http and mysql2 alone (bench/raw-http.ts), what no Node server beats by much.
  | 'raw-page-first'
  // Issue 46: the ceiling's page after 900,000 rows, the key's last values sent as they are (no cursor signed).
  | 'raw-page-deep'
  // Issue 46: the one-row GET with the contract's duties (request id, parameter check, security headers, ETag) on
  // bare node:http (bench/raw-http.ts) and in one Koa handler (bench/koa-hello.ts): the same processes again.
  | 'raw-duties'
  | 'koa-duties'
  // Issue 44: the 10 KB page's 200 and 304 by a digest of its bytes, from bench/raw-http.ts with the same duties.
  | 'raw-tag-200'
  | 'raw-tag-304'
  | 'platformatic-offset-first'
  | 'platformatic-offset-deep'
  | 'platformatic-cursor-first'
  | 'platformatic-cursor-deep'
  // Issue 43: the same statements with the organisation from the caller's tenant ($tenant) and sent by the client
  // ($org), on Bearer tokens and on Basic with the seed's AuthQuery (bench/tenants.ts); each the generated server.
  | 'tenant'
  | 'org-param'
  | 'tenant-basic'
  | 'org-basic'
  // Issue 44 (bench/safe-writes.ts): a second generated server with ETAGS=off, and the generated server's 10 KB
  // answer as a 200 and a 304, tagged by a digest of its bytes or by a <Validator>, and 50 inserts as 50 POSTs or one batch.
  | 'etags-off'
  | 'tag-200'
  | 'tag-304'
  | 'validated-200'
  | 'validated-304'
  | 'posts-50'
  | 'batch-50'
  // Issue 45 (bench/mcp.ts): the same one-row GETs over REST and as an MCP tools/call (public, and Bearer), and
  // tools/list for a member of a backend of 100 routes; each the generated server.
  | 'rest-get'
  | 'mcp-get'
  | 'rest-bearer'
  | 'mcp-bearer'
  | 'tools-list';

export interface Measurement {
  rps: number;
  p50: number;
  p99: number;
  total: number;
  non2xx: number;
  errors: number;
  /** CPU seconds of the server and MariaDB over the measurement, until its events were delivered (the Emit scenario). */
  cpuSeconds?: number;
}

/** Valid callers with outside issuers' tokens, alone and under floods (docs/internals/contract.md §9). */
export interface FloodFigures {
  alone: Measurement[];
  /** Under a flood of distinct forged provider tokens. */
  flooded: Measurement[];
  /** Under a flood of as many requests without credentials: what any request costs. */
  control: Measurement[];
  /** Requests per second of either flood. */
  floodRate: number;
  /** Seconds the flood rounds took, all in all. */
  wallSeconds: number;
  /** When the provider was asked for its keys, seconds from the rounds' start. */
  keyRequestTimes: number[];
}

/** Events delivered by two servers to a loopback receiver (issue 32). */
export interface DeliveryFigures {
  /** Distinct events the receiver got (all of those in the outbox). */
  events: number;
  /** Deliveries in all: more than `events` when one was sent twice (at least once). */
  received: number;
  /** From the first delivery to the last. */
  seconds: number;
}

export const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

const round1 = (value: number) => Math.round(value * 10) / 10;
/** CPU seconds (server and MariaDB) a request of one round. */
const cpuPerRequest = (m: Measurement) => (m.cpuSeconds ?? 0) / Math.max(m.total, 1);
/** A ratio and its spread times a factor (a batch's inserts). */
const scaled = (ratio: Ratio, factor: number) => ratioOf(ratio.rounds.map((each) => each * factor));
/** `0.98-1.04`: min-max of runs' own ratios. */
const spread = (ratios: number[]) => {
  const ratio = ratioOf(ratios);
  return `${ratio.min.toFixed(2)}-${ratio.max.toFixed(2)}`;
};

/** The scenario timing outside issuers' tokens: the generated server with its own token, and with a provider's. */
export const PROVIDER_SCENARIO = 'Bearer GET, provider token (RS256, ES256)';
/** The same GET with the backend's own token, with an API key, and rate-limited (issue 29). */
export const KEY_SCENARIO = 'Bearer GET, API key, rate-limited';
/** The public GET of today's build (another commit's, `--baseline`), of this one with tracing unset, and traced (issue 33). */
export const TRACING_SCENARIO = 'public GET, traced';
/** The Bearer write in a transaction, beside today's build too when there is one (tracing changed Scope.transaction). */
export const WRITE_SCENARIO = 'write POST (2 steps, transaction)';

/** What the traced server exported, and against which commit the baseline was built. */
export interface TracingFigures {
  /** The baseline's commit, or undefined when none was built. */
  baseline: string | undefined;
  exports: number;
  bytes: number;
}

/** Refresh tokens rotated, each connection its own session. */
export const REFRESH_SCENARIO = 'token refresh (rotation)';
/** The same write with one Emit, and the same read audited (issue 32). */
export const EMIT_SCENARIO = 'write POST, with one Emit';
export const AUDIT_SCENARIO = 'Bearer GET, audited';
/** Issue 39: one user's Basic GET at 32 connections, the password remembered (hashed) and compared in SQL (the seed's AuthQuery). */
export const LOGINS_SCENARIO = 'Basic GET, 32 connections of one user';
/** Issue 43: a tenant's GET and write against the same statements with the organisation sent by the client (bench/tenants.ts). */
export const TENANT_GET_SCENARIO = 'tenant GET ($tenant vs $org by hand)';
export const TENANT_WRITE_SCENARIO = 'tenant write POST ($tenant vs $org by hand)';
/** The same on Basic with the seed's AuthQuery: the tenant read from usr at every request's check. */
export const TENANT_BASIC_SCENARIO = 'tenant Basic GET (tenant read from usr at each check)';
/** Issue 44: the same GET with ETags and with ETAGS=off; a 304 against the 200 it replaces, by a digest and by a <Validator>; a batch. */
export const ETAG_SCENARIO = 'GET with ETag vs ETAGS=off';
export const NOT_MODIFIED_SCENARIO = '304 vs 200, 10 KB answer';
export const VALIDATOR_SCENARIO = '304 with a <Validator>, 10 KB';
export const BATCH_SCENARIO = 'batch of 50 inserts vs 50 POSTs';
/** Inserts in the scenario's batch: its req/s are counted against the POSTs' over this many. */
export const BATCH_SIZE = 50;
/** Issue 45: a tools/call of a one-row GET against the same GET over REST; tools/list on one connection, 100 routes. */
export const MCP_CALL_SCENARIO = 'MCP tools/call vs REST, one-row public GET';
export const MCP_BEARER_SCENARIO = 'MCP tools/call vs REST, one-row Bearer GET';
export const MCP_LIST_SCENARIO = 'MCP tools/list, 100 routes, 1 connection';

/** tools/list's latency, one request after another on one connection (bench/latency.mjs): each round's median. */
export interface ToolsListFigures {
  routes: number;
  tools: number;
  medians: number[];
  p90s: number[];
}

/** Issue 31: pages of the table of 1,000,000 rows, by its primary key and newest first (two columns, descending). */
export const PAGES_BY_ID = 'pages of 1,000,000 rows, key item_id';
export const PAGES_NEWEST = 'pages of 1,000,000 rows, key created_on desc, item_id desc';

export async function writeResults(
  results: Map<string, Map<ServerName, Measurement[]>>,
  rss: Map<ServerName, number>,
  startup: { ms: number; rssMb: number },
  generation: GenerationTiming[],
  flags: { connections: string; duration: string; rounds: string; slices: number; pinned: boolean },
  flood: FloodFigures,
  delivery: DeliveryFigures,
  tracing?: TracingFigures,
  tenantGeneration?: TenantGenerationTiming,
  toolsList?: ToolsListFigures,
): Promise<void> {
  const { pinned } = flags;
  const when = new Date().toISOString().replace(/:\d\d\.\d+Z$/, 'Z');
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  const machine = `${os.availableParallelism()} cores (${cpu}), ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.type()} ${os.release()}, Node ${process.version}`;
  const lines = [
    `# xmlrest benchmark, ${when}`,
    '',
    `Machine: ${machine}. Load generator: autocannon, ${flags.connections} connections, ${flags.duration} s per server, scenario and round after a 1 s warm-up,`,
    `measured in ${flags.slices} slices interleaved with the other servers' (A B C C B A ...), ${flags.rounds} rounds. ${pinned ? 'Servers pinned to core 1, load generator to core 0 (taskset).' : 'No core pinning (taskset or a second core missing).'}`,
    `Data: 10,000 users, 100,000 rows in a user-owned table, 1,000,000 rows in bench_pages, on a private MariaDB. Figures are medians over rounds; spread is min-max of req/s;`,
    "ratios are medians of the ratios within each round (its slices are adjacent in time), then (min-max) of the rounds' ratios; a round's p50 and p99 are its slices' weighted by requests;",
    'every round is in the .json beside this file.',
    '',
    '| scenario | server | req/s (median) | spread | p50 ms | p99 ms | RSS MB |',
    '|---|---|---|---|---|---|---|',
  ];
  const chart: { scenario: string; server: string; rps: number }[] = [];
  const peer = [...results.values()].some((byServer) => byServer.has('platformatic'));
  const ratios: string[] = [
    `| scenario | generated / hand-written req/s | p99 generated / hand-written |${peer ? ' generated / Platformatic req/s | p99 generated / Platformatic |' : ''} generated / ceiling req/s | target |`,
    `|---|---|---|${peer ? '---|---|' : ''}---|---|`,
  ];
  const rpsOf = (measurements: Measurement[]) => median(measurements.map((m) => m.rps));
  // Ratios are medians of the rounds' own ratios: the two runs of a round are adjacent in time, so a slow
  // spell of the machine (a shared VM drifts by 2x here) slows both and cancels out of their ratio.
  // Each printed with the rounds' spread (bench/ratios.ts): `ratioText`.
  const rpsRatio = (a: Measurement[], b: Measurement[]) => pairedRatio(a, b, (m) => m.rps);
  const p99Ratio = (a: Measurement[], b: Measurement[]) => pairedRatio(a, b, (m) => Math.max(m.p99, 1));
  for (const [scenario, byServer] of results) {
    for (const [server, measurements] of byServer) {
      const rps = measurements.map((m) => m.rps);
      lines.push(
        `| ${scenario} | ${server} | ${Math.round(median(rps))} | ${Math.round(Math.min(...rps))}-${Math.round(Math.max(...rps))} | ${round1(median(measurements.map((m) => m.p50)))} | ${round1(median(measurements.map((m) => m.p99)))} | ${Math.round(rss.get(server) ?? 0)} |`,
      );
      chart.push({ scenario, server, rps: Math.round(median(rps)) });
    }
    // Targets (issue 15): at least as fast as the careful hand-written server, 1.5x Platformatic DB, p99 no worse.
    const generated = byServer.get('generated')!;
    const handwritten = byServer.get('handwritten');
    // The provider-token scenario has no hand-written server: its ratios are against the generated server's own tokens, below.
    if (handwritten === undefined) continue;
    const ratio = rpsRatio(generated, handwritten);
    const p99 = p99Ratio(generated, handwritten);
    const platformatic = byServer.get('platformatic');
    const peerRatio = platformatic ? rpsRatio(generated, platformatic) : undefined;
    const peerP99 = platformatic ? p99Ratio(generated, platformatic) : undefined;
    const ceiling = byServer.get('raw-http');
    const ceilingRatio = ceiling ? ratioText(rpsRatio(generated, ceiling)) : '';
    const met = ratio.median >= 1 && p99.median <= 1 && (peerRatio === undefined || (peerRatio.median >= 1.5 && peerP99!.median <= 1));
    const target = `>= 1.0, p99 <= 1.0${peer ? '; >= 1.5 and p99 <= 1.0 against Platformatic' : ''}`;
    const peerCells = peer ? ` ${peerRatio ? ratioText(peerRatio) : ''} | ${peerP99 ? ratioText(peerP99) : ''} |` : '';
    ratios.push(`| ${scenario} | ${ratioText(ratio)} | ${ratioText(p99)} |${peerCells} ${ceilingRatio} | ${met ? 'met' : 'missed'} (${target}) |`);
  }
  // The same round's slices: the Bearer GET of the generated server against the hand-written server's same SELECT
  // with no authentication (koa-select), measured inside the Bearer GET scenario. The one-row public GET, the
  // ceiling of earlier runs, is given beside it: the same round, but other slices of time.
  const bearer = results.get('Bearer GET ($uid)')!;
  const bearerVsCeiling = rpsRatio(bearer.get('generated')!, bearer.get('koa-select') ?? results.get('public GET')!.get('handwritten')!);
  const bearerVsOneRow = rpsRatio(bearer.get('generated')!, results.get('public GET')!.get('handwritten')!);
  // Issue 28: a GET with an outside issuer's RS256 or ES256 token against the same GET with the backend's own HS256
  // token, in the same slices; and valid callers' rate under a flood of distinct forged tokens against their rate alone.
  const provider = results.get(PROVIDER_SCENARIO);
  const own = provider?.get('generated');
  const providerRows = (['idp-rs256', 'idp-es256'] as const).map((name) => {
    const ratio = provider && own ? rpsRatio(provider.get(name)!, own) : ratioOf([]);
    return `| GET with a provider's ${name === 'idp-rs256' ? 'RS256' : 'ES256'} token vs the backend's own HS256 token | ${ratioText(ratio)} | |${peer ? ' | |' : ''} | ${ratio.median >= 0.9 ? 'met' : 'missed'} (>= 0.9) |`;
  });
  const keyed = results.get(KEY_SCENARIO);
  const keyRows = keyed
    ? (
        [
          ['api-key', 'GET with an API key vs the same GET with a Bearer token', 0.95],
          ['rate-limited', 'rate-limited GET (limit far above the load) vs the same GET unlimited', 0.9],
        ] as const
      ).map(([name, what, target]) => {
        const ratio = rpsRatio(keyed.get(name)!, keyed.get('generated')!);
        return `| ${what} | ${ratioText(ratio)} | |${peer ? ' | |' : ''} | ${ratio.median >= target ? 'met' : 'missed'} (>= ${target}) |`;
      })
    : [];
  // Issue 32: the same write with one Emit, the same read audited, in the same slices; events delivered per second.
  const sideBySide = (scenario: string, name: ServerName, what: string, target: number | undefined, against: ServerName = 'generated') => {
    const measured = results.get(scenario);
    const ratio = measured ? rpsRatio(measured.get(name)!, measured.get(against)!) : ratioOf([]);
    const verdict = target === undefined ? '' : `${ratio.median >= target ? 'met' : 'missed'} (>= ${target})`;
    // Counted CPU (the tenant scenarios): the other's CPU a request over this one's, read as req/s are (higher is
    // cheaper), round by round as every ratio.
    const cpuText =
      measured?.get(name)?.[0]?.cpuSeconds === undefined
        ? ''
        : `; by CPU a request ${ratioText(pairedRatio(measured.get(against)!, measured.get(name)!, cpuPerRequest))}`;
    return `| ${what} | ${ratioText(ratio)}${cpuText} | |${peer ? ' | |' : ''} | ${verdict} |`;
  };
  const tenantRows = [
    sideBySide(TENANT_GET_SCENARIO, 'tenant', "tenant GET ($tenant, from the token's `ten`) vs the same GET with `org` sent by the client", 0.98, 'org-param'),
    sideBySide(TENANT_WRITE_SCENARIO, 'tenant', 'tenant write POST (2 steps, transaction) vs the same write with `org` sent by the client', 0.98, 'org-param'),
    sideBySide(
      TENANT_BASIC_SCENARIO,
      'tenant-basic',
      "Basic GET, the seed's AuthQuery, tenant read from usr at each check (its TenantQuery) vs the same GET with `org` sent (what the tenant's query costs)",
      undefined,
      'org-basic',
    ),
  ];
  // Issue 44 (bench/safe-writes.ts): each against the same route's other answer, or the other server, in the same slices.
  const batch = results.get(BATCH_SCENARIO);
  const batchRatio = batch ? scaled(rpsRatio(batch.get('batch-50')!, batch.get('posts-50')!), BATCH_SIZE) : ratioOf([]);
  // CPU (server and MariaDB) an insert, round by round: a batch's over its inserts.
  const batchCpu = batch ? scaled(pairedRatio(batch.get('posts-50')!, batch.get('batch-50')!, cpuPerRequest), BATCH_SIZE) : ratioOf([]);
  const safeWriteRows = [
    sideBySide(ETAG_SCENARIO, 'etags-on', 'one-row Bearer GET with its ETag vs the same GET of a second server with ETAGS=off', 0.97, 'etags-off'),
    sideBySide(NOT_MODIFIED_SCENARIO, 'tag-304', '304 vs the 200 it replaces, 10 KB answer, the tag a digest of its bytes', 1.3, 'tag-200'),
    sideBySide(
      NOT_MODIFIED_SCENARIO,
      'raw-tag-304',
      "the same on bare node:http and mysql2 (the ceiling with the contract's duties): its 304 vs its 200",
      undefined,
      'raw-tag-200',
    ),
    sideBySide(VALIDATOR_SCENARIO, 'validated-304', "304 with a `<Validator>` (the list's version) vs the digest's 304, 10 KB answer", 1, 'tag-304'),
    sideBySide(VALIDATOR_SCENARIO, 'validated-304', '304 with a `<Validator>` vs its own 200, 10 KB answer', 1.3, 'validated-200'),
    `| batch of ${BATCH_SIZE} inserts vs ${BATCH_SIZE} POSTs of the same insert, one kept-alive connection (inserts a second) | ${ratioText(batchRatio)}; by CPU an insert ${ratioText(batchCpu)} | |${peer ? ' | |' : ''} | ${batchRatio.median >= 5 ? 'met' : 'missed'} (>= 5) |`,
  ];
  // Issue 45 (bench/mcp.ts): a tools/call against the same GET over REST, in the same slices; tools/list's median latency.
  const listMedian = toolsList ? median(toolsList.medians) : Number.NaN;
  const mcpRows = [
    sideBySide(MCP_CALL_SCENARIO, 'mcp-get', 'MCP tools/call of the one-row public GET vs the same GET over REST', 0.8, 'rest-get'),
    sideBySide(MCP_BEARER_SCENARIO, 'mcp-bearer', "MCP tools/call of a one-row Bearer GET (the caller's row) vs the same GET over REST", 0.8, 'rest-bearer'),
    `| MCP tools/list, a member of a backend of ${toolsList?.routes ?? ''} routes (${toolsList?.tools ?? ''} tools listed), one connection: median latency, ms (p90 ${toolsList ? median(toolsList.p90s).toFixed(2) : ''}) | ${listMedian.toFixed(2)} | |${peer ? ' | |' : ''} | ${listMedian < 5 ? 'met' : 'missed'} (< 5 ms) |`,
  ];
  const logins = results.get(LOGINS_SCENARIO);
  const seedRatio = logins ? rpsRatio(logins.get('basic-seed')!, logins.get('basic-remembered')!) : ratioOf([]);
  const loginRow = `| Basic GET, 32 connections of one user: password compared in SQL (the seed's AuthQuery) vs a remembered hashed password | ${ratioText(seedRatio)} | |${peer ? ' | |' : ''} | ${seedRatio.median >= 0.9 ? 'met' : 'missed'} (>= 0.9) |`;
  const deliveryRate = delivery.events / delivery.seconds;
  const eventRows = [
    sideBySide(EMIT_SCENARIO, 'emit', 'write POST with one Emit vs the same write without it', 0.85),
    sideBySide(AUDIT_SCENARIO, 'audited', 'audited Bearer GET vs the same GET without audit', 0.9),
    `| events delivered per second by two servers on one core to a loopback receiver (${delivery.events} events, ${delivery.received - delivery.events} sent twice) | ${Math.round(deliveryRate)} | |${peer ? ' | |' : ''} | ${deliveryRate >= 1000 ? 'met' : 'missed'} (>= 1,000) |`,
  ];
  const rotations = results.get(REFRESH_SCENARIO)?.get('generated');
  const rotationRate = rotations ? median(rotations.map((m) => m.rps)) : Number.NaN;
  const refreshRow = `| refresh token rotations per second, the server on one core | ${Math.round(rotationRate)} | |${peer ? ' | |' : ''} | ${rotationRate >= 1000 ? 'met' : 'missed'} (>= 1,000) |`;
  // Issue 33: the public GET with tracing unset against the same GET of the build before tracing, and traced
  // (every request and its SELECT a span, all exported to a loopback collector) against both, in the same slices.
  const traced = results.get(TRACING_SCENARIO);
  const tracingRows: string[] = [];
  if (traced) {
    const blank = `|${peer ? ' | |' : ''}`;
    const before = traced.get('baseline');
    const unset = traced.get('untraced')!;
    const on = traced.get('traced')!;
    if (before) {
      const unsetRatio = rpsRatio(unset, before);
      const onRatio = rpsRatio(on, before);
      tracingRows.push(
        `| GET with tracing unset vs the same GET of today's build (${tracing?.baseline}) | ${ratioText(unsetRatio)} | ${ratioText(p99Ratio(unset, before))} ${blank} | ${unsetRatio.median >= 0.98 ? 'met' : 'missed'} (>= 0.98) |`,
        `| GET traced, exporting to a loopback OTLP collector, vs today's build | ${ratioText(onRatio)} | ${ratioText(p99Ratio(on, before))} ${blank} | ${onRatio.median >= 0.85 ? 'met' : 'missed'} (>= 0.85) |`,
      );
    }
    const write = results.get(WRITE_SCENARIO);
    const writeBefore = write?.get('baseline');
    if (write && writeBefore) {
      const writeRatio = rpsRatio(write.get('generated')!, writeBefore);
      tracingRows.push(
        `| write POST (Bearer, a transaction of 2 steps) with tracing unset vs the same write of today's build | ${ratioText(writeRatio)} | ${ratioText(p99Ratio(write.get('generated')!, writeBefore))} ${blank} | ${writeRatio.median >= 0.98 ? 'met' : 'missed'} (>= 0.98) |`,
      );
    }
    // Issue 46: each traced server against its untraced self in the same slices, by req/s and by CPU a request
    // (server and MariaDB), the shared machine moving the first far more than the second.
    const cpuRatio = (untraced: Measurement[], tracedOnes: Measurement[]) => {
      const perRequest = (of: Measurement[]) => of.reduce((sum, m) => sum + (m.cpuSeconds ?? 0), 0) / of.reduce((sum, m) => sum + m.total, 0);
      return perRequest(untraced) / perRequest(tracedOnes);
    };
    const peerOff = traced.get('platformatic');
    const peerOn = traced.get('platformatic-traced');
    const peerCost = peerOff && peerOn ? rpsRatio(peerOn, peerOff) : undefined;
    const cost = rpsRatio(on, unset);
    const fullTarget = Math.max(0.85, peerCost?.median ?? 0);
    tracingRows.push(
      `| GET traced vs the same GET with tracing unset (what tracing costs: a span and a child span a request; ${tracing?.exports ?? 0} exports, ${Math.round((tracing?.bytes ?? 0) / 2 ** 20)} MB; CPU a request ratio ${cpuRatio(unset, on).toFixed(2)}) | ${ratioText(cost)} | ${ratioText(p99Ratio(on, unset))} ${blank} | ${cost.median >= fullTarget ? 'met' : 'missed'} (>= 0.85${peerCost === undefined ? '' : ' and >= Platformatic DB traced'}) |`,
    );
    const sampled = traced.get('traced-10');
    if (sampled) {
      const ratio = rpsRatio(sampled, unset);
      tracingRows.push(
        `| GET traced with a 10% ratio sampler vs tracing unset (CPU a request ratio ${cpuRatio(unset, sampled).toFixed(2)}) | ${ratioText(ratio)} | ${ratioText(p99Ratio(sampled, unset))} ${blank} | ${ratio.median >= 0.97 ? 'met' : 'missed'} (>= 0.97) |`,
      );
    }
    if (peerOff && peerOn && peerCost !== undefined) {
      tracingRows.push(
        `| Platformatic DB with its own OpenTelemetry on vs off (a span a request and one a query, to the same collector; CPU a request ratio ${cpuRatio(peerOff, peerOn).toFixed(2)}) | ${ratioText(peerCost)} | ${ratioText(p99Ratio(peerOn, peerOff))} ${blank} | |`,
      );
    }
  }
  const floodRatio = rpsRatio(flood.flooded, flood.alone);
  const controlRatio = rpsRatio(flood.control, flood.alone);
  // At most one key request in any 30 s: the most the provider saw within 30 s of any one of them.
  const busiest = Math.max(0, ...flood.keyRequestTimes.map((time) => flood.keyRequestTimes.filter((other) => other >= time && other < time + 30).length));
  lines.push(...pageLines(results, peer, Number(flags.duration)), ...ceilingLines(results));
  lines.push(
    '',
    '## Ratios against the targets',
    '',
    ...ratios,
    ...providerRows,
    ...keyRows,
    ...tracingRows,
    refreshRow,
    ...eventRows,
    loginRow,
    ...tenantRows,
    ...safeWriteRows,
    ...mcpRows,
    `| valid callers (RS256 provider tokens) under a flood of ${flood.floodRate} distinct forged tokens/s vs alone | ${ratioText(floodRatio)} | |${peer ? ' | |' : ''} | ${floodRatio.median >= 0.8 ? 'met' : 'missed'} (>= 0.8) |`,
    `| the same, under ${flood.floodRate} requests/s without credentials (the control: what any request costs) | ${ratioText(controlRatio)} | |${peer ? ' | |' : ''} | |`,
    `| key requests to the provider in any 30 s of ${Math.round(flood.wallSeconds)} s of flood rounds (${flood.keyRequestTimes.length} in all) | ${busiest} | |${peer ? ' | |' : ''} | ${busiest <= 1 ? 'met' : 'missed'} (<= 1) |`,
    `| Bearer GET vs the same SELECT in Koa + mysql2, unauthenticated | ${ratioText(bearerVsCeiling)} | |${peer ? ' | |' : ''} | ${bearerVsCeiling.median >= 0.85 ? 'met' : 'missed'} (>= 0.85) |`,
    `| Bearer GET (10 rows) vs the one-row public GET in Koa + mysql2 (the earlier ceiling; other slices) | ${ratioText(bearerVsOneRow)} | |${peer ? ' | |' : ''} | |`,
    '',
    '## Generation and start',
    '',
    '| what | time | target |',
    '|---|---|---|',
    ...generation.map(
      (t) =>
        `| generate ${t.resources} resources, full (in process) | ${Math.round(t.fullMs)} ms | ${t.resources === 1000 ? `${t.fullMs < 5000 ? 'met' : 'missed'} (< 5 s)` : ''} |`,
    ),
    ...generation.map(
      (t) =>
        `| generate ${t.resources} resources, one changed file (dev cache) | ${Math.round(t.oneFileMs)} ms | ${t.resources === 1000 ? `${t.oneFileMs < 300 ? 'met' : 'missed'} (< 0.3 s)` : ''} |`,
    ),
    ...(tenantGeneration
      ? [
          `| generate ${tenantGeneration.resources} resources of a tenant backend, proven, vs the same without a tenant (core, median of 5) | ${Math.round(tenantGeneration.withMs)} ms vs ${Math.round(tenantGeneration.withoutMs)} ms, ${(tenantGeneration.withMs / tenantGeneration.withoutMs).toFixed(2)}x (runs ${spread(tenantGeneration.runRatios.without)}) | ${tenantGeneration.withMs / tenantGeneration.withoutMs <= 1.1 ? 'met' : 'missed'} (<= 1.1x) |`,
          `| the same, proven, vs the organisation written as a literal, no parameter (the proof's own cost) | ${Math.round(tenantGeneration.withMs)} ms vs ${Math.round(tenantGeneration.literalMs)} ms, ${(tenantGeneration.withMs / tenantGeneration.literalMs).toFixed(2)}x (runs ${spread(tenantGeneration.runRatios.literal)}) | ${tenantGeneration.withMs / tenantGeneration.literalMs <= 1.1 ? 'met' : 'missed'} (<= 1.1x) |`,
        ]
      : []),
    `| start the compiled server with 1,000 routes (spawn to listening) | ${Math.round(startup.ms)} ms, ${Math.round(startup.rssMb)} MB RSS | ${startup.ms < 1000 ? 'met' : 'missed'} (< 1 s) |`,
    '',
    `![req/s per scenario](${when.replaceAll(':', '')}.svg)`,
    '',
  );
  mkdirSync('bench/results', { recursive: true });
  const stem = `bench/results/${when.replaceAll(':', '')}`;
  const markdown = lines.join('\n');
  writeFileSync(`${stem}.md`, markdown);
  // Every run's figures, so that a table can be recomputed or checked.
  const raw = Object.fromEntries([...results].map(([scenario, byServer]) => [scenario, Object.fromEntries(byServer)]));
  writeFileSync(`${stem}.json`, JSON.stringify({ flags, rss: Object.fromEntries(rss), results: raw, flood, delivery, toolsList }, null, 2) + '\n');
  writeFileSync('bench/results/latest.md', markdown.replace(`](${when.replaceAll(':', '')}.svg)`, '](latest.svg)'));
  const svg = await renderChart(chart);
  writeFileSync(`${stem}.svg`, svg);
  writeFileSync('bench/results/latest.svg', svg);
  process.stdout.write(markdown + '\n');
}

/**
 * Issue 31: the first page of the table of 1,000,000 rows and the page after 900,000 of them, for a one-column
 * key and newest first: the generated server against itself (the deep page within 1.3x the first's time) and
 * against the better of Platformatic DB's two ways of paging the same order, round by round (at least 1.5x at
 * every depth, and 100x at depth newest first).
 */
export function pageLines(results: Map<string, Map<ServerName, Measurement[]>>, peer: boolean, duration: number): string[] {
  // As every ratio here: the median of each round's own ratio, its servers' slices adjacent in time, and their spread.
  const rpsRatio = (a: Measurement[], b: Measurement[]) => pairedRatio(a, b, (m) => m.rps);
  const shapes = [
    [PAGES_BY_ID, 'item_id'],
    [PAGES_NEWEST, 'created_on desc, item_id desc'],
  ] as const;
  const table = [
    '',
    '## Pages of a table of 1,000,000 rows',
    '',
    `| key | page | generated req/s | node:http + mysql2 req/s |${peer ? ' Platformatic DB limit/offset req/s | Platformatic DB cursor req/s |' : ''}`,
    `|---|---|---|---|${peer ? '---|---|' : ''}`,
  ];
  const ratios = ['', '| ratio | value (rounds) | target |', '|---|---|---|'];
  const rps = (measurements: Measurement[] | undefined) => (measurements ? Math.round(median(measurements.map((m) => m.rps))).toLocaleString('en') : '-');
  for (const [scenario, key] of shapes) {
    const byServer = results.get(scenario);
    if (!byServer) continue;
    for (const depth of ['first', 'deep'] as const) {
      const peerCells = peer ? ` ${rps(byServer.get(`platformatic-offset-${depth}`))} | ${rps(byServer.get(`platformatic-cursor-${depth}`))} |` : '';
      table.push(
        `| ${key} | ${depth === 'first' ? 'first' : 'after 900,000 rows'} | ${rps(byServer.get(`page-${depth}`))} | ${rps(byServer.get(`raw-page-${depth}`))} |${peerCells}`,
      );
    }
    // Time of the page after 900,000 rows over the first's: first-page req/s over deep-page req/s, round by round.
    const slower = rpsRatio(byServer.get('page-first')!, byServer.get('page-deep')!);
    ratios.push(
      `| ${key}: time of the page after 900,000 rows / the first page's | ${ratioText(slower)} | ${slower.median <= 1.3 ? 'met' : 'missed'} (<= 1.3) |`,
    );
    if (!peer) continue;
    const ceiling = byServer.get('raw-page-first');
    for (const depth of ['first', 'deep'] as const) {
      const own = byServer.get(`page-${depth}`)!;
      const offset = byServer.get(`platformatic-offset-${depth}`)!;
      const cursor = byServer.get(`platformatic-cursor-${depth}`)!;
      // Platformatic DB's best way in each round: whichever of limit/offset and its cursor answered more; a round
      // in which neither answered at all counts as one answer in it (the ratio is then a lower bound: >=).
      const best = offset.map((m, round) => (m.rps >= cursor[round]!.rps ? m : cursor[round]!));
      const floored = best.some((m) => m.total === 0);
      const ratio = rpsRatio(
        own,
        best.map((m) => (m.total === 0 ? { ...m, rps: 1 / duration } : m)),
      );
      const target = depth === 'deep' && scenario === PAGES_NEWEST ? 100 : 1.5;
      const big = (value: number) => (value >= 100 ? Math.round(value).toLocaleString('en') : value.toFixed(2));
      ratios.push(
        `| ${key}, ${depth === 'first' ? 'first page' : 'after 900,000 rows'}: generated / Platformatic DB's best (limit/offset or cursor) | ${floored ? '>= ' : ''}${big(ratio.median)} (${big(ratio.min)}-${big(ratio.max)}) | ${ratio.median >= target ? 'met' : 'missed'} (>= ${target}) |`,
      );
      // What any Node server can reach on this machine: the ceiling's first page against the same best.
      if (depth === 'first' && ceiling !== undefined) {
        ratios.push(
          `| ${key}, first page: the ceiling (node:http + mysql2, no cursor signed) / Platformatic DB's best | ${ratioText(rpsRatio(ceiling, best))} | |`,
        );
      }
    }
  }
  return [...table, ...ratios];
}

/**
 * Issue 46: the generated server against the ceiling's same statement (bench/raw-http.ts: node:http and mysql2
 * alone, no framework, no checks, no cursor signed), in the same slices: the one-row public GET, and the first page
 * and the page after 900,000 rows of each key shape. Target 0.9 each.
 */
export function ceilingLines(results: Map<string, Map<ServerName, Measurement[]>>): string[] {
  const rows: string[] = [];
  // `null`: a row that explains, with no target of its own (an undefined would take the default).
  const row = (what: string, own: Measurement[] | undefined, ceiling: Measurement[] | undefined, target: number | null = 0.9) => {
    if (!own || !ceiling) return;
    const ratio = pairedRatio(own, ceiling, (m) => m.rps);
    // The ceiling's CPU a request (its server's and MariaDB's) over the generated server's, read as req/s are.
    const cpu = own[0]?.cpuSeconds === undefined ? '' : ratioText(pairedRatio(ceiling, own, cpuPerRequest));
    const us = (of: Measurement[]) => Math.round((of.reduce((sum, m) => sum + (m.cpuSeconds ?? 0), 0) / of.reduce((sum, m) => sum + m.total, 0)) * 1e6);
    const cpuCells = cpu === '' ? ' | |' : ` ${cpu} | ${us(own)} vs ${us(ceiling)} |`;
    rows.push(`| ${what} | ${ratioText(ratio)} |${cpuCells} ${target === null ? '' : `${ratio.median >= target ? 'met' : 'missed'} (>= ${target})`} |`);
  };
  const get = results.get('public GET');
  row('one-row public GET / the same SELECT in node:http + mysql2', get?.get('generated'), get?.get('raw-http'));
  // What the ceiling leaves out, no target of their own: the duties alone on node:http, then in Koa (the stack the
  // user chose), then the generated server against Koa's.
  row(
    "the ceiling with the contract's duties (request id, `id` checked, security headers, ETag) / the ceiling",
    get?.get('raw-duties'),
    get?.get('raw-http'),
    null,
  );
  row('the same duties in one Koa handler (@koa/router) / the ceiling', get?.get('koa-duties'), get?.get('raw-http'), null);
  row('one-row public GET / the same duties in one Koa handler', get?.get('generated'), get?.get('koa-duties'), null);
  for (const [scenario, key] of [
    [PAGES_BY_ID, 'item_id'],
    [PAGES_NEWEST, 'created_on desc, item_id desc'],
  ] as const) {
    const pages = results.get(scenario);
    row(`${key}, first page / the ceiling's first page`, pages?.get('page-first'), pages?.get('raw-page-first'));
    row(`${key}, page after 900,000 rows / the ceiling's same page (its key sent as it is)`, pages?.get('page-deep'), pages?.get('raw-page-deep'));
  }
  if (rows.length === 0) return [];
  return [
    '',
    '## Near the ceiling (issue 46)',
    '',
    '| generated / ceiling | req/s (rounds) | by CPU a request, server and MariaDB (rounds) | CPU a request, us: generated vs ceiling | target (req/s) |',
    '|---|---|---|---|---|',
    ...rows,
  ];
}

/** A grouped bar chart of median req/s, rendered to SVG by Vega. */
async function renderChart(data: { scenario: string; server: string; rps: number }[]): Promise<string> {
  const spec: vega.Spec = {
    $schema: 'https://vega.github.io/schema/vega/v6.json',
    width: 720,
    height: 300,
    padding: 10,
    title: { text: 'Median requests per second (higher is better)' },
    data: [{ name: 'table', values: data }],
    scales: [
      { name: 'x', type: 'band', domain: { data: 'table', field: 'scenario' }, range: 'width', padding: 0.2 },
      { name: 'y', type: 'linear', domain: { data: 'table', field: 'rps' }, range: 'height', nice: true, zero: true },
      { name: 'colour', type: 'ordinal', domain: { data: 'table', field: 'server' }, range: { scheme: 'category10' } },
    ],
    axes: [
      { orient: 'bottom', scale: 'x', labelAngle: -20, labelAlign: 'right' },
      { orient: 'left', scale: 'y', title: 'req/s', grid: true },
    ],
    legends: [{ fill: 'colour', title: 'server', orient: 'right' }],
    marks: [
      {
        type: 'group',
        from: { facet: { data: 'table', name: 'facet', groupby: 'scenario' } },
        encode: { enter: { x: { scale: 'x', field: 'scenario' } } },
        signals: [{ name: 'width', update: "bandwidth('x')" }],
        scales: [{ name: 'inner', type: 'band', range: 'width', domain: { data: 'facet', field: 'server' } }],
        marks: [
          {
            type: 'rect',
            from: { data: 'facet' },
            encode: {
              enter: {
                x: { scale: 'inner', field: 'server' },
                width: { scale: 'inner', band: 1 },
                y: { scale: 'y', field: 'rps' },
                y2: { scale: 'y', value: 0 },
                fill: { scale: 'colour', field: 'server' },
              },
            },
          },
        ],
      },
    ],
  };
  return new vega.View(vega.parse(spec), { renderer: 'none' }).toSVG();
}
