import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type mysql from 'mysql2/promise';
import { KeyStore } from '../console/keys.js';
import { RESERVED_USER_PREFIX } from '../console/names.js';
import { isoSeconds } from '../console/store.js';
import { PAGE_PARAMS } from '../generator/analyse/list.js';
import { analyseSources, readSources } from '../generator/index.js';
import type { Backend, ExecuteStep, Operation, Project } from '../generator/ir.js';
import { openApiDocument } from '../generator/openapi.js';
import { DEFAULT_USER_TABLES } from '../runtime/auth/user-tables.js';
import { errnoOf, NO_COLUMN, NO_TABLE } from '../runtime/db/index.js';
import { FORBIDDEN_MESSAGE } from '../runtime/errors.js';
import { addUser, grantRole, queryableOf, recordFromCli } from './schema.js';

/**
 * `xmlrest verify-access BASE_URL` (docs/contract.md §8): proves that a running
 * server admits and refuses as access.lock says, route by route, by calling it.
 *
 * First it compares the server's own OpenAPI document with the resources it
 * was given (every operation, and the parameters of each): a server deployed
 * from other resources is refused before anything is sent or any user made,
 * since whether a call can change data is read from the resources.
 *
 * It signs in as temporary users of the default user tables, one per role the
 * lock names on those tables' backends and one holding a role no route names
 * (`xmlrest-verify-any`: authenticated, entitled to nothing), with every way in
 * each backend has (HTTP Basic; Bearer tokens of both shapes; API keys), and
 * calls every route of the lock as each of them and with no credentials. Every
 * backend of the default tables is called by every one of those users, since
 * they are one user directory: a guard widened to another backend's role, or
 * to `*`, admits a user the lock refuses, and is named. No sign-in fails on
 * purpose, so the server's login limits never count one of its calls.
 *
 * It changes no application data: a route is called without its parameters,
 * so that one the guard admits answers 400 (routing, then the role, then the
 * parameters: docs/contract.md §3) and never runs; a read without parameters
 * is called as it is; a write without parameters, which would run, is never
 * sent and is reported unproven, as is a token request that writes besides
 * issuing its token.
 *
 * The temporary users' roles are grants that end (15 minutes, renewed every 5
 * as a long run goes on): a run killed with SIGKILL leaves users who can call
 * nothing once their grants end, and a later run removes them then (a run
 * still going renews its grants, so another run never takes its users). The users, their keys and sessions
 * are removed at the end, on a failure, and on SIGINT and SIGTERM; one line of
 * the console's history says what a run made and removed. What cannot be
 * proven is said, never passed: routes of a backend with its own AuthQuery
 * (its users live in its own tables) beyond the call with no credentials, and
 * the tokens of identity providers (verify-access cannot sign them).
 */

/** Every name a temporary user is given starts so (a reserved prefix: console/names.ts): a run's leftovers are found by it. */
export const TEMPORARY_USER_PREFIX = RESERVED_USER_PREFIX;
/** The role of the user that stands for any authenticated caller entitled to nothing: no route may name it. */
export const ANY_ROLE = `${TEMPORARY_USER_PREFIX}any`;
/** How long a temporary user's roles are granted for: past it, a user a killed run left can call nothing. */
const GRANT_SECONDS = 900;
/** A run that goes on renews its users' grants (and signs them in again) this often, well before they end. */
const RENEW_AFTER_MS = 300_000;
/** Earlier runs' revocation rows are pruned when their history line is younger than this (older ones are left). */
const PRUNE_DAYS = 7;
const REQUEST_TIMEOUT_MS = 15_000;

export interface VerifyOptions {
  baseUrl: string;
  /** access.lock's path; default `access.lock` in the project folder. */
  lockFile: string;
  /** The project-relative resources folder the lock was written from. */
  resourcesDir: string;
  root: string;
  connect: () => Promise<mysql.Connection>;
  /** Stops the run (SIGINT, SIGTERM): the users are removed and the run ends. */
  signal?: AbortSignal;
  /** Progress and the users' removal, for a person watching (stderr). */
  say?: (line: string) => void;
}

export interface Check {
  backend: string;
  method: string;
  path: string;
  /** The caller: a role, or `(anonymous)`. */
  role: string;
  /** How the caller's credentials travelled: `none`, `Basic`, `Bearer (shape A)`, `Bearer (shape B)`, `API key`. */
  credentials: string;
  expected: 'admitted' | 'refused';
  got: 'admitted' | 'refused' | 'unproven' | 'error';
  status: number | null;
  /** Why it is unproven, or what the answer said. */
  note?: string;
}

export interface Verdict {
  base: string;
  lines: number;
  requests: number;
  checks: Check[];
  disagreements: Check[];
  unproven: Check[];
}

/** A line of access.lock: backend, path, method and who admits (`public`, `*`, or roles). */
interface LockLine {
  backend: string;
  path: string;
  method: string;
  rule: 'public' | '*' | string[];
}

