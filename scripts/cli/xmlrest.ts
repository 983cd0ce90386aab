import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import type mysql from 'mysql2/promise';
import { cannotTell, type Explanation, explain, explainChecked, explainClaims, findRoute, type RouteAccess, routesOf } from '../../console/access.js';
import { grantDetail, grantEnd } from '../../console/grants.js';
import { checkNewKey, KeyStore, parseExpiry } from '../../console/keys.js';
import { checkRoleName, checkUserName } from '../../console/names.js';
// The generator (ts-morph among it) is loaded by the commands that generate, never by those that do not.
import { databaseUrlFromEnvironment } from '../../generator/environment.js';
import { credentialProblem, MAX_PASSWORD_BYTES } from '../../runtime/auth/bounds.js';
import { CredentialCache } from '../../runtime/auth/credential-cache.js';
import { CredentialChecker } from '../../runtime/auth/credentials.js';
import { Hashing } from '../../runtime/auth/hashing.js';
import { LoginLimiter } from '../../runtime/auth/limiter.js';
import { revokeToken, revokeUserTokens } from '../../runtime/auth/revocations.js';
import { HTTP_METHODS, type HttpMethod, parseAuth } from '../../runtime/contract.js';
import type { BackendModule } from '../../runtime/index.js';
import { connectTo } from '../connection.js';
import { buildToolsInstalled, FROM_BUILD, knowStaleSources, packageVersion } from '../install.js';
import { addUser, createDefaultTables, createDemoDatabase, grantRole, grantsOf, queryableOf, recordFromCli, revokeRole, rolesOf, userIdOf } from '../schema.js';
import { registerEventCommands } from './events.js';
import { generatedBackends as backendsOf } from './generated-backends.js';

/**
 * The `xmlrest` command (commander): `--help` and `<command> --help` print
 * usage to stdout and exit 0; an unknown command or option, or a missing
 * argument, exits 2 with the error and a one-line hint on stderr; a command
 * that runs exits 0 when it did its work (explain: 0 allowed, 1 denied, 3 cannot tell).
 */

/** A wrong command line: exit code 2, as usage errors conventionally are. */
export class UsageError extends Error {
  readonly exitCode = 2;
}

/** A right command line that this install cannot run (a build-time command in a production install): exit code 2, no usage hint. */
class NotHere extends Error {
  readonly exitCode = 2;
}

const HINT = '(run xmlrest --help, or xmlrest <command> --help, for usage)';

async function connect(): Promise<mysql.Connection> {
  const url = databaseUrlFromEnvironment(process.cwd());
  if (!url)
    throw new UsageError('DATABASE_URL is not set: this command works on the database at mysql://user:password@host:3306/database (environment or .env)');
  return connectTo(url, { multipleStatements: true });
}

async function withConnection<T>(work: (connection: mysql.Connection) => Promise<T>): Promise<T> {
  const connection = await connect();
  try {
    return await work(connection);
  } finally {
    await connection.end();
  }
}

/**
 * Generating is a build-time step: a production install (`npm ci --omit=dev`) runs the build it was given and
 * has no TypeScript compiler to make another, so what `generate` wrote there would never be served (`npm start`
 * refuses a build older than its sources). The console, which compiles what it regenerates into the build, is
 * the way to change who may call a resource on a running server.
 */
function requireBuildTools(command: string): void {
  if (!FROM_BUILD || buildToolsInstalled()) return;
  throw new NotHere(
    `${command} is a build-time command, and this is a production install (no TypeScript compiler to rebuild dist/): run it where the dev dependencies are installed, then npm run build, and deploy generated/ and dist/ (xmlrest generate --check works here; on a running server the console changes who may call a resource)`,
  );
}

