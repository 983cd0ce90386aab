import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type mysql from 'mysql2/promise';
import { type Explanation, explain, findRoute, routesOf } from '../console/access.js';
import { checkRoleName, checkUserName } from '../console/names.js';
import { databaseUrlFromEnvironment, generateProject as generate } from '../generator/index.js';
import { credentialProblem, MAX_PASSWORD_BYTES } from '../runtime/auth/bounds.js';
import { revokeToken, revokeUserTokens } from '../runtime/auth/revocations.js';
import type { BackendModule } from '../runtime/index.js';
import { connectTo } from './connection.js';
import { addUser, createDefaultTables, createDemoDatabase, grantRole, revokeRole, rolesOf, userIdOf } from './schema.js';

const USAGE = `usage:
  xmlrest generate [--check] [--refresh-types]
  xmlrest db init [--demo]
  xmlrest user add NAME --password P [--role R]...
  xmlrest role grant USER ROLE
  xmlrest role revoke USER ROLE
  xmlrest token revoke --backend B --jti JTI [--until UNIX_SECONDS]
  xmlrest token revoke --backend B --user NAME
  xmlrest explain USER METHOD PATH [--json]
Database commands read DATABASE_URL (or .env).`;

async function connect(): Promise<mysql.Connection> {
  try {
    process.loadEnvFile('.env');
  } catch {
    // No .env file: the environment alone configures the command.
  }
  const url = process.env.DATABASE_URL;
  if (!url) throw new UsageError('DATABASE_URL is not set (mysql://user:pass@host:port/db)');
  return connectTo(url, { multipleStatements: true });
}

/** A wrong command line: exit code 2, as usage errors conventionally are. */
export class UsageError extends Error {
  readonly exitCode = 2;
}

export async function main(argv: string[]): Promise<number> {
  const [command, sub, ...rest] = argv;
  if (command === 'generate') {
    const root = process.cwd();
    return generate({ root, check: argv.includes('--check'), refreshTypes: argv.includes('--refresh-types'), databaseUrl: databaseUrlFromEnvironment(root) });
  }
  if (command === 'db' && sub === 'init') {
    const connection = await connect();
    try {
      await createDefaultTables(connection);
      if (rest.includes('--demo')) await createDemoDatabase(process.env.DATABASE_URL!);
      console.log(`created usr and usr_role${rest.includes('--demo') ? ' and the demo tables' : ''}`);
      return 0;
    } finally {
      await connection.end();
    }
  }
  if (command === 'user' && sub === 'add') {
    const { values, positionals } = parseArgs({
      args: rest,
      allowPositionals: true,
      options: { password: { type: 'string' }, role: { type: 'string', multiple: true } },
    });
    if (!positionals[0] || positionals.length !== 1 || !values.password) throw new UsageError('user add NAME --password P [--role R]...');
    const checked = checkUserName(positionals[0]);
    if (!checked.ok) throw new UsageError(checked.message);
    if (credentialProblem('password', values.password)) throw new UsageError(`a password has at most ${MAX_PASSWORD_BYTES} bytes`);
    const roles = (values.role ?? []).map((role) => {
      const checkedRole = checkRoleName(role);
      if (!checkedRole.ok) throw new UsageError(checkedRole.message);
      return checkedRole.name;
    });
    const name = checked.name;
    const connection = await connect();
    try {
      const id = await addUser(connection, name, values.password, roles);
      console.log(`created user ${name} (user_id ${id})${roles.length ? ` with ${roles.join(', ')}` : ''}`);
      return 0;
    } finally {
      await connection.end();
    }
  }
  if (command === 'role' && (sub === 'grant' || sub === 'revoke')) {
    const [user, role, ...extra] = rest;
    if (!user || !role || extra.length > 0) throw new UsageError(`role ${sub} USER ROLE`);
    const connection = await connect();
    try {
      const id = await userIdOf(connection, user);
      if (id === undefined) throw new UsageError(`no such user: ${user}`);
      if (sub === 'grant') {
        const checked = checkRoleName(role);
        if (!checked.ok) throw new UsageError(checked.message);
        await grantRole(connection, id, checked.name);
        console.log(`${user} holds ${role}`);
      } else {
        const removed = await revokeRole(connection, id, role);
        console.log(removed > 0 ? `${user} no longer holds ${role}` : `${user} did not hold ${role}`);
      }
      return 0;
    } finally {
      await connection.end();
    }
  }
  if (command === 'token' && sub === 'revoke') {
    const { values } = parseArgs({
      args: rest,
      options: { backend: { type: 'string' }, jti: { type: 'string' }, user: { type: 'string' }, until: { type: 'string' } },
    });
    if (!values.backend || (values.jti === undefined) === (values.user === undefined))
      throw new UsageError('token revoke --backend B (--jti JTI | --user NAME)');
    const connection = await connect();
    const db = { write: (sql: string, params: readonly unknown[]) => connection.execute(sql, params as never[]) };
    try {
      if (values.jti !== undefined) {
        // Remembered for a year unless told when the token expires: a revoked token must never come back.
        const until = values.until ? Number(values.until) : Math.floor(Date.now() / 1000) + 365 * 24 * 3600;
        await revokeToken(db, values.backend, values.jti, until);
        console.log(`revoked token ${values.jti} on ${values.backend}`);
      } else {
        const id = await userIdOf(connection, values.user!);
        if (id === undefined) throw new UsageError(`no such user: ${values.user}`);
        await revokeUserTokens(db, values.backend, String(id));
        console.log(`revoked every token of ${values.user} on ${values.backend} issued until now`);
      }
      console.log('running servers refuse it within their revocation poll (5 s by default)');
      return 0;
    } finally {
      await connection.end();
    }
  }
  if (command === 'explain') return explainCommand(argv.slice(1));
  throw new UsageError(USAGE);
}