/** A run that cannot begin: a wrong command line, a project or a server that is not what it must be. Nothing was sent, no user made. */
export class VerifyUsage extends Error {}

/** A run that began and cannot go on (the login limits refused a sign-in): what it proved so far proves nothing. */
export class CouldNotFinish extends Error {}

/** The temporary users could not be removed (the database went away): said, with who they are, never as removed. */
export class RemovalFailed extends Error {}

export function readLock(text: string, file: string): LockLine[] {
  return text.split('\n').flatMap((line, index) => {
    if (line.trim() === '' || line.startsWith('#')) return [];
    const [backend, served, method, ...roles] = line.trim().split(/\s+/);
    if (backend === undefined || served === undefined || method === undefined || roles.length === 0) {
      throw new VerifyUsage(`${file}:${index + 1}: not a line of access.lock: ${line}`);
    }
    const rule = roles.length === 1 && (roles[0] === 'public' || roles[0] === '*') ? (roles[0] as 'public' | '*') : roles;
    return [{ backend, path: served, method, rule }];
  });
}

interface Caller {
  role: string;
  credentials: string;
  /** Request headers that carry the credentials. */
  headers: Record<string, string>;
}

interface TemporaryUser {
  id: number;
  name: string;
  password: string;
  role: string;
}

/** What a run made, for its line of the history and for pruning after it: users and when the last of their tokens ends. */
interface Made {
  users: TemporaryUser[];
  /** The latest end given to their grants (Unix seconds): no token or key of theirs outlives it. */
  until: number;
}

export async function verifyAccess(options: VerifyOptions): Promise<Verdict> {
  const say = options.say ?? (() => {});
  const base = options.baseUrl.replace(/\/+$/, '');
  const lockPath = path.resolve(options.root, options.lockFile);
  if (!existsSync(lockPath)) throw new VerifyUsage(`no ${options.lockFile} here: run it in the project folder, or give --lock`);
  const lines = readLock(readFileSync(lockPath, 'utf8'), options.lockFile);
  const { project, diagnostics } = analyseSources(readSources(options.root, options.resourcesDir), {
    resourcesDir: options.resourcesDir,
    // Only what the resources say is read here: a plug-in module is found, never loaded.
    exists: (file) => existsSync(path.join(options.root, file)),
  });
  if (diagnostics.count > 0) throw new VerifyUsage(`${options.resourcesDir}/ does not generate:\n${diagnostics.lines().join('\n')}`);
  const backends = new Map(project.backends.map((backend) => [backend.name, backend]));
  for (const line of lines) {
    if (!backends.has(line.backend)) throw new VerifyUsage(`${options.lockFile} names backend ${line.backend}, which ${options.resourcesDir}/ does not define`);
    if (Array.isArray(line.rule) && line.rule.includes(ANY_ROLE)) {
      throw new VerifyUsage(`${options.lockFile} names the role ${ANY_ROLE}, which verify-access keeps for a user entitled to nothing: rename it`);
    }
  }
  const verdict: Verdict = { base, lines: lines.length, requests: 0, checks: [], disagreements: [], unproven: [] };
  const record = (check: Check) => {
    verdict.checks.push(check);
    if (check.got === 'unproven') verdict.unproven.push(check);
    else if (check.got !== check.expected) verdict.disagreements.push(check);
  };
  const send: Send = async (method, url, headers, body) => {
    options.signal?.throwIfAborted();
    verdict.requests++;
    const signals = [AbortSignal.timeout(REQUEST_TIMEOUT_MS), ...(options.signal ? [options.signal] : [])];
    const response = await fetch(url, { method, headers, body, redirect: 'manual', signal: AbortSignal.any(signals) });
    return { status: response.status, headers: response.headers, text: await response.text() };
  };

  // Before any user is made and anything else is sent: the server must serve what the resources say.
  await compareWithServer(base, send, project, options.resourcesDir);

  // The backends of the default tables share their users: every one of those users calls every such backend.
  const served = lines.filter((line) => backends.get(line.backend)!.defaultTables && backends.get(line.backend)!.authScheme !== null);
  const roles = [...new Set(served.flatMap((line) => (Array.isArray(line.rule) ? line.rule : [])))].sort();
  const connection = await options.connect();
  const made: Made = { users: [], until: 0 };
  const removed: Made = { users: [], until: 0 };
  let failure: unknown;
  let removal: unknown;
  try {
    if (served.length > 0) await requireGrantEnds(connection);
    Object.assign(removed, await removeLeftovers(connection, say));
    await pruneEarlierRuns(connection);
    let renewedAt = Date.now();
    const renew = async () => {
      made.until = Math.floor(Date.now() / 1000) + GRANT_SECONDS;
      for (const user of made.users) await grantRole(connection, user.id, user.role, made.until);
      renewedAt = Date.now();
    };
    if (served.length > 0) {
      const run = randomBytes(3).toString('hex');
      made.until = Math.floor(Date.now() / 1000) + GRANT_SECONDS;
      for (const role of [...roles, ANY_ROLE]) {
        options.signal?.throwIfAborted();
        const user = { id: 0, name: `${TEMPORARY_USER_PREFIX}${run}-${made.users.length + 1}`, password: randomBytes(24).toString('base64url'), role };
        user.id = await addUser(connection, user.name, user.password, []);
        made.users.push(user);
        await grantRole(connection, user.id, role, made.until);
      }
      say(
        `verify-access: ${made.users.length} temporary users (${made.users.map((user) => `${user.name}: ${user.role}`).join(', ')}), their roles granted for ${GRANT_SECONDS / 60} minutes`,
      );
    }

    for (const backend of project.backends) {
      const own = lines.filter((line) => line.backend === backend.name);
      if (own.length === 0) continue;
      const users = backend.defaultTables && backend.authScheme !== null ? made.users : [];
      let callers = await signIn(backend, users, base, send, record, connection, made.until);
      for (const line of own) {
        // A long run: the grants renewed before they end, and the callers' tokens and keys made again under them.
        if (Date.now() - renewedAt >= RENEW_AFTER_MS) {
          await renew();
          callers = await signIn(backend, users, base, send, () => {}, connection, made.until);
        }
        const operation = operationOf(backend, line);
        const anonymous: Caller = { role: '(anonymous)', credentials: 'none', headers: {} };
        record(await check(line, operation, anonymous, line.rule === 'public' ? 'admitted' : 'refused', base, send));
        if (line.rule === 'public') continue;
        if (!backend.defaultTables) {
          const note = `backend ${backend.name} checks credentials with its own AuthQuery over its own tables: verify-access cannot make users there`;
          for (const role of line.rule === '*' ? ['*'] : line.rule) record(unproven(line, role, 'its own users', 'admitted', note));
          continue;
        }
        for (const caller of callers) {
          const admitted = line.rule === '*' || line.rule.includes(caller.role);
          record(await check(line, operation, caller, admitted ? 'admitted' : 'refused', base, send));
        }
      }
      for (const issuer of backend.issuers) {
        record({
          backend: backend.name,
          method: '*',
          path: `/${backend.name}`,
          role: `(users of ${issuer.iss})`,
          credentials: 'Bearer (identity provider)',
          expected: 'admitted',
          got: 'unproven',
          status: null,
          note: `tokens of the identity provider ${issuer.iss} are not proven: verify-access cannot sign them (the backend's own tokens pass the same role check)`,
        });
      }
    }
  } catch (error) {
    failure = error;
  } finally {
    try {
      await removeUsers(connection, made.users, say);
    } catch (error) {
      removal = error;
    }
    await recordRun(connection, base, made, removed, removal).catch((error: unknown) =>
      say(`verify-access: this run is not in the history: ${(error as Error).message}`),
    );
    await connection.end().catch(() => {});
  }
  if (removal !== undefined) {
    const before = failure === undefined ? '' : `${messageOfError(failure)}; and `;
    throw new RemovalFailed(
      `${before}its temporary users could not be removed (${messageOfError(removal)}): ${made.users.map((user) => user.name).join(', ')}, holding their roles until ${isoSeconds(made.until)}; a later run removes them once their grants have ended, or delete them yourself (xmlrest user names beginning ${TEMPORARY_USER_PREFIX})`,
    );
  }
  if (failure !== undefined) throw failure;
  return verdict;
}