function program(done: (code: number) => void): Command {
  const xmlrest = new Command('xmlrest')
    .description('XML resource files in, a REST backend on MySQL/MariaDB out.')
    .version(packageVersion(), '-V, --version', 'print the version')
    .helpOption('-h, --help', 'print this help')
    .addHelpText('after', '\nDatabase commands read DATABASE_URL (mysql://user:password@host:3306/database) from the environment or .env.')
    .showHelpAfterError(HINT)
    .exitOverride()
    .configureOutput({ writeOut: (text) => process.stdout.write(text), writeErr: (text) => process.stderr.write(text) });
  // Every subcommand behaves as the top one: help to stdout, errors with the hint, exit codes ours.
  const command = (parent: Command, name: string, description: string) =>
    parent
      .command(name)
      .description(description)
      .helpOption('-h, --help', 'print this help')
      .showHelpAfterError(HINT)
      .exitOverride()
      .configureOutput({ writeOut: (text) => process.stdout.write(text), writeErr: (text) => process.stderr.write(text) });

  command(xmlrest, 'generate', 'write generated/ (and access.lock) from resources/; only changed files are written')
    .option('--check', 'write nothing; exit 1 naming every file that would change')
    .option('--refresh-types', 'ask the database for every statement’s types again and name what changed')
    .option('--strict', 'warnings (a protected read of rows that belong to users without $uid) are errors: nothing is written, exit 1')
    .action(async (options: { check?: boolean; refreshTypes?: boolean; strict?: boolean }) => {
      const root = process.cwd();
      if (!options.check) requireBuildTools('xmlrest generate');
      const { generateProject: generate } = await import('../../generator/index.js');
      done(
        await generate({
          root,
          check: options.check ?? false,
          refreshTypes: options.refreshTypes ?? false,
          databaseUrl: databaseUrlFromEnvironment(root),
          strict: options.strict ?? false,
        }),
      );
    });

  const db = command(xmlrest, 'db', 'the database xmlrest works on');
  command(db, 'init', 'create usr, usr_role, xmlrest’s own tables and the triggers that end revoked roles everywhere')
    .option('--demo', 'also the demo’s tables and users')
    .action(async (options: { demo?: boolean }) => {
      await withConnection(async (connection) => {
        await createDefaultTables(connection);
        if (options.demo) await createDemoDatabase(databaseUrlFromEnvironment(process.cwd())!);
      });
      console.log(`created usr and usr_role${options.demo ? ' and the demo tables' : ''}`);
      done(0);
    });

  const user = command(xmlrest, 'user', 'users of the default tables');
  command(user, 'add', 'create a user, with roles')
    .argument('<name>', 'the user name (NFC-normalised; no control, zero-width or bidirectional characters)')
    .requiredOption('--password <password>', `the password (at most ${MAX_PASSWORD_BYTES} bytes; stored as an argon2id hash)`)
    .option('--role <role...>', 'a role to grant (repeat for several)')
    .action(async (name: string, options: { password: string; role?: string[] }) => {
      const checked = checkUserName(name);
      if (!checked.ok) throw new UsageError(checked.message);
      if (credentialProblem('password', options.password)) throw new UsageError(`a password has at most ${MAX_PASSWORD_BYTES} bytes`);
      const roles = (options.role ?? []).map((role) => {
        const checkedRole = checkRoleName(role);
        if (!checkedRole.ok) throw new UsageError(checkedRole.message);
        return checkedRole.name;
      });
      const id = await withConnection((connection) => addUser(connection, checked.name, options.password, roles));
      console.log(`created user ${checked.name} (user_id ${id})${roles.length ? ` with ${roles.join(', ')}` : ''}`);
      done(0);
    });

  const role = command(xmlrest, 'role', 'roles of the default tables');
  command(role, 'grant', 'grant USER the role ROLE, for good or until a time; granting it again sets its end (idempotent)')
    .argument('<user>', 'the user name')
    .argument('<role>', 'the role name')
    .option('--until <time>', 'the grant ends then: an ISO time with its zone, such as 2026-12-01T18:00Z')
    .option('--for <duration>', 'the grant ends this long from now: 8h, 90m, 7d, 30s')
    .action(async (name: string, roleName: string, options: { until?: string; for?: string }) => {
      const checked = checkRoleName(roleName);
      if (!checked.ok) throw new UsageError(checked.message);
      const end = grantEnd(options.until, options.for);
      if (!end.ok)
        throw new UsageError(
          end.message
            .replace(/^until/, '--until')
            .replace(/^for/, '--for')
            .replace('until or for', '--until or --for'),
        );
      await withConnection(async (connection) => {
        const id = await userIdOf(connection, name);
        if (id === undefined) throw new UsageError(`no such user: ${name}`);
        const outcome = await grantRole(connection, id, checked.name, end.until);
        const detail = grantDetail(checked.name, end.until);
        if (outcome !== 'unchanged') await recordFromCli(connection, 'grant role', name, detail);
        const ends = end.until === null ? '' : ` until ${detail.slice(checked.name.length + ' until '.length)}`;
        console.log(
          outcome === 'unchanged'
            ? `${name} holds ${checked.name}${ends} already`
            : outcome === 'changed'
              ? `${name} holds ${checked.name}${end.until === null ? ' for good (its end removed)' : `${ends} (its end changed)`}`
              : `${name} holds ${checked.name}${ends}`,
        );
        if (end.until !== null) console.log('its tokens expire by then; when it ends every server stops admitting it within 5 s, as a revoke');
      });
      done(0);
    });
  command(role, 'revoke', 'revoke ROLE from USER; the user’s tokens end everywhere')
    .argument('<user>', 'the user name')
    .argument('<role>', 'the role name')
    .action(async (name: string, roleName: string) => {
      await withConnection(async (connection) => {
        const id = await userIdOf(connection, name);
        if (id === undefined) throw new UsageError(`no such user: ${name}`);
        const removed = await revokeRole(connection, id, roleName);
        if (removed > 0) await recordFromCli(connection, 'revoke role', name, roleName);
        console.log(removed > 0 ? `${name} no longer holds ${roleName}` : `${name} did not hold ${roleName}`);
      });
      done(0);
    });

  const token = command(xmlrest, 'token', 'Bearer tokens');
  command(token, 'revoke', 'revoke one token (--jti) or every token and API key a user holds (--user); servers refuse it within their poll (5 s)')
    .requiredOption('--backend <backend>', 'the backend that issued it')
    .option('--jti <jti>', 'the token’s jti')
    .option('--until <seconds>', 'with --jti: when the token expires (Unix seconds); remembered a year otherwise')
    .option('--user <name>', 'every token and API key of this user on the backend')
    .action(async (options: { backend: string; jti?: string; until?: string; user?: string }) => {
      if ((options.jti === undefined) === (options.user === undefined)) throw new UsageError('token revoke takes --jti JTI or --user NAME, one of them');
      if (options.until !== undefined && !/^[0-9]{1,12}$/.test(options.until)) throw new UsageError('--until is a number of Unix seconds');
      await withConnection(async (connection) => {
        const db = { write: (sql: string, params: readonly unknown[]) => connection.execute(sql, params as never[]) };
        if (options.jti !== undefined) {
          // Remembered for a year unless told when the token expires: a revoked token must never come back.
          const until = options.until ? Number(options.until) : Math.floor(Date.now() / 1000) + 365 * 24 * 3600;
          await revokeToken(db, options.backend, options.jti, until);
          console.log(`revoked token ${options.jti} on ${options.backend}`);
        } else {
          const id = await userIdOf(connection, options.user!);
          if (id === undefined) throw new UsageError(`no such user: ${options.user}`);
          await revokeUserTokens(db, options.backend, String(id));
          // A user's API keys are theirs too: "every token a user holds" leaves none of them working.
          const keys = await new KeyStore(queryableOf(connection)).revokeUser(String(id), options.backend);
          console.log(`revoked every token of ${options.user} on ${options.backend} issued until now, and ${keys} API key${keys === 1 ? '' : 's'}`);
        }
      });
      console.log('running servers refuse it within their revocation poll (5 s by default)');
      done(0);
    });

  const key = command(xmlrest, 'key', 'API keys of backends with api_keys="on" (docs/contract.md §10)');
  command(key, 'create', 'make an API key for a user; it is shown once, now, and never again')
    .requiredOption('--backend <backend>', 'the backend it opens (api_keys="on" in its backend.xml)')
    .requiredOption('--user <name>', 'the user it acts as')
    .requiredOption('--name <name>', 'what it is for, such as "nightly export"')
    .requiredOption('--role <role...>', 'a role it admits (repeat for several); the user must hold it, and keep holding it')
    .option('--expires <when>', 'an ISO time (2027-01-31T00:00Z), or a time from now: 30d, 12h, 90m')
    .option('--rate <rate>', 'its own rate limit on every route it calls, such as 1000/h')
    .action(async (options: { backend: string; user: string; name: string; role: string[]; expires?: string; rate?: string }) => {
      const consoleRoles = (await requireKeyBackend(options.backend)).map((backend) => backend.consoleRole);
      const expires = options.expires === undefined ? null : (parseExpiry(options.expires) ?? null);
      if (options.expires !== undefined && expires === null) throw new UsageError(`--expires is an ISO time or 30d, 12h, 90m, not ${options.expires}`);
      const made = await withConnection(async (connection) => {
        const id = await userIdOf(connection, options.user);
        if (id === undefined) throw new UsageError(`no such user: ${options.user}`);
        const wanted = { backend: options.backend, userId: String(id), name: options.name, roles: options.role, expires, rate: options.rate ?? null };
        const checked = checkNewKey(wanted, await rolesOf(connection, id), consoleRoles);
        if (!checked.ok) throw new UsageError(checked.message);
        return new KeyStore(queryableOf(connection)).create(wanted);
      });
      console.log(made.key);
      process.stderr.write(`key ${made.id} (${made.prefix}...) for ${options.user} on ${options.backend}: store it now, it is not shown again\n`);
      done(0);
    });
  command(key, 'list', 'list API keys (never the keys themselves: their first 8 characters)')
    .option('--backend <backend>', 'only this backend’s')
    .option('--user <name>', 'only this user’s')
    .option('--json', 'print a JSON array')
    .action(async (options: { backend?: string; user?: string; json?: boolean }) => {
      const rows = await withConnection(async (connection) => {
        let userId: string | undefined;
        if (options.user !== undefined) {
          const id = await userIdOf(connection, options.user);
          if (id === undefined) throw new UsageError(`no such user: ${options.user}`);
          userId = String(id);
        }
        return new KeyStore(queryableOf(connection)).list({ backend: options.backend, userId });
      });
      if (options.json) console.log(JSON.stringify(rows));
      else {
        const when = (value: Date | null) => (value === null ? '-' : new Date(value).toISOString().slice(0, 16).replace('T', ' '));
        console.log('id  backend  user  name  prefix  roles  rate  created  expires  revoked  last used');
        for (const row of rows) {
          console.log(
            [
              row.key_id,
              row.backend,
              row.user_name ?? row.user_id,
              JSON.stringify(row.name),
              `${row.prefix}...`,
              row.roles,
              row.rate_limit ?? '-',
              when(row.created_on),
              when(row.expires_on),
              when(row.revoked_on),
              when(row.last_used_on),
            ].join('  '),
          );
        }
      }
      done(0);
    });
  command(key, 'revoke', 'revoke an API key by its id (key list shows it); every server refuses it within 5 s')
    .argument('<id>', 'the key’s id')
    .option('--backend <backend>', 'only if it is this backend’s')
    .action(async (id: string, options: { backend?: string }) => {
      if (!/^[1-9][0-9]{0,9}$/.test(id)) throw new UsageError(`a key id is a number (xmlrest key list), not ${id}`);
      const revoked = await withConnection((connection) => new KeyStore(queryableOf(connection)).revoke(Number(id), options.backend));
      if (!revoked) throw new UsageError(`no key ${id}${options.backend ? ` on ${options.backend}` : ''} that is not revoked already`);
      console.log(`revoked key ${id}; running servers refuse it within 5 s`);
      done(0);
    });

  const resource = command(xmlrest, 'resource', 'resource files');
  command(
    resource,
    'auth',
    'set who may call a resource, or one of its methods (docs/contract.md §8): rewrites its XML file and regenerates, as the console does; the file is put back when the project does not generate with the change',
  )
    .argument('<resource>', 'BACKEND/NAME, or BACKEND/NAME@VERSION (default 1.0)')
    .option('--method <method>', 'the method’s own rule, which replaces the resource’s for that method')
    .option('--roles <roles>', 'role names separated by spaces: a caller holding any one of them may call')
    .option('--any', 'any signed-in caller, whatever its roles (*)')
    .option('--public', 'no credentials needed: the resource without auth; with --method, auth="" on that method')
    .option('--inherit', 'with --method: remove the method’s own rule, so that it follows the resource’s')
    .action(async (target: string, options: ResourceAuthOptions) => {
      requireBuildTools('xmlrest resource auth');
      done(await resourceAuthCommand(target, options));
    });

  command(
    xmlrest,
    'explain',
    'may USER call METHOD PATH, and why (exit 0 allowed, 1 denied, 3 cannot tell without the password); with --claims FILE, give METHOD PATH only',
  )
    .argument('<user>', 'the user name (with --claims: the method)')
    .argument('<method>', 'GET, POST, PUT, PATCH or DELETE (with --claims: the path)')
    .argument('[path]', 'the served path without BASE_PATH, as access.lock lists it, such as /shop/v1.0/orders')
    .option('--json', 'print {"allowed", "backend", "needs", "holds", "reason"} (allowed null: cannot tell)')
    .option('--password-stdin', "read the user's password from stdin and run the backend's AuthQuery with it, as the server does")
    .option('--claims <file>', "answer for the user of an outside issuer (docs/contract.md §9): a token's payload as JSON, or the token itself")
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

  command(
    xmlrest,
    'verify-access',
    'prove that the server at BASE_URL admits and refuses as access.lock says, route by route (exit 0 all proven and agree, 1 a disagreement, 3 unproven checks, 2 cannot run or finish)',
  )
    .argument('<base-url>', 'the running server with its BASE_PATH, such as https://staging.example.com/api; it must use the database of DATABASE_URL')
    .option('--json', 'print {"checks", "disagreements", "unproven", ...} as JSON')
    .option('--lock <file>', 'the access.lock to prove', 'access.lock')
    .option('--resources <dir>', 'the resources it was written from', 'resources')
    .option(
      '--allow-unproven',
      'exit 0 with checks that cannot be proven (a backend with its own AuthQuery, identity providers, a write without parameters), when none disagrees',
    )
    .option('--insecure', 'send the temporary users’ credentials over plain http to a host other than this machine')
    .action(async (baseUrl: string, options: { json?: boolean; lock?: string; resources?: string; allowUnproven?: boolean; insecure?: boolean }) =>
      done(
        await (await import('./verify-access.js')).verifyAccessCommand(baseUrl, options, databaseUrlFromEnvironment(process.cwd()), (url) =>
          connectTo(url, { multipleStatements: false }),
        ),
      ),
    );

  // events list|retry, audit list (docs/contract.md §12): scripts/cli/events.ts.
  registerEventCommands(xmlrest, { command, withConnection, usage: (message) => new UsageError(message), done });

  command(
    xmlrest,
    'check',
    'prepare every statement of every resource against DATABASE_URL and compare with generated/column-types.json (exit 0 all match, 1 not)',
  )
    .option('--json', 'print {"ok", "statements", "problems": [{"file", "line", "col", "method", "step", "kind", "column", "was", "now", "message"}]}')
    .action(async (options: { json?: boolean }) => {
      const { checkCommand } = await import('./check.js');
      done(await checkCommand(process.cwd(), { json: options.json ?? false }));
    });

  command(xmlrest, 'doctor', 'check Node, the configuration, the database, the default tables, generated/ and the build, and say what to fix').action(
    async () => done(await (await import('./doctor.js')).doctor(process.cwd())),
  );
  return xmlrest;
}

