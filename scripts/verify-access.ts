import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type mysql from 'mysql2/promise';
import { KeyStore } from '../console/keys.js';
import { analyseSources, readSources } from '../generator/index.js';
import type { Backend, ExecuteStep, Operation } from '../generator/ir.js';
import { DEFAULT_USER_TABLES } from '../runtime/auth/user-tables.js';
import { addUser, grantRole, queryableOf } from './schema.js';

/**
 * `xmlrest verify-access BASE_URL` (docs/contract.md §8): proves that a running
 * server admits and refuses as access.lock says, route by route, by calling it.
 *
 * It signs in as temporary users of the default user tables, one per role in
 * use on each backend and one holding no role, with every way in the backend
 * has (HTTP Basic; Bearer tokens of both shapes; API keys), and calls each
 * route as each of them and with no credentials at all. It changes no
 * application data: a route is called without its parameters, so that one the
 * guard admits answers 400 (routing, then the role, then the parameters:
 * docs/contract.md §3) and never runs; a read without parameters is called as
 * it is; a write without parameters, which would run, is never sent and is
 * reported unproven. A user holding no role cannot sign in with the default
 * auth queries (no row: a wrong password to the server), so it signs in once
 * per backend, not once per route: every failed sign-in counts against the
 * server's login limits for the address it comes from.
 *
 * The temporary users' roles are grants that end in 15 minutes (a run killed
 * with SIGKILL leaves users who can call nothing, and the next run removes
 * them); the users, their keys and sessions are removed at the end, on a
 * failure, and on SIGINT and SIGTERM. What cannot be proven is said, never
 * passed: routes of a backend with its own AuthQuery (its users live in its
 * own tables) beyond the call with no credentials, and the tokens of identity
 * providers (verify-access cannot sign them).
 */

/** Every name a temporary user is given starts so: a run's leftovers are found by it. */
export const TEMPORARY_USER_PREFIX = 'xmlrest-verify-';
/** How long a temporary user's roles are granted for: past it, a user a killed run left can call nothing. */
const GRANT_SECONDS = 900;
/** A leftover older than this is from a run that is over (no run lasts it), and is removed. */
const LEFTOVER_SECONDS = 3600;
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
  /** The caller: a role, `(no role)`, or `(anonymous)`. */
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