/** An error's message, with its cause's (fetch says "fetch failed", and why in its cause). */
function messageOfError(error: unknown): string {
  const cause = (error as { cause?: { message?: string } }).cause?.message;
  return `${(error as Error).message}${cause ? ` (${cause})` : ''}`;
}

/**
 * The server's own OpenAPI document against the one the resources make: each operation (method and path) of the
 * resources' backends and the names of its parameters (query and body). What a call can change is read from the
 * resources (a write without parameters is never sent): a server deployed from other resources could run a write
 * that takes a parameter here and none there, so any difference stops the run before anything is sent and any
 * user made. Backends the server serves beside them (another project's) are left out.
 */
async function compareWithServer(base: string, send: Send, project: Project, resourcesDir: string): Promise<void> {
  const answer = await send('GET', `${base}/openapi.json`, {});
  let served: unknown;
  try {
    served = answer.status === 200 ? JSON.parse(answer.text) : undefined;
  } catch {
    served = undefined;
  }
  if (served === undefined || typeof served !== 'object' || served === null) {
    throw new VerifyUsage(
      `the server at ${base} answers /openapi.json with ${answer.status}, not its OpenAPI document: verify-access compares it with ${resourcesDir}/ before it sends anything (is BASE_URL the server with its BASE_PATH?)`,
    );
  }
  const theirs = operationsOf(served);
  const ours = operationsOf(openApiDocument(project));
  const differences: string[] = [];
  for (const [operation, params] of ours) {
    const there = theirs.get(operation);
    if (there === undefined) differences.push(`${operation} is not served there`);
    else if (there !== params) differences.push(`${operation} takes (${there}) there, (${params}) in ${resourcesDir}/`);
  }
  // Operations of other backends the server also serves (another project's) are not these resources' business.
  const mine = (operation: string) => project.backends.some((backend) => operation.split(' ')[1]!.startsWith(`/${backend.name}/`));
  for (const operation of theirs.keys()) {
    if (!ours.has(operation) && mine(operation)) differences.push(`${operation} is served there, not in ${resourcesDir}/`);
  }
  if (differences.length > 0) {
    const shown = differences.slice(0, 10).join('; ');
    throw new VerifyUsage(
      `the server at ${base} was not built from these resources (${shown}${differences.length > 10 ? `; and ${differences.length - 10} more` : ''}): deploy them, or verify against the resources it runs (--lock, --resources); nothing was sent and no user made`,
    );
  }
}

