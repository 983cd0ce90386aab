import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { generateProject as generate } from '../generator/index.js';
import { freePort, type PrivateMariadb, startPrivateMariadb } from './mariadb.js';
import { createDemoDatabase } from './schema.js';

/**
 * `npm run demo`: a private MariaDB (unless DATABASE_URL is set), the default
 * and demo tables, generate, build, then the compiled server in the foreground.
 */
const say = (line: string) => process.stdout.write(`demo: ${line}\n`);

try {
  process.loadEnvFile('.env');
} catch {
  // No .env: a private database and a fresh secret.
}
let privateDb: PrivateMariadb | undefined;
let databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) {
  say('starting a private MariaDB under .xmlrest/demo-db ...');
  privateDb = await startPrivateMariadb({ dir: '.xmlrest/demo-db', log: say });
  databaseUrl = privateDb.url;
}
await createDemoDatabase(databaseUrl);
say('database ready: usr, usr_role and the demo tables');

if ((await generate({ root: process.cwd(), check: false, databaseUrl, log: say })) !== 0) process.exit(1);
say('building ...');
execFileSync('npm', ['run', '-s', 'build'], { stdio: 'inherit' });

const port = process.env.PORT ? Number(process.env.PORT) : await freePort();
const host = process.env.HOST || '127.0.0.1';
// A secret made for this run only: tokens from an earlier run stop working, which a demo can afford.
const jwtSecret = process.env.JWT_SECRET || randomBytes(32).toString('base64url');
const base = `http://${host}:${port}${process.env.BASE_PATH ?? ''}`;
const server = spawn(process.execPath, ['--enable-source-maps', 'dist/scripts/serve.js'], {
  stdio: ['ignore', 'ignore', 'inherit'],
  env: { ...process.env, DATABASE_URL: databaseUrl, JWT_SECRET: jwtSecret, PORT: String(port), HOST: host, LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' },
});

for (let i = 0; i < 100; i++) {
  try {
    await fetch(`${base}/shop/v1.0/products`);
    break;
  } catch {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
process.stdout.write(`
xmlrest demo is serving ${base}  (Ctrl-C stops it and the database)

  Public:
    curl ${base}/shop/v1.0/products
    curl '${base}/shop/v2.0/products?max_price=25'
  A token (shape B), then a customer's own orders:
    TOKEN=$(curl -s -d user=alice -d pass=alice-pass ${base}/shop/v1.0/token | sed 's/.*"token":"\\([^"]*\\)".*/\\1/')
    curl -H "Authorization: Bearer $TOKEN" ${base}/shop/v1.0/orders
    curl -H "Authorization: Bearer $TOKEN" -d product_id=1 -d quantity=2 ${base}/shop/v1.0/orders
  A token with every role (shape A), then the admin report:
    curl -d auth=bearer -d userid=bob -d password=bob-pass ${base}/shop/
  HTTP Basic (staff):
    curl -u carol:carol-pass ${base}/staff/v1.0/me
    curl -u carol:carol-pass -d title=hello -d body=world ${base}/staff/v1.0/notes
  Refused:
    curl -i ${base}/shop/v1.0/orders                         # 403, no credentials
    curl -i -u dave:dave-pass ${base}/staff/v1.0/me          # 403, dave is no staff
    curl -i -u carol:wrong ${base}/staff/v1.0/me             # 401

  API reference: ${base}/_docs/   (OpenAPI document: ${base}/openapi.json)
  Admin console: ${base}/_console/   (sign in on shop as bob / bob-pass, or on staff with an admin)

  Users: alice (customer), bob (customer, admin), carol (staff), dave (guest); password: <name>-pass
`);

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  server.kill('SIGTERM');
  await new Promise((resolve) => server.once('exit', resolve));
  await privateDb?.stop();
  process.exit(0);
};
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
server.once('exit', (code) => {
  if (stopping) return;
  say(`the server stopped (exit code ${code})`);
  void privateDb?.stop().then(() => process.exit(code ?? 1));
});
