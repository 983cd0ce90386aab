import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { DEMO_DATABASE_URL_FILE, generateProject as generate } from '../generator/index.js';
import { setDemoWebhookEnv } from './demo-receiver.js';
import { freePort, type PrivateMariadb, startPrivateMariadb } from './mariadb.js';
import { createDemoDatabase } from './schema.js';

/**
 * `npm run demo`: a private MariaDB (unless DATABASE_URL is set), the default
 * and demo tables, generate, build, then the compiled server in the
 * foreground, and every call worth trying, printed so that each works when
 * pasted. The private database keeps its port and password between runs
 * (`.xmlrest/demo-db/`), so the URL it prints stays good for the commands of
 * another terminal. Whatever fails (the database, generate, build, the
 * server), the private database is stopped before the demo exits.
 */
const say = (line: string) => process.stdout.write(`demo: ${line}\n`);
const DIR = '.xmlrest/demo-db';

try {
  process.loadEnvFile('.env');
} catch {
  // No .env: a private database and a fresh secret.
}

let privateDb: PrivateMariadb | undefined;
let running: ReturnType<typeof spawn> | undefined;
let stopping = false;

/** Stops the server (when running) and the private database, then exits with `code`. */
async function finish(code: number, server?: ReturnType<typeof spawn>): Promise<void> {
  // A second Ctrl-C while stopping, or the server's exit during it, changes nothing.
  if (stopping) return;
  stopping = true;
  if (server && server.exitCode === null) {
    server.kill('SIGTERM');
    await new Promise((resolve) => server.once('exit', resolve));
  }
  if (privateDb) {
    say('stopping the private MariaDB ...');
    await privateDb.stop();
  }
  process.exit(code);
}

// Ctrl-C while the database starts, or during generate or build, stops it too.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => void finish(0, running));

try {
  let databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) {
    say(`starting a private MariaDB under ${DIR} ...`);
    privateDb = await startPrivateDatabase();
    databaseUrl = privateDb.url;
  }
  await createDemoDatabase(databaseUrl);
  say('database ready: usr, usr_role and the demo tables');

  if ((await generate({ root: process.cwd(), check: false, databaseUrl, log: say })) !== 0) throw new Error('generate failed (the errors are above)');
  say('building ...');
  try {
    execFileSync('npm', ['run', '-s', 'build'], { stdio: 'inherit' });
  } catch {
    throw new Error('npm run build failed (its errors are above)');
  }

  const port = process.env.PORT ? Number(process.env.PORT) : await preferredPort(3000);
  const host = process.env.HOST || '127.0.0.1';
  // A secret made for this run only: tokens from an earlier run stop working, which a demo can afford.
  const jwtSecret = process.env.JWT_SECRET || randomBytes(32).toString('base64url');
  const base = `http://${host}:${port}${process.env.BASE_PATH ?? ''}`;
  // The desk backend's Webhook signs with a secret and sends to a URL from the environment: the demo's own
  // receiver, which prints each delivery, unless they are set (in the environment or .env).
  await setDemoWebhookEnv(process.env, say);
  running = spawn(process.execPath, ['--enable-source-maps', 'dist/scripts/serve.js'], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      JWT_SECRET: jwtSecret,
      PORT: String(port),
      HOST: host,
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    },
  });
  const server = running;
  server.once('exit', (code) => {
    if (stopping) return;
    say(`the server stopped (exit code ${code})`);
    void finish(code || 1);
  });
  if (!(await answering(`${base}/healthz`))) throw new Error(`the server did not answer at ${base} within 10 s`);
  process.stdout.write(calls(base, databaseUrl));
} catch (error) {
  say(`${(error as Error).message}`);
  await finish(1, running);
}