/** Each operation of an OpenAPI document, `METHOD path`, with the sorted names of its parameters (query and body). */
function operationsOf(document: object): Map<string, string> {
  const operations = new Map<string, string>();
  const paths = (document as { paths?: unknown }).paths;
  if (typeof paths !== 'object' || paths === null) return operations;
  for (const [pathname, item] of Object.entries(paths as Record<string, unknown>)) {
    if (typeof item !== 'object' || item === null) continue;
    for (const [method, operation] of Object.entries(item as Record<string, unknown>)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method) || typeof operation !== 'object' || operation === null) continue;
      const { parameters, requestBody } = operation as {
        parameters?: { name?: unknown }[];
        requestBody?: { content?: Record<string, { schema?: { properties?: object } }> };
      };
      const names = new Set<string>();
      for (const parameter of Array.isArray(parameters) ? parameters : []) if (typeof parameter?.name === 'string') names.add(parameter.name);
      for (const content of Object.values(requestBody?.content ?? {})) for (const name of Object.keys(content?.schema?.properties ?? {})) names.add(name);
      operations.set(`${method.toUpperCase()} ${pathname}`, [...names].sort().join(', '));
    }
  }
  return operations;
}

/** The temporary users' roles end: a role table without `expires_on` (an earlier version's) cannot hold them. */
async function requireGrantEnds(connection: mysql.Connection): Promise<void> {
  try {
    await connection.query(`select expires_on from ${DEFAULT_USER_TABLES.roles} limit 0`);
  } catch (error) {
    const errno = errnoOf(error);
    if (errno === NO_COLUMN) {
      throw new VerifyUsage(
        `${DEFAULT_USER_TABLES.roles} has no expires_on column (a database of an earlier version): run xmlrest db init (verify-access gives its temporary users roles that end); nothing was sent and no user made`,
      );
    }
    if (errno === NO_TABLE) throw new VerifyUsage(`the database has no ${DEFAULT_USER_TABLES.roles} table: run xmlrest db init`);
    throw error;
  }
}

/** The operation a lock line stands for, from the resources (its parameters and steps). */
function operationOf(backend: Backend, line: LockLine): Operation | undefined {
  const resource = backend.resources.find((candidate) => `/${backend.name}/v${candidate.version}/${candidate.name}` === line.path);
  return resource?.operations.find((operation) => operation.method === line.method);
}

/**
 * The parameters a call must send, which a call without them is refused for (400) once the guard has admitted it. A
 * list's filters, sort and page (docs/contract.md §11) are optional: a call without them runs the list, so a route
 * with nothing else is a read called as it is (2xx), and a write with nothing else is never sent.
 */
function requiredParams(operation: Operation): string[] {
  const optional = new Set<string>();
  for (const step of operation.steps) {
    const list = step.kind === 'sql' ? step.list : undefined;
    if (list === undefined) continue;
    for (const filter of list.filters) optional.add(filter.param);
    if (list.sort) optional.add(list.sort.param);
    if (list.page) for (const name of PAGE_PARAMS) optional.add(name);
  }
  return operation.params.filter((name) => !optional.has(name) && operation.paramTypes[name]?.optional !== true);
}

/** The steps of an operation that may change data: a write step, or a plug-in other than the token generator. */
function writingSteps(operation: Operation): string[] {
  return operation.steps.filter((step) => (step.kind === 'sql' ? step.statement === 'write' : !step.plugin.login)).map((step) => step.id);
}

function unproven(line: LockLine, role: string, credentials: string, expected: Check['expected'], note: string): Check {
  return { backend: line.backend, method: line.method, path: line.path, role, credentials, expected, got: 'unproven', status: null, note };
}

interface Answer {
  status: number;
  headers: Headers;
  text: string;
}
type Send = (method: string, url: string, headers: Record<string, string>, body?: string) => Promise<Answer>;

/** A 429 of the login limits (a rate limit's carries RateLimit-Limit): the run cannot go on, and says why. */
function loginLimited(answer: Answer, what: string): CouldNotFinish | undefined {
  if (answer.status !== 429 || answer.headers.has('ratelimit-limit')) return undefined;
  return new CouldNotFinish(
    `${what}: the server's login limits refused it (429: too many failed sign-ins from this address, by others before this run): run it again when they have passed (Retry-After: ${answer.headers.get('retry-after') ?? 'not said'} s)`,
  );
}

