import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type mysql from 'mysql2/promise';
import { cannotTell, type Explanation, explain, explainChecked, explainClaims, findRoute, type RouteAccess, routesOf } from '../../../console/access.js';
import { databaseUrlFromEnvironment } from '../../../generator/environment.js';
import { LoginLimiter } from '../../../runtime/auth/limits/limiter.js';
import { CredentialCache } from '../../../runtime/auth/passwords/credential-cache.js';
import { CredentialChecker } from '../../../runtime/auth/passwords/credentials.js';
import { Hashing } from '../../../runtime/auth/passwords/hashing.js';
import type { BackendModule } from '../../../runtime/index.js';
import { readUserTenant } from '../../../runtime/tenants/user-tenant.js';
import { grantsOf, queryableOf, userIdOf } from '../../schema.js';
import { type CommandKit, generatedBackends, UsageError, withConnection } from '../command.js';
import { type RouteTool, routeTool, toolLine } from '../explain-mcp.js';
import { claimsTenant, routeTenant, withTenant } from '../explain-tenant.js';
import { readPasswordFromStdin } from '../password-stdin.js';

/** `xmlrest explain`: may a user, or the user of a token's claims, call a route, and why. */
export function registerExplainCommand(xmlrest: Command, { command, done }: CommandKit): void {
  command(
    xmlrest,
    'explain',
    'may USER call METHOD PATH, and why (exit 0 allowed, 1 denied, 3 cannot tell without the password); with --claims FILE, give METHOD PATH only',
  )
    .argument('<user>', 'the user name (with --claims: the method)')
    .argument('<method>', 'GET, POST, PUT, PATCH or DELETE (with --claims: the path)')
    .argument('[path]', 'the served path without BASE_PATH, as access.lock lists it, such as /shop/v1.0/orders')
    .option(
      '--json',
      'print {"allowed", "backend", "needs", "holds", "reason"} (allowed null: cannot tell), and "mcp" {"endpoint", "tool", "readOnly"} on a backend with MCP',
    )
    .option('--password-stdin', "read the user's password from stdin and run the backend's AuthQuery with it, as the server does")
    .option('--claims <file>', "answer for the user of an outside issuer (docs/internals/contract.md §9): a token's payload as JSON, or the token itself")
    .action(async (name: string, method: string, served: string | undefined, options: { json?: boolean; claims?: string; passwordStdin?: boolean }) => {
      if (options.claims !== undefined) {
        if (served !== undefined) throw new UsageError('with --claims the user comes from the claims: give METHOD PATH only');
        if (options.passwordStdin) throw new UsageError('--password-stdin is for a user name, not --claims');
        done(await explainClaimsCommand(options.claims, name, method, options.json ?? false));
        return;
      }
      if (served === undefined) throw new UsageError("missing required argument 'path'");
      done(await explainCommand(name, method, served, options.json ?? false, options.passwordStdin ?? false));
    });
}

/**
 * `xmlrest explain USER METHOD PATH [--json] [--password-stdin]` (docs/internals/contract.md §8): may USER call METHOD PATH
 * (the served path without BASE_PATH), and why. On the default tables the roles are read from them; on a backend
 * with its own AuthQuery only that query, given the password, knows them: without `--password-stdin` the answer
 * for a protected route is "cannot tell" (exit 3), never a guess; with it, the query runs as the server runs it.
 */
async function explainCommand(user: string, method: string, served: string, json: boolean, passwordStdin: boolean): Promise<number> {
  // Read first: a password that is not there is a usage error before anything is loaded.
  const password = passwordStdin ? await readPasswordFromStdin('xmlrest explain USER METHOD PATH --password-stdin') : undefined;
  const { route, backend } = await routeOf(method, served);
  let answer: Explanation;
  if (password !== undefined) {
    answer = await withConnection(async (connection) => {
      const checked = await checkCredentials(connection, backend, user, password);
      if (checked.rows.length === 0) return explainChecked(route, user, backend.authScheme, checked);
      if (!backend.defaultTables) return withTenant(explainChecked(route, user, backend.authScheme, checked), backend, user, checked.tenant);
      // A grant past its end is deleted within moments (runtime/auth/users/grants.ts): it admits no more.
      const id = await userIdOf(connection, user);
      const grants = id === undefined ? undefined : await grantsOf(connection, id);
      const held = explainChecked(route, user, backend.authScheme, checked);
      const answer =
        grants === undefined
          ? held
          : {
              ...explain(
                route,
                user,
                (held.holds ?? []).filter((role) => grants.roles.includes(role)),
              ),
              ends: grants.ends,
            };
      return withTenant(answer, backend, user, checked.tenant);
    });
  } else if (!backend.defaultTables) {
    answer = cannotTell(route, user, backend.name);
  } else {
    answer = await withConnection(async (connection) => {
      const id = await userIdOf(connection, user);
      if (id === undefined) return { ...explain(route, user, null), reason: `there is no user ${user}` };
      const grants = await grantsOf(connection, id);
      const tenant = backend.tenant === undefined ? undefined : await readUserTenant(queryableOf(connection), backend, String(id));
      return withTenant({ ...explain(route, user, grants.roles), ends: grants.ends }, backend, user, tenant);
    });
  }
  return printExplanation(user, answer, json, routeTenant(backend, method, served), routeTool(backend, method, served));
}

