// One run of verify-access, from the lock and the resources to its verdict: the order of the steps, each done in
// its own module (see ../verify-access.ts).
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type mysql from 'mysql2/promise';
import { isoSeconds } from '../../../console/store.js';
import { analyseSources, readSources } from '../../../generator/index.js';
import { openApiDocument } from '../../../generator/openapi.js';
import { addUser, grantRole } from '../../schema.js';
import { type Caller, type Check, check, operationOf, REQUEST_TIMEOUT_MS, type Send, unproven } from './call.js';
import { messageOfError, RemovalFailed, VerifyUsage } from './errors.js';
import { readLock } from './lock.js';
import { type McpFetch, toolChecks, toolsOf } from './mcp.js';
import { compareWithServer } from './server-match.js';
import { signIn } from './sign-in.js';
import { freshTenants, giveTenant, type TemporaryTenants, tenantCheck, tenantColumnOf } from './tenants.js';
import {
  ANY_ROLE,
  GRANT_SECONDS,
  type Made,
  pruneEarlierRuns,
  recordRun,
  removeLeftovers,
  removeUsers,
  requireGrantEnds,
  TEMPORARY_USER_PREFIX,
  type TemporaryUser,
} from './users.js';

/** A run that goes on renews its users' grants (and signs them in again) this often, well before they end. */
const RENEW_AFTER_MS = 300_000;

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

export interface Verdict {
  base: string;
  lines: number;
  requests: number;
  checks: Check[];
  disagreements: Check[];
  unproven: Check[];
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

  // The MCP client's requests, counted and stopped as the run's own.
  const mcpFetch: McpFetch = (url, init) => {
    options.signal?.throwIfAborted();
    verdict.requests++;
    const signals = [AbortSignal.timeout(REQUEST_TIMEOUT_MS), ...(options.signal ? [options.signal] : []), ...(init?.signal ? [init.signal] : [])];
    return fetch(url, { ...init, redirect: 'manual', signal: AbortSignal.any(signals) });
  };

  // Before any user is made and anything else is sent: the server must serve what the resources say.
  const document = openApiDocument(project);
  // The server's own document, as its tools are made from it (a password's `format`, read from the database's types at generate).
  const servedDocument = await compareWithServer(base, send, project, document, options.resourcesDir);

  // The backends of the default tables share their users: every one of those users calls every such backend.
  const served = lines.filter((line) => backends.get(line.backend)!.defaultTables && backends.get(line.backend)!.authScheme !== null);
  const roles = [...new Set(served.flatMap((line) => (Array.isArray(line.rule) ? line.rule : [])))].sort();
  // A tenant backend's users each get a tenant of their own, and a twin of each (the same role) another one.
  const tenanted = project.backends.filter((backend) => served.some((line) => line.backend === backend.name) && tenantColumnOf(backend) !== undefined);
  const mains: TemporaryUser[] = [];
  const twins: TemporaryUser[] = [];
  /** By usr's column: the two tenants given, or why none could be. */
  const tenants = new Map<string, TemporaryTenants | string>();
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
      for (const group of tenanted.length > 0 ? [mains, twins] : [mains]) {
        for (const role of [...roles, ANY_ROLE]) {
          options.signal?.throwIfAborted();
          const user = { id: 0, name: `${TEMPORARY_USER_PREFIX}${run}-${made.users.length + 1}`, password: randomBytes(24).toString('base64url'), role };
          user.id = await addUser(connection, user.name, user.password, []);
          made.users.push(user);
          group.push(user);
          await grantRole(connection, user.id, role, made.until);
        }
      }
      for (const backend of tenanted) {
        const column = tenantColumnOf(backend)!;
        if (tenants.has(column)) continue;
        const fresh = await freshTenants(connection, backend, column, run);
        const refused = (await giveTenant(connection, column, mains, fresh.own)) ?? (await giveTenant(connection, column, twins, fresh.other));
        tenants.set(column, refused ?? fresh);
        if (refused === undefined) say(`verify-access: the temporary users are of tenant ${fresh.own}, their twins of tenant ${fresh.other} (${column})`);
      }
      say(
        `verify-access: ${made.users.length} temporary users (${made.users.map((user) => `${user.name}: ${user.role}`).join(', ')}), their roles granted for ${GRANT_SECONDS / 60} minutes`,
      );
    }

    for (const backend of project.backends) {
      const own = lines.filter((line) => line.backend === backend.name);
      if (own.length === 0) continue;
      const users = backend.defaultTables && backend.authScheme !== null ? mains : [];
      let callers = await signIn(backend, users, base, send, record, connection, made.until);
      const column = tenantColumnOf(backend);
      const given = column === undefined ? undefined : tenants.get(column);
      let twinCallers = typeof given === 'object' ? await signIn(backend, twins, base, send, record, connection, made.until) : [];
      for (const line of own) {
        // A long run: the grants renewed before they end, and the callers' tokens and keys made again under them.
        if (Date.now() - renewedAt >= RENEW_AFTER_MS) {
          await renew();
          callers = await signIn(backend, users, base, send, () => {}, connection, made.until);
          if (typeof given === 'object') twinCallers = await signIn(backend, twins, base, send, () => {}, connection, made.until);
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
        if (typeof given === 'string') {
          for (const role of line.rule === '*' ? ['*'] : line.rule) record(unproven(line, role, 'temporary users', 'admitted', given));
          continue;
        }
        for (const caller of callers) {
          const admitted = line.rule === '*' || line.rule.includes(caller.role);
          const proved = await check(line, operation, caller, admitted ? 'admitted' : 'refused', base, send);
          record(proved);
          // Each read it proves, on a tenant backend: no row of another tenant, for the caller or its twin.
          const read = line.method === 'GET' && proved.got === 'admitted' && proved.status !== null && proved.status >= 200 && proved.status < 300;
          if (given !== undefined && read && line.tenantAll === undefined) {
            const twin = twinCallers.find((other) => other.role === caller.role && other.credentials === caller.credentials);
            record(await tenantCheck(line, caller, twin, backend.tenant!.column, given, base, send));
          }
        }
      }
      if (backend.mcp) {
        // tools/list as every caller who called the routes: the tools listed are exactly the routes the lock admits.
        const proven = typeof given === 'string' ? [] : callers;
        for (const proved of await toolChecks(backend, own, toolsOf(servedDocument, backend), proven, base, mcpFetch, options.signal)) record(proved);
        const why = !backend.defaultTables
          ? `backend ${backend.name} checks credentials with its own AuthQuery over its own tables: verify-access cannot make users there`
          : typeof given === 'string'
            ? given
            : undefined;
        if (why !== undefined && backend.authScheme !== null) {
          record({
            backend: backend.name,
            method: 'POST',
            path: `/${backend.name}/mcp`,
            role: '(every role)',
            credentials: 'MCP',
            expected: 'admitted',
            got: 'unproven',
            status: null,
            tool: 'tools/list',
            note: `tools/list as a user with roles is not proven: ${why}`,
          });
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