/**
 * One call of a route as one caller, and what it proves. Without its parameters, a route the guard admits answers
 * 400 (the parameters are checked after the role); a read without parameters answers as it is (2xx). A caller
 * without credentials is refused with 401 or 403; a caller whose credentials the server accepts (a temporary user's,
 * a token or key it just issued) only with the guard's 403: a 401 to it is an error (its credentials were not
 * taken), never a refusal by the role. A 429 of a rate limit (it carries RateLimit-Limit) comes after the guard
 * admitted the caller; one of the login limits stops the run.
 */
async function check(line: LockLine, operation: Operation | undefined, caller: Caller, expected: Check['expected'], base: string, send: Send): Promise<Check> {
  const done = (got: Check['got'], status: number | null, note?: string): Check => ({
    backend: line.backend,
    method: line.method,
    path: line.path,
    role: caller.role,
    credentials: caller.credentials,
    expected,
    got,
    status,
    ...(note === undefined ? {} : { note }),
  });
  if (operation === undefined) return done('unproven', null, `${line.method} ${line.path} is in access.lock but not in the resources: not sent`);
  const required = requiredParams(operation);
  if (required.length === 0 && writingSteps(operation).length > 0) {
    return done('unproven', null, 'a write with no required parameter to leave out: the guard cannot be proven without running it, so it was not sent');
  }
  let response: Answer;
  try {
    response = await send(line.method, base + line.path, caller.headers);
  } catch (error) {
    if ((error as Error).name === 'TimeoutError') return done('error', null, `no answer within ${REQUEST_TIMEOUT_MS / 1000} s`);
    throw error;
  }
  const status = response.status;
  const limited = loginLimited(response, `${line.method} ${line.path} as ${caller.role} with ${caller.credentials}`);
  if (limited) throw limited;
  // A 403 that is not the guard's (credentials over plain HTTP where TLS is required) proves nothing of the role.
  if (status === 403 && !response.text.includes(FORBIDDEN_MESSAGE)) return done('error', status, messageOf(response));
  if (status === 403) return done('refused', status);
  if (status === 401) {
    if (caller.credentials === 'none') return done('refused', status);
    return done('error', status, `${messageOf(response)}: the server did not take credentials it accepts (a refusal by the role is a 403)`);
  }
  // A public route has no guard: whatever else it answers (a 500 of its own), it admitted the caller.
  if (line.rule === 'public' && status >= 500) return done('admitted', status, `answered ${status}, past routing: a public route has no guard`);
  if (status === 429) return done('admitted', status, "over the route's rate limit, after the guard admitted");
  const answered = required.length > 0 ? status === 400 : status >= 200 && status < 300;
  if (answered) return done('admitted', status);
  const wanted = required.length > 0 ? 'a 400 for the parameters left out' : 'a 2xx answer';
  return done('error', status, `${messageOf(response)} (once admitted, ${wanted} was to come)`);
}

/** What an answer's JSON body says, for a report. */
function messageOf(answer: Answer): string {
  try {
    const body = JSON.parse(answer.text) as { message?: unknown };
    if (typeof body.message === 'string') return body.message;
  } catch {
    // Not JSON: its status says it.
  }
  return `status ${answer.status}`;
}

/**
 * The callers of a backend of the default tables: each temporary user, with every credential the backend takes
 * (Basic; Bearer tokens of both shapes; an API key). Every sign-in is one that must succeed: none counts against the
 * server's login limits.
 */