export async function main(argv: string[]): Promise<number> {
  let code = 0;
  const xmlrest = program((result) => (code = result));
  if (argv.length === 0) {
    xmlrest.outputHelp({ error: true });
    return 2;
  }
  try {
    await xmlrest.parseAsync(argv, { from: 'user' });
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    // --help and --version end here with exit code 0; a wrong command line with commander's own 1, which is ours 2.
    return error.exitCode === 0 ? 0 : 2;
  }
  return code;
}

interface ResourceAuthOptions {
  method?: string;
  roles?: string;
  any?: boolean;
  public?: boolean;
  inherit?: boolean;
}

const RESOURCE_ARGUMENT = /^([a-z][a-z0-9_-]*)\/([a-z][a-z0-9_-]*)(?:@([0-9]+(?:\.[0-9]+)*))?$/;

/**
 * `xmlrest resource auth BACKEND/NAME[@VERSION] [--method M] (--roles "a b" | --any | --public | --inherit)`:
 * the console's set-auth from a terminal, through the same change (generator/auth-change.ts). Exit 0 done,
 * 1 when the project does not generate with it (the file is put back), 2 on a wrong command line or value.
 */
async function resourceAuthCommand(target: string, options: ResourceAuthOptions): Promise<number> {
  const parsed = RESOURCE_ARGUMENT.exec(target);
  if (!parsed) throw new UsageError(`name the resource as BACKEND/NAME or BACKEND/NAME@VERSION, not ${target}`);
  const [, backend, name, version = '1.0'] = parsed as unknown as [string, string, string, string | undefined];
  const chosen = (['roles', 'any', 'public', 'inherit'] as const).filter((option) => options[option] !== undefined);
  if (chosen.length !== 1) throw new UsageError('resource auth takes one of --roles "ROLE ...", --any, --public or --inherit');
  let method: HttpMethod | undefined;
  if (options.method !== undefined) {
    method = options.method.toUpperCase() as HttpMethod;
    if (!HTTP_METHODS.includes(method)) throw new UsageError(`--method is one of ${HTTP_METHODS.join(', ')}, not ${options.method}`);
  }
  if (options.inherit && !method) throw new UsageError('--inherit removes a method’s own rule: give --method');
  let auth: string | null;
  if (options.roles !== undefined) {
    // --roles is a list of names: with or without --method, one with no name in it is refused, never public.
    const checked = parseAuth(options.roles, 'Resource');
    if (!checked.ok) throw new UsageError(checked.message);
    auth = options.roles;
  } else if (options.any) auth = '*';
  else if (options.public) auth = method ? '' : null;
  else auth = null;

  const root = process.cwd();
  const { changeAuth, findResourceFile, regenerateProject } = await import('../../generator/index.js');
  const source = findResourceFile(root, 'resources', backend, name, version);
  if (!source) throw new UsageError(`no resource ${name} v${version} in resources/${backend}/`);
  const result = await changeAuth({
    root,
    source,
    method,
    auth,
    // Quiet: the outcome is said once below, the generator's reasons included when it refuses.
    regenerate: () => regenerateProject({ root, check: false, databaseUrl: databaseUrlFromEnvironment(root) }),
  });
  if (!result.ok) {
    if (result.reason === 'refused') {
      process.stderr.write(`xmlrest: ${result.message}\n`);
      return 1;
    }
    throw new UsageError(result.message);
  }
  const shown = (value: string | null) =>
    value === null ? (method ? 'inherits the resource’s' : 'public') : value === '' ? 'public' : value === '*' ? '* (any signed-in caller)' : value;
  console.log(
    `${source}: ${name} v${version}${method ? ` ${method}` : ''}: ${shown(result.before)} -> ${shown(result.after)}; generated/ and access.lock rewritten`,
  );
  return 0;
}