/**
 * `xmlrest explain USER METHOD PATH [--json]` (docs/contract.md §8): may USER
 * call METHOD PATH (the served path without BASE_PATH), and why. Exit 0
 * allowed, 1 denied, 2 for a wrong command line or a route nobody serves.
 */
async function explainCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { json: { type: 'boolean' } } });
  const [user, method, served] = positionals;
  if (!user || !method || !served || positionals.length !== 3) throw new UsageError('explain USER METHOD PATH [--json]');
  const generated = pathToFileURL(path.resolve('generated/index.ts')).href;
  const { backends } = (await import(generated)) as { backends: BackendModule[] };
  const route = findRoute(routesOf(backends), method, served);
  if (!route) throw new UsageError(`no backend serves ${method.toUpperCase()} ${served} (give the path without BASE_PATH, as access.lock lists it)`);
  const backend = backends.find((candidate) => candidate.name === route.backend)!;
  let answer: Explanation;
  if (!backend.defaultTables) {
    answer = {
      ...explain(route, user, null),
      reason: `backend ${backend.name} checks credentials with its own AuthQuery: its users' roles are not known here`,
    };
  } else {
    const connection = await connect();
    try {
      const id = await userIdOf(connection, user);
      const holds = id === undefined ? null : await rolesOf(connection, id);
      answer = id === undefined ? { ...explain(route, user, null), reason: `there is no user ${user}` } : explain(route, user, holds);
    } finally {
      await connection.end();
    }
  }
  if (values.json) console.log(JSON.stringify({ allowed: answer.allowed, backend: answer.backend, needs: answer.needs, holds: answer.holds }));
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
      `${answer.allowed ? 'allowed' : 'denied'}: ${user} ${answer.allowed ? 'may' : 'may not'} call ${answer.method} ${answer.path} on backend ${answer.backend}`,
    );
    console.log(`  the route needs: ${needs}`);
    console.log(`  ${user} holds: ${answer.holds === null ? 'unknown' : answer.holds.join(', ') || 'no role'}`);
    console.log(`  because ${answer.reason}`);
  }
  return answer.allowed ? 0 : 1;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`xmlrest: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(error instanceof UsageError ? error.exitCode : 1);
    },
  );
}