export class VerifyUsage extends Error {}

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
  /** Its one role, or null: the user holding no role. */
  role: string | null;
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
  }
  const verdict: Verdict = { base, lines: lines.length, requests: 0, checks: [], disagreements: [], unproven: [] };
  const record = (check: Check) => {
    verdict.checks.push(check);
    if (check.got === 'unproven') verdict.unproven.push(check);
    else if (check.got !== check.expected) verdict.disagreements.push(check);
  };

  const connection = await options.connect();
  const users: TemporaryUser[] = [];
  try {
    await removeLeftovers(connection, say);
    // One user per role in use on the backends of the default tables (which share their users), one holding none.
    const served = lines.filter((line) => backends.get(line.backend)!.defaultTables && backends.get(line.backend)!.authScheme !== null);
    const roles = new Set(served.flatMap((line) => (Array.isArray(line.rule) ? line.rule : [])));
    const anyOnly = [...new Set(served.filter((line) => line.rule === '*').map((line) => line.backend))].some(
      (name) => !served.some((line) => line.backend === name && Array.isArray(line.rule)),
    );
    // A backend with only `*` routes still needs a user with some role: one no backend means anything by.
    if (anyOnly) roles.add(`${TEMPORARY_USER_PREFIX}any`);
    if (served.length > 0) {
      const run = randomBytes(3).toString('hex');
      const until = Math.floor(Date.now() / 1000) + GRANT_SECONDS;
      for (const role of [...[...roles].sort(), null]) {
        options.signal?.throwIfAborted();
        const user = { id: 0, name: `${TEMPORARY_USER_PREFIX}${run}-${users.length + 1}`, password: randomBytes(24).toString('base64url'), role };
        user.id = await addUser(connection, user.name, user.password, []);
        users.push(user);
        if (role !== null) await grantRole(connection, user.id, role, until);
      }
      say(
        `verify-access: ${users.length} temporary users (${users.map((user) => `${user.name}: ${user.role ?? 'no role'}`).join(', ')}), their roles granted for ${GRANT_SECONDS / 60} minutes`,
      );
    }

    const send: Send = async (method, url, headers, body) => {
      options.signal?.throwIfAborted();
      verdict.requests++;
      const signals = [AbortSignal.timeout(REQUEST_TIMEOUT_MS), ...(options.signal ? [options.signal] : [])];
      const response = await fetch(url, { method, headers, body, redirect: 'manual', signal: AbortSignal.any(signals) });
      return { status: response.status, headers: response.headers, text: await response.text() };
    };

    for (const backend of project.backends) {
      const own = lines.filter((line) => line.backend === backend.name);
      if (own.length === 0) continue;
      const callers = backend.defaultTables && backend.authScheme !== null ? await signIn(backend, users, base, send, record, connection) : [];
      for (const line of own) {
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
  } finally {
    await removeUsers(connection, users, say).finally(() => connection.end());
  }
  return verdict;
}

/** The operation a lock line stands for, from the resources (its parameters and steps). */
function operationOf(backend: Backend, line: LockLine): Operation | undefined {
  const resource = backend.resources.find((candidate) => `/${backend.name}/v${candidate.version}/${candidate.name}` === line.path);
  return resource?.operations.find((operation) => operation.method === line.method);
}

/** Whether calling an operation may change data: a write step, or a plug-in other than the token generator. */
function changesData(operation: Operation): boolean {
  return operation.steps.some((step) => (step.kind === 'sql' ? step.statement === 'write' : !step.plugin.login));
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

/**
 * One call of a route as one caller, and what it proves. Without its parameters, a route the guard admits answers
 * 400 (the parameters are checked after the role); a read without parameters, or with optional ones only, answers
 * as it is (2xx). 401 and 403
 * are refusals; a 429 of a rate limit (it carries RateLimit-Limit) comes after the guard admitted the caller.
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
  if (operation.params.length === 0 && changesData(operation)) {
    return done('unproven', null, 'a write with no parameter to leave out: the guard cannot be proven without running it, so it was not sent');
  }
  let response: Answer;
  try {
    response = await send(line.method, base + line.path, caller.headers);
  } catch (error) {
    if ((error as Error).name === 'TimeoutError') return done('error', null, `no answer within ${REQUEST_TIMEOUT_MS / 1000} s`);
    throw error;
  }
  const status = response.status;
  // A 403 that is not the guard's (credentials over plain HTTP where TLS is required) proves nothing of the role.
  if (status === 403 && !response.text.includes('Forbidden access to resource')) return done('error', status, messageOf(response));
  if (status === 401 || status === 403) return done('refused', status);
  // A public route has no guard: whatever else it answers (a 500 of its own), it admitted the caller.
  if (line.rule === 'public' && status >= 500) return done('admitted', status, `answered ${status}, past routing: a public route has no guard`);
  if (status === 429) {
    if (response.headers.has('ratelimit-limit')) return done('admitted', status, "over the route's rate limit, after the guard admitted");
    return done('unproven', status, 'refused by the login limits (too many failed sign-ins from this address): run it again later');
  }
  // A read whose parameters are all optional (a list's filters, sort and cursor, contract §11) answers 2xx without them.
  const answered =
    (operation.params.length > 0 && status === 400) || (status >= 200 && status < 300 && (operation.params.length === 0 || !changesData(operation)));
  if (answered) return done('admitted', status);
  const wanted = operation.params.length > 0 ? 'a 400 for the parameters left out' : 'a 2xx answer';
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
 * The callers of a backend of the default tables: each temporary user with a role, with every credential the
 * backend takes (Basic; Bearer tokens of both shapes; an API key), and the user holding no role, whose sign-in
 * must fail (checked once per backend, so as to count one failed sign-in, not one per route).
 */
async function signIn(
  backend: Backend,
  users: readonly TemporaryUser[],
  base: string,
  send: Send,
  record: (check: Check) => void,
  connection: mysql.Connection,
): Promise<Caller[]> {
  const roles = new Set(
    backend.resources.flatMap((resource) => resource.operations.flatMap((operation) => (Array.isArray(operation.access) ? operation.access : []))),
  );
  const mine = users.filter((user) => user.role !== null && (roles.has(user.role) || user.role.startsWith(TEMPORARY_USER_PREFIX)));
  const nobody = users.find((user) => user.role === null);
  const callers: Caller[] = [];
  const signInCheck = (user: TemporaryUser, how: string, pathname: string, status: number | null, note?: string): Check => ({
    backend: backend.name,
    method: 'POST',
    path: pathname,
    role: user.role ?? '(no role)',
    credentials: how,
    expected: user.role === null ? 'refused' : 'admitted',
    got: status === 401 || status === 403 ? 'refused' : status !== null && status < 300 ? 'admitted' : 'error',
    status,
    note: note ?? (user.role === null ? 'a user holding no role cannot sign in: refused on every protected route' : 'signs in'),
  });
  if (backend.authScheme === 'Basic') {
    for (const user of mine) callers.push({ role: user.role!, credentials: 'Basic', headers: { authorization: basicHeader(user) } });
    // The user holding no role: one call of the first protected route, which must refuse it (401: no row).
    const first = backend.resources.flatMap((resource) =>
      resource.operations.filter((operation) => operation.access !== null).map((operation) => ({ resource, operation })),
    )[0];
    if (nobody && first) {
      const pathname = `/${backend.name}/v${first.resource.version}/${first.resource.name}`;
      const response =
        first.operation.params.length === 0 && changesData(first.operation)
          ? undefined
          : await send(first.operation.method, base + pathname, { authorization: basicHeader(nobody) });
      record({
        ...signInCheck(nobody, 'Basic', pathname, response?.status ?? null),
        method: first.operation.method,
        ...(response === undefined ? { got: 'unproven' as const, note: 'a write with no parameter to leave out: not sent' } : {}),
      });
    }
  } else {
    const shapeB = tokenRequest(backend);
    for (const user of [...mine, ...(nobody ? [nobody] : [])]) {
      const form = { 'content-type': 'application/x-www-form-urlencoded' };
      const a = await send(
        'POST',
        `${base}/${backend.name}/`,
        form,
        new URLSearchParams({ auth: 'bearer', userid: user.name, password: user.password }).toString(),
      );
      record(signInCheck(user, 'Bearer (shape A)', `/${backend.name}/`, a.status));
      const tokenA = user.role !== null && a.status === 200 ? tokenOf(a) : undefined;
      if (tokenA !== undefined) callers.push({ role: user.role!, credentials: 'Bearer (shape A)', headers: { authorization: `Bearer ${tokenA}` } });
      if (shapeB === undefined) continue;
      if ('unproven' in shapeB) {
        if (user.role !== null) record({ ...signInCheck(user, 'Bearer (shape B)', shapeB.path, null), got: 'unproven', note: shapeB.unproven });
        continue;
      }
      const b = await send('POST', base + shapeB.path, form, new URLSearchParams({ [shapeB.user]: user.name, [shapeB.password]: user.password }).toString());
      record(signInCheck(user, 'Bearer (shape B)', shapeB.path, b.status));
      const tokenB = user.role !== null && b.status >= 200 && b.status < 300 ? tokenOf(b) : undefined;
      if (tokenB !== undefined) callers.push({ role: user.role!, credentials: 'Bearer (shape B)', headers: { authorization: `Bearer ${tokenB}` } });
    }
  }
  if (backend.apiKeys) {
    const keys = new KeyStore(queryableOf(connection));
    for (const user of mine) {
      const made = await keys.create({
        backend: backend.name,
        userId: String(user.id),
        name: 'verify-access',
        roles: [user.role!],
        expires: new Date(Date.now() + GRANT_SECONDS * 1000),
        rate: null,
      });
      callers.push({ role: user.role!, credentials: 'API key', headers: { 'x-api-key': made.key } });
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
 * seed's form, whose query compares them itself: the parameter named like a password, and the other one).
 */
function tokenRequest(backend: Backend): { path: string; user: string; password: string } | { path: string; unproven: string } | undefined {
  for (const resource of backend.resources) {
    for (const operation of resource.operations) {
      const login = operation.steps.find((step): step is ExecuteStep => step.kind === 'execute' && step.plugin.login === true);
      if (!login || operation.access !== null || operation.method !== 'POST') continue;
      const pathname = `/${backend.name}/v${resource.version}/${resource.name}`;
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

/** Users of earlier runs that ended without removing theirs (killed): older than any run lasts. */
async function removeLeftovers(connection: mysql.Connection, say: (line: string) => void): Promise<void> {
  const { users, userId, userName } = DEFAULT_USER_TABLES;
  const [rows] = await connection.execute(
    `select ${userId} as id, ${userName} as name from ${users} where ${userName} like ? and created_on < now() - interval ${LEFTOVER_SECONDS} second`,
    [`${TEMPORARY_USER_PREFIX}%`],
  );
  const leftovers = (rows as { id: number; name: string }[]).map((row) => ({ id: row.id, name: row.name, password: '', role: null }));
  if (leftovers.length > 0) await removeUsers(connection, leftovers, say);
}

/** Removes temporary users with their keys and sessions; their grants go with them, and the triggers end their tokens. */
async function removeUsers(connection: mysql.Connection, users: readonly TemporaryUser[], say: (line: string) => void): Promise<void> {
  if (users.length === 0) return;
  const ids = users.map((user) => user.id);
  const list = ids.map(() => '?').join(', ');
  const { users: table, userId } = DEFAULT_USER_TABLES;
  for (const sql of [`delete from xmlrest_api_key where user_id in (${list})`, `delete from xmlrest_session where user_id in (${list})`]) {
    try {
      await connection.execute(sql, ids.map(String));
    } catch (error) {
      // A database without keys or sessions (`xmlrest db init` of an earlier version): nothing of theirs there.
      if ((error as { errno?: number }).errno !== 1146) throw error;
    }
  }
  await connection.execute(`delete from ${table} where ${userId} in (${list})`, ids);
  say(`verify-access: removed ${users.length} temporary user${users.length === 1 ? '' : 's'} (${users.map((user) => user.name).join(', ')})`);
}

/**
 * The command: runs `verifyAccess`, prints each disagreement and what stayed unproven (or `--json`), and says how it
 * ended: 0 every route agrees, 1 a disagreement, 2 it could not run or finish (a wrong command line, no
 * DATABASE_URL, no access.lock, a server that does not answer or goes away), 130/143 stopped by SIGINT/SIGTERM;
 * its users removed however it ends.
 */
export async function verifyAccessCommand(
  baseUrl: string,
  options: { json?: boolean; lock?: string; resources?: string },
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
  try {
    const base = url.toString().replace(/\/+$/, '');
    // Before any user is made: a server that does not answer is no server to prove.
    try {
      await fetch(`${base}/openapi.json`, { signal: AbortSignal.any([AbortSignal.timeout(REQUEST_TIMEOUT_MS), controller.signal]) });
    } catch (error) {
      if (stoppedBy !== undefined) return stoppedBy === 'SIGINT' ? 130 : 143;
      return fail(`the server at ${base} does not answer (${(error as Error).message})`);
    }
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
    return verdict.disagreements.length > 0 ? 1 : 0;
  } catch (error) {
    if (stoppedBy !== undefined) return stoppedBy === 'SIGINT' ? 130 : 143;
    if (error instanceof VerifyUsage) return fail(error.message);
    // 1 is kept for a disagreement proven: a run that could not finish proved nothing.
    const cause = (error as { cause?: { message?: string } }).cause?.message;
    return fail(`verify-access could not finish: ${(error as Error).message}${cause ? ` (${cause})` : ''}; its temporary users are removed`);
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
