import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Connection } from 'mysql2/promise';
import { databaseUrlFromEnvironment, generateProject } from '../../generator/index.js';
import { IssuerKeys } from '../../runtime/auth/issuer/keys.js';
import { ConfigError, loadConfig, resolveEnvironment } from '../../runtime/config.js';
import { environmentReference } from '../../runtime/contract.js';
import { errnoOf, parseDatabaseUrl } from '../../runtime/db/index.js';
import { OUTBOX_COMMIT_PROCEDURE, webhookSecretsNeeded } from '../../runtime/events/index.js';
import { type BackendModule, type IssuerAlgorithm, pagedBackends } from '../../runtime/index.js';
import { connectTo } from '../connection.js';
import { DEFAULT_TABLE_TRIGGERS } from '../default-tables.js';
import { staleSourcesOf } from '../install.js';
import { generatedBackends } from './generated-backends.js';
import { listIndexFindings } from './list-indexes.js';

/** The tables `xmlrest db init` makes, besides the default user tables: revocations, roles, audit, login counters, servers, rate limits, API keys and their secret, sessions, idempotency records. */
const OWN_TABLES = [
  'usr',
  'usr_role',
  'xmlrest_revoked_token',
  'xmlrest_revoked_user',
  'xmlrest_role',
  'xmlrest_console_audit',
  'xmlrest_login_failure',
  'xmlrest_server',
  'xmlrest_rate_limit',
  'xmlrest_api_key',
  'xmlrest_secret',
  'xmlrest_session',
  'xmlrest_refresh_used',
  'xmlrest_outbox',
  'xmlrest_webhook_stop',
  'xmlrest_api_audit',
  'xmlrest_idempotency',
];
const NODE_NEEDED = [20, 12] as const;

export interface Finding {
  ok: boolean;
  what: string;
  /** Worth knowing, yet nothing is broken: said, and not counted as a thing to fix. */
  warning?: boolean;
}

/**
 * `xmlrest doctor`: checks what a server needs, in the order it needs it,
 * and says what to fix: Node, the configuration (as `npm start` reads it),
 * the database (reachable, its version), the default tables and triggers,
 * the outbox's procedure (runtime/events/outbox.ts), whether an index serves each order of each list (scripts/cli/list-indexes.ts), whether generated/ matches
 * resources/, and whether the build is current.
 * Warns of a production setup serving the console on its public port.
 * Exit 0 when everything is fine (warnings or not), 1 otherwise.
 */