/**
 * `xmlrest explain USER METHOD PATH [--json] [--password-stdin]` (docs/contract.md §8): may USER call METHOD PATH
 * (the served path without BASE_PATH), and why. On the default tables the roles are read from them; on a backend
 * with its own AuthQuery only that query, given the password, knows them: without `--password-stdin` the answer
 * for a protected route is "cannot tell" (exit 3), never a guess; with it, the query runs as the server runs it.
 */
async function explainCommand(user: string, method: string, served: string, json: boolean, passwordStdin: boolean): Promise<number> {
  // Read first: a password that is not there is a usage error before anything is loaded.
  const password = passwordStdin ? await readPassword() : undefined;
  const { route, backend } = await routeOf(method, served);
  let answer: Explanation;
  if (password !== undefined) {
    answer = await withConnection(async (connection) => {
      const checked = await checkCredentials(connection, backend, user, password);
      if (checked.rows.length === 0 || !backend.defaultTables) return explainChecked(route, user, backend.authScheme, checked);
      // A grant past its end is deleted within moments (runtime/auth/grants.ts): it admits no more.
      const id = await userIdOf(connection, user);
      const grants = id === undefined ? undefined : await grantsOf(connection, id);
      const held = explainChecked(route, user, backend.authScheme, checked);
      return grants === undefined
        ? held
        : {
            ...explain(
              route,
              user,
              (held.holds ?? []).filter((role) => grants.roles.includes(role)),
            ),
            ends: grants.ends,
          };
    });
  } else if (!backend.defaultTables) {
    answer = cannotTell(route, user, backend.name);
  } else {
    answer = await withConnection(async (connection) => {
      const id = await userIdOf(connection, user);
      if (id === undefined) return { ...explain(route, user, null), reason: `there is no user ${user}` };
      const grants = await grantsOf(connection, id);
      return { ...explain(route, user, grants.roles), ends: grants.ends };
    });
  }
  return printExplanation(user, answer, json);
}