/**
 * The backend's AuthQuery run with these credentials exactly as the server runs it (runtime/auth/passwords/credentials.ts):
 * the stored password verified when the query returns it, plain text in constant time; nothing written (no rehash).
 */
async function checkCredentials(connection: mysql.Connection, backend: BackendModule, user: string, password: string) {
  const queryable = queryableOf(connection);
  const database = {
    ...queryable,
    transaction: <T>(work: (db: typeof queryable) => Promise<T>) => work(queryable),
  };
  const checker = new CredentialChecker({ ...backend, rehashPlaintext: false }, database, new LoginLimiter(), new CredentialCache(), new Hashing());
  return checker.check(user, password, '127.0.0.1');
}

async function routeOf(method: string, served: string): Promise<{ route: RouteAccess; backend: BackendModule }> {
  const backends = await generatedBackends();
  const route = findRoute(routesOf(backends), method, served);
  if (!route) throw new UsageError(`no backend serves ${method.toUpperCase()} ${served} (give the path without BASE_PATH, as access.lock lists it)`);
  return { route, backend: backends.find((candidate) => candidate.name === route.backend)! };
}

/**
 * `xmlrest explain --claims FILE METHOD PATH` (docs/internals/contract.md §9): may the user a token's claims describe
 * call METHOD PATH, and why. FILE holds the payload as JSON, or the whole token (only its payload is read:
 * explain reasons about what claims admit, not whether a signature is good).
 */
async function explainClaimsCommand(file: string, method: string, served: string, json: boolean): Promise<number> {
  const { route, backend } = await routeOf(method, served);
  let text: string;
  try {
    text = readFileSync(file, 'utf8').trim();
  } catch {
    throw new UsageError(`cannot read the claims file ${file}`);
  }
  let payload: unknown;
  try {
    payload = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(text)
      ? JSON.parse(Buffer.from(text.split('.')[1]!, 'base64url').toString('utf8'))
      : JSON.parse(text);
  } catch {
    throw new UsageError(`${file} holds neither a JSON object of claims nor a token`);
  }
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) throw new UsageError(`${file} holds no JSON object of claims`);
  // A UserQuery needs the database; without DATABASE_URL the answer says it cannot tell.
  const mapped = backend.issuers.some((issuer) => issuer.userQuery !== null);
  const answer =
    mapped && databaseUrlFromEnvironment(process.cwd())
      ? await withConnection((connection) =>
          explainClaims(route, backend, payload, async (sql, values) => (await connection.execute(sql, values as string[]))[0] as { user_id?: unknown }[]),
        )
      : await explainClaims(route, backend, payload);
  return printExplanation(
    answer.user,
    withTenant(answer, backend, answer.user, claimsTenant(backend, payload)),
    json,
    routeTenant(backend, method, served),
    routeTool(backend, method, served),
  );
}

function printExplanation(
  user: string,
  answer: Explanation & { tenant?: string },
  json: boolean,
  tenant: string | undefined,
  tool: RouteTool | undefined,
): number {
  if (json)
    console.log(
      JSON.stringify({
        allowed: answer.allowed,
        backend: answer.backend,
        needs: answer.needs,
        holds: answer.holds,
        reason: answer.reason,
        ...(tenant !== undefined ? { tenant } : {}),
        ...(answer.tenant !== undefined ? { userTenant: answer.tenant } : {}),
        ...(tool !== undefined ? { mcp: tool } : {}),
      }),
    );
  else {
    const needs =
      answer.needs === 'public'
        ? 'nothing (public)'
        : answer.needs === '*'
          ? 'any role at all (*)'
          : answer.needs.length === 1
            ? `the role ${answer.needs[0]}`
            : `any one of the roles ${answer.needs.join(', ')}`;
    console.log(
      answer.allowed === null
        ? `cannot tell: whether ${user} may call ${answer.method} ${answer.path} on backend ${answer.backend}`
        : `${answer.allowed ? 'allowed' : 'denied'}: ${user} ${answer.allowed ? 'may' : 'may not'} call ${answer.method} ${answer.path} on backend ${answer.backend}`,
    );
    console.log(`  the route needs: ${needs}`);
    const held = (role: string) => (answer.ends?.[role] ? `${role} (until ${answer.ends[role]})` : role);
    console.log(`  ${user} holds: ${answer.holds === null ? 'unknown' : answer.holds.map(held).join(', ') || 'no role'}`);
    console.log(`  because ${answer.reason}`);
    if (tenant !== undefined) console.log(`  tenant: ${tenant}${answer.tenant === undefined ? '' : `; ${user}'s is ${answer.tenant}`}`);
    if (tool !== undefined) console.log(toolLine(user, tool));
  }
  return answer.allowed === null ? 3 : answer.allowed ? 0 : 1;
}