async function signIn(
  backend: Backend,
  users: readonly TemporaryUser[],
  base: string,
  send: Send,
  record: (check: Check) => void,
  connection: mysql.Connection,
  until: number,
): Promise<Caller[]> {
  const callers: Caller[] = [];
  if (users.length === 0) return callers;
  const signInCheck = (user: TemporaryUser, how: string, pathname: string, answer: Answer): Check => {
    const limited = loginLimited(answer, `signing in as ${user.role} with ${how}`);
    if (limited) throw limited;
    return {
      backend: backend.name,
      method: 'POST',
      path: pathname,
      role: user.role,
      credentials: how,
      expected: 'admitted',
      got: answer.status >= 200 && answer.status < 300 ? 'admitted' : answer.status === 401 || answer.status === 403 ? 'refused' : 'error',
      status: answer.status,
      note: answer.status >= 200 && answer.status < 300 ? 'signs in' : messageOf(answer),
    };
  };
  if (backend.authScheme === 'Basic') {
    for (const user of users) callers.push({ role: user.role, credentials: 'Basic', headers: { authorization: basicHeader(user) } });
  } else {
    const shapeB = tokenRequest(backend);
    if (shapeB !== undefined && 'unproven' in shapeB) {
      record({
        backend: backend.name,
        method: 'POST',
        path: shapeB.path,
        role: '(every temporary user)',
        credentials: 'Bearer (shape B)',
        expected: 'admitted',
        got: 'unproven',
        status: null,
        note: shapeB.unproven,
      });
    }
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    for (const user of users) {
      const a = await send(
        'POST',
        `${base}/${backend.name}/`,
        form,
        new URLSearchParams({ auth: 'bearer', userid: user.name, password: user.password }).toString(),
      );
      record(signInCheck(user, 'Bearer (shape A)', `/${backend.name}/`, a));
      const tokenA = a.status === 200 ? tokenOf(a) : undefined;
      if (tokenA !== undefined) callers.push({ role: user.role, credentials: 'Bearer (shape A)', headers: { authorization: `Bearer ${tokenA}` } });
      if (shapeB === undefined || 'unproven' in shapeB) continue;
      const b = await send('POST', base + shapeB.path, form, new URLSearchParams({ [shapeB.user]: user.name, [shapeB.password]: user.password }).toString());
      record(signInCheck(user, 'Bearer (shape B)', shapeB.path, b));
      const tokenB = b.status >= 200 && b.status < 300 ? tokenOf(b) : undefined;
      if (tokenB !== undefined) callers.push({ role: user.role, credentials: 'Bearer (shape B)', headers: { authorization: `Bearer ${tokenB}` } });
    }
  }
  if (backend.apiKeys) {
    const keys = new KeyStore(queryableOf(connection));
    for (const user of users) {
      const made = await keys.create({
        backend: backend.name,
        userId: String(user.id),
        name: 'verify-access',
        roles: [user.role],
        expires: new Date(until * 1000),
        rate: null,
      });
      callers.push({ role: user.role, credentials: 'API key', headers: { 'x-api-key': made.key } });
    }
  }
  return callers;
}

function basicHeader(user: TemporaryUser): string {
  return `Basic ${Buffer.from(`${user.name}:${user.password}`, 'utf8').toString('base64')}`;
}

/** The token in a token request's answer: shape A's `token`, or shape B's under its step's id (a JWT's shape tells it). */
function tokenOf(answer: Answer): string | undefined {
  try {
    const body = JSON.parse(answer.text) as Record<string, unknown>;
    return Object.values(body).find((value): value is string => typeof value === 'string' && /^[\w-]+\.[\w-]+\.[\w-]*$/.test(value));
  } catch {
    return undefined;
  }
}

/**
 * A backend's token request of shape B (a public POST whose plug-in is the token generator): its path and the
 * fields that carry the user name and the password, from the generator's `user` and `password` arguments (or the
 * seed's form, whose query compares them itself: the parameter named like a password, and the other one). A token
 * request with a step that writes besides the generator (a login log, `last_login = now()`) is never called: every
 * sign-in there would change application data.
 */
function tokenRequest(backend: Backend): { path: string; user: string; password: string } | { path: string; unproven: string } | undefined {
  for (const resource of backend.resources) {
    for (const operation of resource.operations) {
      const login = operation.steps.find((step): step is ExecuteStep => step.kind === 'execute' && step.plugin.login === true);
      if (!login || operation.access !== null || operation.method !== 'POST') continue;
      const pathname = `/${backend.name}/v${resource.version}/${resource.name}`;
      const writes = writingSteps(operation);
      if (writes.length > 0 || (operation.emits?.length ?? 0) > 0) {
        const what = writes.length > 0 ? `step${writes.length === 1 ? '' : 's'} ${writes.map((id) => `"${id}"`).join(', ')}` : 'an event it emits';
        return {
          path: pathname,
          unproven: `it writes besides issuing the token (${what}): signing in there would change application data, so it was not called`,
        };
      }
      const param = (name: string) => {
        const bind = login.args.find((arg) => arg.name === name)?.bind;
        return bind?.kind === 'param' ? bind.name : undefined;
      };
      const password = param('password') ?? operation.params.find((name) => /pass/i.test(name));
      const user = param('user') ?? operation.params.filter((name) => name !== password);
      const userField = typeof user === 'string' ? user : user.length === 1 ? user[0] : undefined;
      if (password === undefined || userField === undefined || operation.params.length !== 2) {
        return { path: pathname, unproven: 'cannot tell which of its fields carry the user name and the password' };
      }
      return { path: pathname, user: userField, password };
    }
  }
  return undefined;
}

/**
 * Users of earlier runs that ended without removing theirs (killed): made longer ago than a grant lasts, and holding
 * no grant that has not ended. A run still going renews its users' grants, so its users are never taken for these.
 */