/** The password given on stdin (`--password-stdin`, as `docker login` takes it): its text, without the line end. */
async function readPassword(): Promise<string> {
  // A terminal would echo the password as it is typed, and wait for an end of input nobody thinks of giving.
  if (process.stdin.isTTY) {
    throw new UsageError(
      `--password-stdin reads the password from a pipe, not a terminal: printf '%s' "$PASSWORD" | xmlrest explain USER METHOD PATH --password-stdin`,
    );
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_PASSWORD_BYTES + 2) throw new UsageError(`a password has at most ${MAX_PASSWORD_BYTES} bytes`);
    chunks.push(chunk);
  }
  const password = Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
  if (password === '') throw new UsageError('--password-stdin reads the password from stdin, and stdin was empty');
  return password;
}

/**
 * The backend's AuthQuery run with these credentials exactly as the server runs it (runtime/auth/credentials.ts):
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

/** The project's backends, as generated/ serves them. */
function generatedBackends(): Promise<BackendModule[]> {
  return backendsOf(process.cwd());
}

/** The backend `xmlrest key create` names must take keys: generated/ says which do. Answers every backend. */
async function requireKeyBackend(name: string): Promise<BackendModule[]> {
  const backends = await generatedBackends();
  const backend = backends.find((candidate) => candidate.name === name);
  if (!backend) throw new UsageError(`no backend ${name} (the backends are ${backends.map((candidate) => candidate.name).join(', ')})`);
  if (!backend.apiKeys) throw new UsageError(`backend ${name} takes no API keys: add api_keys="on" to resources/${name}/backend.xml and run npm run generate`);
  return backends;
}