/** The private database, on the port and with the password of its last run when it had one. */
async function startPrivateDatabase(): Promise<PrivateMariadb> {
  const saved = `${DIR}/connection.json`;
  const last = existsSync(saved) ? (JSON.parse(readFileSync(saved, 'utf8')) as { port: number; password: string }) : undefined;
  const port = last && (await isFree(last.port)) ? last.port : await freePort();
  const db = await startPrivateMariadb({ dir: DIR, log: say, port, password: last?.password ?? randomBytes(18).toString('base64url') });
  mkdirSync(DIR, { recursive: true });
  // Readable by this user only: they hold the password of a database bound to 127.0.0.1.
  writeFileSync(saved, JSON.stringify({ port: db.port, password: db.password }), { mode: 0o600 });
  // Every xmlrest command run in this folder with no DATABASE_URL finds it here (generator/project.ts).
  writeFileSync(DEMO_DATABASE_URL_FILE, `${db.url}\n`, { mode: 0o600 });
  writeFileSync(`${DIR}/client.cnf`, `[client]\nhost=127.0.0.1\nport=${db.port}\nuser=xmlrest\npassword=${db.password}\ndatabase=xmlrest\n`, { mode: 0o600 });
  return db;
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

async function preferredPort(port: number): Promise<number> {
  return (await isFree(port)) ? port : freePort();
}

async function answering(url: string): Promise<boolean> {
  for (let i = 0; i < 100; i++) {
    try {
      await fetch(url);
      return true;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return false;
}

/** What to try, each line a command that works as printed (test/integration/first-hour.test.ts runs them). */
function calls(base: string, databaseUrl: string): string {
  const database = privateDb
    ? `  Its database keeps its port and password between runs. npx xmlrest and npm run generate, run in this folder
  with no DATABASE_URL, use it by themselves (and say so); other tools can take its URL:
    mariadb --defaults-extra-file=${DIR}/client.cnf                 # a SQL prompt on it
    export DATABASE_URL='${databaseUrl}'
`
    : `  Its database: the one DATABASE_URL names.
`;
  return `
xmlrest demo is serving ${base}  (Ctrl-C stops it${privateDb ? ' and its database' : ''})

${database}
  Public:
    curl ${base}/shop/v1.0/products
    curl '${base}/shop/v2.0/products?max_price=25'
    curl '${base}/shop/v1.0/reviews?product_id=1'
  A token (shape B) for alice, then her own orders:
    TOKEN=$(curl -s -d user=alice -d pass=alice-pass ${base}/shop/v1.0/token | sed 's/.*"token":"\\([^"]*\\)".*/\\1/')
    curl -H "Authorization: Bearer $TOKEN" ${base}/shop/v1.0/orders
    curl -H "Authorization: Bearer $TOKEN" -d product_id=1 -d quantity=2 ${base}/shop/v1.0/orders
    curl -H "Authorization: Bearer $TOKEN" ${base}/shop/v1.0/account
  A token with every role bob holds (shape A), then the admin report:
    ADMIN=$(curl -s -d auth=bearer -d userid=bob -d password=bob-pass ${base}/shop/ | sed 's/.*"token":"\\([^"]*\\)".*/\\1/')
    curl -H "Authorization: Bearer $ADMIN" ${base}/shop/v1.0/report
  HTTP Basic (staff):
    curl -u carol:carol-pass ${base}/staff/v1.0/me
    curl -u carol:carol-pass -d title=hello -d body=world ${base}/staff/v1.0/notes
    curl -u carol:carol-pass ${base}/staff/v1.0/board
  Sessions, a webhook, audit and a rate limit (desk): alice signs in, opens a ticket, refreshes, signs out:
    DESK=$(curl -s -d user=alice -d pass=alice-pass ${base}/desk/v1.0/token)
    DESK_TOKEN=$(echo "$DESK" | sed 's/.*"token":"\\([^"]*\\)".*/\\1/')
    REFRESH=$(echo "$DESK" | sed 's/.*"refresh_token":"\\([^"]*\\)".*/\\1/')
    curl -H "Authorization: Bearer $DESK_TOKEN" -d subject=Lid -d body='The lid does not fit' ${base}/desk/v1.0/tickets
    curl -i -H "Authorization: Bearer $DESK_TOKEN" ${base}/desk/v1.0/tickets     # 200, with RateLimit-Limit: 60
    curl -d refresh_token=$REFRESH ${base}/desk/v1.0/token/refresh
    curl -X POST -H "Authorization: Bearer $DESK_TOKEN" ${base}/desk/v1.0/logout
    curl -i -H "Authorization: Bearer $DESK_TOKEN" ${base}/desk/v1.0/tickets     # 401, signed out
  The ticket's event, delivered to the demo's receiver (its line is printed here), and who called tickets:
    npx xmlrest events list --backend desk
    npx xmlrest audit list --backend desk
  Tenants (crm): organisations on one database, each seeing its own rows only; erin is of Acme, grace of Globex:
    curl -u erin:erin-pass ${base}/crm/v1.0/contacts
    curl -u grace:grace-pass ${base}/crm/v1.0/contacts
    curl -u grace:grace-pass -d contact_id=1 -d name=Taken -X PUT ${base}/crm/v1.0/contacts   # affectedRows 0: Acme's
    curl -i -u heidi:heidi-pass ${base}/crm/v1.0/contacts    # 403, heidi belongs to no organisation

  Refused:
    curl -i ${base}/shop/v1.0/orders                         # 403, no credentials
    curl -i -u dave:dave-pass ${base}/staff/v1.0/me          # 403, dave is no staff
    curl -i -u carol:wrong ${base}/staff/v1.0/me             # 401, wrong password
    curl -i -H "Authorization: Bearer $TOKEN" ${base}/shop/v1.0/report    # 403, alice is no admin

  API reference: ${base}/_docs/   (OpenAPI document: ${base}/openapi.json)
  Admin console: ${base}/_console/   (sign in as bob / bob-pass on shop or staff: he holds both console roles)
  Who may call what: access.lock; and why, here bob may read the report:
    npx xmlrest explain bob GET /shop/v1.0/report

  Users: alice (customer), bob (customer, admin, xmlrest-operator), carol (staff), dave (guest),
         erin (crm-user, crm-operator; Acme), frank (crm-user; Acme), grace (crm-user; Globex),
         heidi (crm-user; no organisation); password: <name>-pass
`;
}