async function removeLeftovers(connection: mysql.Connection, say: (line: string) => void): Promise<Made> {
  const { users, roles, userId, userName } = DEFAULT_USER_TABLES;
  let rows: { id: number; name: string }[];
  try {
    [rows] = (await connection.execute(
      `select u.${userId} as id, u.${userName} as name from ${users} u
        where u.${userName} like ? and u.created_on < now() - interval ${GRANT_SECONDS} second
          and not exists (select 1 from ${roles} r where r.${userId} = u.${userId} and (r.expires_on is null or r.expires_on > now()))`,
      [`${TEMPORARY_USER_PREFIX}%`],
    )) as unknown as [{ id: number; name: string }[]];
  } catch (error) {
    if (errnoOf(error) === NO_TABLE) return { users: [], until: 0 };
    throw error;
  }
  const leftovers = rows.map((row) => ({ id: row.id, name: row.name, password: '', role: '' }));
  if (leftovers.length > 0) await removeUsers(connection, leftovers, say, 'left by an earlier run');
  // Their grants have ended: so have their tokens and keys (each capped by the grant it was issued under).
  return { users: leftovers, until: Math.floor(Date.now() / 1000) };
}

/** Removes temporary users with their keys and sessions; their grants go with them, and the triggers end their tokens. */
async function removeUsers(connection: mysql.Connection, users: readonly TemporaryUser[], say: (line: string) => void, whose = ''): Promise<void> {
  if (users.length === 0) return;
  const ids = users.map((user) => user.id);
  const list = ids.map(() => '?').join(', ');
  const { users: table, userId } = DEFAULT_USER_TABLES;
  for (const sql of [`delete from xmlrest_api_key where user_id in (${list})`, `delete from xmlrest_session where user_id in (${list})`]) {
    try {
      await connection.execute(sql, ids.map(String));
    } catch (error) {
      // A database without keys or sessions (`xmlrest db init` of an earlier version): nothing of theirs there.
      if (errnoOf(error) !== NO_TABLE) throw error;
    }
  }
  await connection.execute(`delete from ${table} where ${userId} in (${list})`, ids);
  say(
    `verify-access: removed ${users.length} temporary user${users.length === 1 ? '' : 's'}${whose ? ` ${whose}` : ''} (${users.map((user) => user.name).join(', ')})`,
  );
}

/** How a run's history line keeps the ids of the users it removed and when their last token ends, for a later run to prune. */
const REMOVED_IDS = /\(ids ([0-9 ]+); their tokens end by (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)\)/g;

/**
 * One line of the console's history per run, under `*` (every console of the default tables shows it): the users it
 * made, their roles and until when, and whether it removed them; the users of earlier runs it removed. The ids and
 * when their last token ends come first, so that a later run can prune their revocation rows (`pruneEarlierRuns`).
 */
async function recordRun(connection: mysql.Connection, base: string, made: Made, leftovers: Made, removal: unknown): Promise<void> {
  if (made.users.length === 0 && leftovers.users.length === 0) return;
  const ids = (group: Made) => `(ids ${group.users.map((user) => user.id).join(' ')}; their tokens end by ${isoSeconds(group.until)})`;
  const parts: string[] = [];
  if (made.users.length > 0) {
    parts.push(
      removal === undefined
        ? `made and removed ${made.users.length} temporary users ${ids(made)}`
        : `made ${made.users.length} temporary users and could not remove them (${messageOfError(removal)}); roles until ${isoSeconds(made.until)}`,
    );
  }
  if (leftovers.users.length > 0) parts.push(`removed ${leftovers.users.length} left by an earlier run ${ids(leftovers)}`);
  if (made.users.length > 0) parts.push(made.users.map((user) => `${user.name}: ${user.role}`).join(', '));
  await recordFromCli(connection, 'verify-access', base, parts.join('; '));
}

/**
 * Earlier runs' rows in xmlrest_revoked_user: the delete trigger writes one for every user removed, and every server
 * reads the table every 5 s, so a run on each commit would grow it for ever. A row of a temporary user can go once
 * the last token that user was issued has ended (each is capped by the grant it was issued under, and no user will
 * have that id again): the run's history line says which ids and until when. Only history lines of the last
 * PRUNE_DAYS days are read; a database without the history keeps its rows.
 */
async function pruneEarlierRuns(connection: mysql.Connection): Promise<void> {
  let rows: { detail: string }[];
  try {
    [rows] = (await connection.execute(
      `select detail from xmlrest_console_audit where backend = '*' and action = 'verify-access' and at > now() - interval ${PRUNE_DAYS} day`,
    )) as unknown as [{ detail: string }[]];
  } catch (error) {
    if (errnoOf(error) === NO_TABLE) return;
    throw error;
  }
  const now = Date.now();
  const ids = rows.flatMap((row) =>
    [...row.detail.matchAll(REMOVED_IDS)].filter((match) => Date.parse(match[2]!) < now).flatMap((match) => match[1]!.trim().split(' ')),
  );
  if (ids.length === 0) return;
  const { users, userId } = DEFAULT_USER_TABLES;
  for (let start = 0; start < ids.length; start += 500) {
    const some = ids.slice(start, start + 500);
    try {
      await connection.execute(
        `delete from xmlrest_revoked_user where backend = '*' and sub in (${some.map(() => '?').join(', ')})
          and not exists (select 1 from ${users} u where cast(u.${userId} as char) = xmlrest_revoked_user.sub)`,
        some,
      );
    } catch (error) {
      if (errnoOf(error) === NO_TABLE) return;
      throw error;
    }
  }
}