async function routeOf(method: string, served: string): Promise<{ route: RouteAccess; backend: BackendModule }> {
  const backends = await generatedBackends();
  const route = findRoute(routesOf(backends), method, served);
  if (!route) throw new UsageError(`no backend serves ${method.toUpperCase()} ${served} (give the path without BASE_PATH, as access.lock lists it)`);
  return { route, backend: backends.find((candidate) => candidate.name === route.backend)! };
}

/**
 * `xmlrest explain --claims FILE METHOD PATH` (docs/contract.md §9): may the user a token's claims describe
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
  return printExplanation(answer.user, answer, json);
}

function printExplanation(user: string, answer: Explanation, json: boolean): number {
  if (json) console.log(JSON.stringify({ allowed: answer.allowed, backend: answer.backend, needs: answer.needs, holds: answer.holds, reason: answer.reason }));
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
  }
  return answer.allowed === null ? 3 : answer.allowed ? 0 : 1;
}

/**
 * The whole command, its exit included: `scripts/xmlrest.mjs` (the package's bin) runs this, compiled or
 * through tsx. A wrong command line says where usage is.
 */
export function run(argv: string[], build?: { root: string; stale: readonly string[] }): void {
  // The bin has compared the build with its sources already: explain, key create and doctor need not walk dist/ again.
  if (build) knowStaleSources(build.root, build.stale);
  main(argv).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`xmlrest: ${error instanceof Error ? error.message : String(error)}\n`);
      if (error instanceof UsageError) process.stderr.write(`${HINT}\n`);
      process.exit((error as { exitCode?: number } | null)?.exitCode === 2 ? 2 : 1);
    },
  );
}

if (import.meta.url === `file://${process.argv[1]}`) run(process.argv.slice(2));