export async function doctor(root: string): Promise<number> {
  const findings: Finding[] = [];
  const say = (finding: Finding) => {
    findings.push(finding);
    process.stdout.write(`${finding.warning ? 'WARN' : finding.ok ? 'ok  ' : 'FIX '} ${finding.what}\n`);
  };

  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  const nodeOk = major > NODE_NEEDED[0] || (major === NODE_NEEDED[0] && minor >= NODE_NEEDED[1]);
  say({ ok: nodeOk, what: `Node.js ${process.versions.node}${nodeOk ? '' : `: xmlrest needs ${NODE_NEEDED.join('.')} or newer (https://nodejs.org)`}` });

  let backends: readonly BackendModule[] = [];
  const issuerUsesReferences = (issuer: BackendModule['issuers'][number]) =>
    environmentReference(issuer.iss) !== undefined || Object.values(issuer.keys).some((url: string) => environmentReference(url) !== undefined);
  try {
    backends = await generatedBackends(root);
  } catch (error) {
    say({ ok: false, what: `generated/ cannot be loaded (${(error as Error).message.split('\n')[0]}): run npm run generate` });
  }
  const bearerBackends = backends.filter((backend) => backend.authScheme === 'Bearer').map((backend) => backend.name);

  let databaseUrl: string | undefined;
  // As every xmlrest command: the environment, .env, or else the demo's database.
  databaseUrlFromEnvironment(root);
  try {
    const config = loadConfig(process.env, path.join(root, '.env'), {
      bearerBackends,
      webhookSecrets: webhookSecretsNeeded(backends),
      pagedBackends: pagedBackends(backends),
      backends,
    });
    // Checked with their `${NAME}` settings' values (docs/internals/contract.md §7); an unset one is a problem said above.
    backends = config.backends;
    databaseUrl = config.databaseUrl;
    const { sslMode } = parseDatabaseUrl(databaseUrl);
    say({
      ok: true,
      what: `configuration: DATABASE_URL set${sslMode === 'DISABLED' ? '' : ` (ssl-mode ${sslMode})`}${config.jwtSecret ? ', JWT_SECRET set' : ''}, PORT ${config.port}${config.basePath ? `, BASE_PATH ${config.basePath}` : ''}`,
    });
    // Standard Webhooks asks for a key per endpoint: every receiver holding a shared one could sign events for the others.
    const webhooksBySecret = new Map<string, number>();
    for (const { variable } of webhookSecretsNeeded(backends)) webhooksBySecret.set(variable, (webhooksBySecret.get(variable) ?? 0) + 1);
    for (const [variable, count] of webhooksBySecret) {
      if (count > 1)
        say({
          ok: true,
          warning: true,
          what: `webhook secret ${variable} signs for ${count} webhooks: give each webhook a variable of its own (each receiver that holds it could forge events for the others)`,
        });
    }
    // Read after loadConfig, which took .env into the environment.
    if (process.env.NODE_ENV === 'production' && config.console === 'on') {
      say({
        ok: true,
        warning: true,
        what: `NODE_ENV=production serves the admin console on the public port (PORT ${config.port}, CONSOLE=on by default): set CONSOLE=admin and ADMIN_PORT to a port only operators reach, or CONSOLE=off`,
      });
    }
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    for (const problem of error.problems) say({ ok: false, what: problem });
    // The issuers whose variables are set are still fetched below, whatever else is wrong.
    backends = backends.map((backend) => {
      try {
        return resolveEnvironment([backend], process.env)[0]!;
      } catch {
        return backend;
      }
    });
    // A well-formed URL among other problems can still be tried.
    if (!error.problems.some((problem) => problem.startsWith('DATABASE_URL'))) databaseUrl = process.env.DATABASE_URL;
  }

  if (databaseUrl) {
    const started = Date.now();
    try {
      const connection = await connectTo(databaseUrl);
      try {
        const [[server]] = (await connection.query('select version() as version')) as unknown as [{ version: string }[]];
        const [[cipher]] = (await connection.query(`show session status like 'Ssl_cipher'`)) as unknown as [{ Value: string }[]];
        const link = cipher?.Value ? `over TLS (${cipher.Value})` : 'unencrypted';
        say({ ok: true, what: `database: ${server?.version ?? 'unknown version'} ${link}, answered in ${Date.now() - started} ms` });
        if (backends.length === 0 || backends.some((backend) => backend.defaultTables)) {
          const [tables] = (await connection.query('select table_name as name from information_schema.tables where table_schema = database()')) as unknown as [
            { name: string }[],
          ];
          const [triggers] = (await connection.query(
            'select trigger_name as name, action_statement as body from information_schema.triggers where trigger_schema = database()',
          )) as unknown as [{ name: string; body: string | null }[]];
          const [columns] = (await connection.query(
            "select concat(table_name, '.', column_name) as name from information_schema.columns where table_schema = database() and ((table_name = 'xmlrest_role' and column_name = 'backend') or (table_name = 'usr_role' and column_name = 'expires_on') or (table_name = 'xmlrest_api_audit' and column_name = 'repeats') or (table_name = 'xmlrest_session' and column_name = 'previous_hash'))",
          )) as unknown as [{ name: string }[]];
          const present = new Set([...tables, ...triggers, ...columns].map((row) => row.name));
          // Columns later versions added (xmlrest db init adds them): roles owned by a backend, grants that end, audit repeats, sessions' rotation.
          const missing = [
            ...OWN_TABLES,
            ...Object.keys(DEFAULT_TABLE_TRIGGERS),
            'xmlrest_role.backend',
            'usr_role.expires_on',
            'xmlrest_api_audit.repeats',
            'xmlrest_session.previous_hash',
          ].filter((name) => !present.has(name));
          // A trigger of an earlier version (a password changed by SQL did not revoke tokens before) is there, but wrong.
          // MariaDB shows a trigger's body only to a user holding TRIGGER on its table: the servers' least-privilege
          // user sees the name and a null (docs/operations/database-grants.md), and cannot tell an old body from a new one.
          const hidden = triggers.filter((row) => row.name in DEFAULT_TABLE_TRIGGERS && row.body === null);
          const stale = triggers.filter(
            (row) => row.name in DEFAULT_TABLE_TRIGGERS && row.body !== null && !sameBody(row.body, DEFAULT_TABLE_TRIGGERS[row.name]!),
          );
          say(
            missing.length === 0 && stale.length === 0
              ? {
                  ok: true,
                  what: `default tables: usr, usr_role and xmlrest's own ${OWN_TABLES.length - 2} tables and ${Object.keys(DEFAULT_TABLE_TRIGGERS).length} triggers`,
                }
              : {
                  ok: false,
                  what: `default tables: ${[
                    ...(missing.length > 0 ? [`${missing.join(', ')} missing`] : []),
                    ...(stale.length > 0 ? [`${stale.map((row) => row.name).join(', ')} from an earlier version`] : []),
                  ].join('; ')}: run npx xmlrest db init`,
                },
          );
          if (hidden.length > 0)
            say({
              ok: true,
              warning: true,
              what: `default tables: this database user may not read the triggers' bodies (it lacks TRIGGER), so whether ${hidden.map((row) => row.name).join(', ')} are this version's is not checked: run xmlrest doctor as the user that runs xmlrest db init`,
            });
          if (present.has('usr_role')) say(await grantEndsFinding(connection));
          if (present.has('xmlrest_outbox')) say(await outboxProcedureFinding(connection));
        }
        // Lists (docs/internals/contract.md §11): an index for every order a page can be asked for.
        for (const finding of await listIndexFindings(root, connection)) say(finding);
      } finally {
        await connection.end();
      }
    } catch (error) {
      const detail = error as { code?: string; message?: string };
      say({
        ok: false,
        what:
          detail.code === 'HANDSHAKE_SSL_ERROR' || detail.code === 'HANDSHAKE_NO_SSL_SUPPORT'
            ? `database: TLS refused (${detail.message ?? detail.code}): check ssl-mode and ssl-ca in DATABASE_URL against the server's certificate, and that the server has TLS on`
            : `database: not reachable (${detail.code ?? detail.message ?? 'unknown error'}): is it running, and does DATABASE_URL name it (host, port, user, password, database)?`,
      });
    }
  }

  for (const backend of backends) {
    // An Issuer whose settings name a variable the configuration lacks is not fetched: the problem is said already.
    for (const issuer of backend.issuers.filter((issuer) => !issuerUsesReferences(issuer)))
      say(await issuerFinding(backend.name, new IssuerKeys(issuer, { staleSeconds: 0, refetchSeconds: 0 }, { fetched() {}, failed() {} })));
  }

  const changes: string[] = [];
  const code = await generateProject({ root, check: true, log: (line) => changes.push(line) });
  say(
    code === 0
      ? { ok: true, what: 'generated/ and access.lock match resources/' }
      : { ok: false, what: `generated/ does not match resources/ (${changes.at(-1) ?? 'see npm run generate'}): run npm run generate` },
  );

  if (existsSync(path.join(root, 'dist/scripts/serve.js'))) {
    const stale = staleSourcesOf(root);
    say(
      stale.length === 0
        ? { ok: true, what: 'the build (dist/) is current: npm start will run it' }
        : { ok: false, what: `the build is older than its sources (${stale.slice(0, 3).join(', ')}${stale.length > 3 ? ', ...' : ''}): run npm run build` },
    );
  } else {
    say({ ok: false, what: 'no build (dist/ is missing): run npm run build before npm start' });
  }

  const problems = findings.filter((finding) => !finding.ok).length;
  const warnings = findings.filter((finding) => finding.warning).length;
  const warned = `${warnings} warning${warnings === 1 ? '' : 's'} above`;
  if (problems > 0) process.stdout.write(`${problems} thing${problems === 1 ? '' : 's'} to fix${warnings > 0 ? ` (and ${warned})` : ''}\n`);
  else process.stdout.write(warnings > 0 ? `nothing to fix; ${warned}\n` : 'everything looks right\n');
  return problems === 0 ? 0 : 1;
}

/** ER_TABLEACCESS_DENIED_ERROR: the user lacks the privilege the statement needs on the table. */
const ACCESS_DENIED = 1142;

/**
 * Whether the server's database user may delete from usr_role: each server ends a grant whose time has come by
 * deleting it (runtime/auth/users/grants.ts), and that deletion is what revokes its holder's tokens and what a query of
 * the project's own that reads usr_role sees. Asked with a delete that matches no row: the privilege is checked
 * all the same, and nothing is deleted (no trigger fires).
 */
export async function grantEndsFinding(connection: Connection): Promise<Finding> {
  try {
    await connection.query('delete from usr_role where false');
    return { ok: true, what: 'grants that end: the database user may delete from usr_role, so servers end them' };
  } catch (error) {
    if (errnoOf(error) !== ACCESS_DENIED) throw error;
    return {
      ok: false,
      what: `grants that end: the database user may not delete from usr_role (${(error as Error).message}), so no server can end a grant: its holder's tokens are not revoked at its end, and a query of your own that reads usr_role keeps seeing it: GRANT DELETE ON usr_role TO the server's database user`,
    };
  }
}

/**
 * Whether `xmlrest db init` made the procedure that writes a request's event row with its COMMIT in one call. A
 * database initialised before it still works: the server inserts the row apart from its COMMIT (slower) and logs a
 * warning once. So a warning here too, not a thing to fix.
 */
export async function outboxProcedureFinding(connection: Connection): Promise<Finding> {
  const [found] = (await connection.query('select 1 from information_schema.routines where routine_schema = database() and routine_name = ?', [
    OUTBOX_COMMIT_PROCEDURE,
  ])) as unknown as [unknown[]];
  return found.length > 0
    ? { ok: true, what: `events: the procedure ${OUTBOX_COMMIT_PROCEDURE} writes a request's event with its COMMIT in one call` }
    : {
        ok: true,
        warning: true,
        what: `events: the procedure ${OUTBOX_COMMIT_PROCEDURE} is missing (this database's xmlrest db init predates it), so a request that emits an event writes it apart from its COMMIT, a round trip slower: run npx xmlrest db init`,
      };
}

/** The key type (and curve) each algorithm needs, as the server picks keys for it. */
const KEY_FOR: Record<IssuerAlgorithm, string> = {
  RS256: 'RSA',
  RS384: 'RSA',
  RS512: 'RSA',
  PS256: 'RSA',
  PS384: 'RSA',
  PS512: 'RSA',
  ES256: 'EC P-256',
  ES384: 'EC P-384',
  ES512: 'EC P-521',
  EdDSA: 'OKP Ed25519',
};

/**
 * An outside issuer (docs/internals/contract.md §9), fetched as the server fetches it: its discovery document and key
 * set answer, in time and within bounds, name the configured issuer, and hold a key for an algorithm it allows.
 */
async function issuerFinding(backend: string, keys: IssuerKeys): Promise<Finding> {
  const { iss, algorithms } = keys.settings;
  const started = Date.now();
  await keys.load();
  const problem = keys.lastProblem;
  if (problem !== undefined) return { ok: false, what: `identity provider ${iss} (backend ${backend}): ${problem}` };
  const usable = algorithms.filter((algorithm) => keys.kinds.includes(KEY_FOR[algorithm]));
  if (usable.length === 0) {
    return {
      ok: false,
      what: `identity provider ${iss} (backend ${backend}): its keys (${keys.kinds.join(', ') || 'none'}) fit none of algorithms="${algorithms.join(' ')}": name the algorithm its tokens use`,
    };
  }
  const fresh = Math.round((keys.freshUntil! - Date.now()) / 1000);
  return {
    ok: true,
    what: `identity provider ${iss} (backend ${backend}): ${keys.kinds.length} keys (${[...new Set(keys.kinds)].join(', ')}) in ${Date.now() - started} ms, kept ${fresh} s`,
  };
}

/** Whether a trigger's statement in the database is ours (`create trigger NAME <definition>`), whatever the spacing. */
function sameBody(statement: string, definition: string): boolean {
  const squeeze = (text: string) => text.replace(/\s+/g, ' ').trim();
  return squeeze(statement) === squeeze(definition.slice(definition.indexOf(' for each row ') + ' for each row '.length));
}