/** Whether a host is this machine: credentials sent to it in plain HTTP never cross a network. */
function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host.endsWith('.localhost') || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/**
 * The command: runs `verifyAccess`, prints each disagreement and what stayed unproven (or `--json`), and says how it
 * ended: 0 every check proven and agreeing; 1 a disagreement; 3 no disagreement, but checks left unproven (0 with
 * `--allow-unproven`, for a backend that cannot be proven); 2 it could not run or finish (a wrong command line, no
 * DATABASE_URL, no access.lock, plain HTTP to another host without `--insecure`, a server that does not answer, goes
 * away or was built from other resources, the login limits); 130/143 stopped by SIGINT/SIGTERM; its users removed
 * however it ends, or said plainly when they could not be.
 */
export async function verifyAccessCommand(
  baseUrl: string,
  options: { json?: boolean; lock?: string; resources?: string; allowUnproven?: boolean; insecure?: boolean },
  databaseUrl: string | undefined,
  connect: (url: string) => Promise<mysql.Connection>,
): Promise<number> {
  const fail = (message: string) => {
    process.stderr.write(`xmlrest: ${message}\n`);
    return 2;
  };
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return fail(`BASE_URL is the server's URL with its BASE_PATH, such as http://127.0.0.1:3000 or https://api.example.com/api, not ${baseUrl}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return fail(`BASE_URL is http or https, not ${url.protocol}`);
  if (url.protocol === 'http:' && !isLoopback(url.hostname) && !options.insecure) {
    return fail(
      `BASE_URL is plain http to ${url.hostname}: verify-access sends passwords, tokens and keys of users holding every role the lock names (admin ones too), which anyone on the way could read; use https, or give --insecure if the network is yours`,
    );
  }
  if (databaseUrl === undefined) {
    return fail("DATABASE_URL is not set: verify-access makes its temporary users in the server's database (environment or .env)");
  }
  const controller = new AbortController();
  let stoppedBy: NodeJS.Signals | undefined;
  const stop = (signal: NodeJS.Signals) => {
    if (stoppedBy !== undefined) return;
    stoppedBy = signal;
    process.stderr.write(`verify-access: ${signal}: removing the temporary users, then stopping\n`);
    controller.abort(new Error(`stopped by ${signal}`));
  };
  const onInt = () => stop('SIGINT');
  const onTerm = () => stop('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  const say = (line: string) => process.stderr.write(`${line}\n`);
  const base = url.toString().replace(/\/+$/, '');
  try {
    const verdict = await verifyAccess({
      baseUrl: base,
      lockFile: options.lock ?? 'access.lock',
      resourcesDir: options.resources ?? 'resources',
      root: process.cwd(),
      connect: () => connect(databaseUrl),
      signal: controller.signal,
      say,
    });
    if (options.json) console.log(JSON.stringify(verdict));
    else printVerdict(verdict);
    if (verdict.disagreements.length > 0) return 1;
    if (verdict.unproven.length > 0 && !options.allowUnproven) {
      say(
        `verify-access: ${verdict.unproven.length} check${verdict.unproven.length === 1 ? '' : 's'} unproven (listed above): exit 3; give --allow-unproven to accept what cannot be proven`,
      );
      return 3;
    }
    return 0;
  } catch (error) {
    if (error instanceof RemovalFailed) return fail(error.message);
    if (stoppedBy !== undefined) return stoppedBy === 'SIGINT' ? 130 : 143;
    if (error instanceof VerifyUsage) return fail(error.message);
    // 1 is kept for a disagreement proven: a run that could not finish proved nothing.
    const unanswered = error instanceof TypeError && error.message === 'fetch failed';
    return fail(
      `verify-access could not finish: ${unanswered ? `the server at ${base} does not answer: ` : ''}${messageOfError(error)}; its temporary users are removed`,
    );
  } finally {
    process.off('SIGINT', onInt);
    process.off('SIGTERM', onTerm);
  }
}

function printVerdict(verdict: Verdict): void {
  const who = (check: Check) => `${check.role}${check.credentials === 'none' ? '' : ` with ${check.credentials}`}`;
  for (const check of verdict.disagreements) {
    const got = check.got === 'error' ? `${check.status ?? 'no answer'}${check.note ? `: ${check.note}` : ''}` : `${check.got} (${check.status})`;
    console.log(`disagree: ${check.backend} ${check.method} ${check.path} as ${who(check)}: expected ${check.expected}, got ${got}`);
  }
  for (const check of verdict.unproven) console.log(`unproven: ${check.backend} ${check.method} ${check.path} as ${who(check)}: ${check.note}`);
  const agree = verdict.checks.length - verdict.disagreements.length - verdict.unproven.length;
  console.log(
    `verify-access: ${verdict.base} against ${verdict.lines} lines of access.lock: ${agree} checks agree, ${verdict.disagreements.length} disagree, ${verdict.unproven.length} unproven (${verdict.requests} requests)`,
  );
}
