import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectTo } from '../../scripts/connection.js';
import { type PrivateMariadb, startPrivateMariadb } from '../../scripts/mariadb.js';
import { createDemoDatabase } from '../../scripts/schema.js';
import { type BuiltServer, startBuiltServer } from '../support/built-server.js';
import { DEMO_WEBHOOK_ENV } from '../support/demo-webhook.js';
import { send } from '../support/http.js';

/**
 * The database link's TLS (DATABASE_URL's ssl-mode and friends), for real: a MariaDB of this file's own with a
 * certificate made here by openssl, signed by a CA made here, for 127.0.0.1 only. Its user `xmlrest` may connect
 * in plain text, so that a link that fell back to plain text would be served and seen; its user `tls_only`
 * is refused anything but TLS (REQUIRE SSL), so that a request served as it proves the link was encrypted.
 */
const exec = promisify(execFile);
const DIR = path.resolve('test/.tmp/db-tls');
// Beside the database's folder, which a fresh start empties.
const CERTS = path.resolve('test/.tmp/db-tls-certs');
const TLS_ONLY_PASSWORD = 'tls-only-pass-0123456789';
const X509_PASSWORD = 'x509-pass-0123456789';
let db: PrivateMariadb;
const servers: BuiltServer[] = [];

const file = (name: string) => path.join(CERTS, name);
function openssl(...args: string[]): void {
  execFileSync('openssl', args, { stdio: 'ignore' });
}

/** A CA, a server certificate it signs for 127.0.0.1 (not for any name), a client certificate, and an unrelated CA. */
function makeCertificates(): void {
  mkdirSync(CERTS, { recursive: true });
  const days = ['-days', '2'];
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', ...days, '-subj', '/CN=xmlrest test CA', '-keyout', file('ca.key'), '-out', file('ca.pem'));
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', ...days, '-subj', '/CN=someone else', '-keyout', file('other-ca.key'), '-out', file('other-ca.pem'));
  writeFileSync(file('server.ext'), 'subjectAltName=IP:127.0.0.1\n');
  for (const [name, subject, ext] of [
    ['server', '/CN=127.0.0.1', ['-extfile', file('server.ext')]],
    ['client', '/CN=xmlrest client', []],
  ] as const) {
    openssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', subject, '-keyout', file(`${name}.key`), '-out', file(`${name}.csr`));
    openssl(
      'x509',
      '-req',
      '-in',
      file(`${name}.csr`),
      '-CA',
      file('ca.pem'),
      '-CAkey',
      file('ca.key'),
      '-CAcreateserial',
      ...days,
      ...ext,
      '-out',
      file(`${name}.pem`),
    );
  }
}

/** DATABASE_URL for this file's MariaDB, as `user`, with these query options. */
function urlOf(user: 'xmlrest' | 'tls_only' | 'x509', options: Record<string, string>, host = '127.0.0.1'): string {
  const password = { xmlrest: db.password, tls_only: TLS_ONLY_PASSWORD, x509: X509_PASSWORD }[user];
  const query = Object.entries(options)
    .map(([name, value]) => `${name}=${encodeURIComponent(value)}`)
    .join('&');
  return `mysql://${user}:${encodeURIComponent(password)}@${host}:${db.port}/tls${query ? `?${query}` : ''}`;
}

async function serve(databaseUrl: string): Promise<BuiltServer> {
  const server = await startBuiltServer({ env: { DATABASE_URL: databaseUrl, QUERY_TIMEOUT_MS: '3000', DB_ACQUIRE_TIMEOUT_MS: '2000' } });
  servers.push(server);
  return server;
}

beforeAll(async () => {
  makeCertificates();
  db = await startPrivateMariadb({
    dir: DIR,
    fresh: true,
    database: 'tls',
    tls: { ca: file('ca.pem'), cert: file('server.pem'), key: file('server.key') },
  });
  await createDemoDatabase(db.url);
  const admin = await db.admin();
  try {
    await admin.query('create user tls_only@127.0.0.1 identified by ? require ssl', [TLS_ONLY_PASSWORD]);
    await admin.query('grant all privileges on tls.* to tls_only@127.0.0.1');
    await admin.query('create user x509@127.0.0.1 identified by ? require x509', [X509_PASSWORD]);
    await admin.query('grant all privileges on tls.* to x509@127.0.0.1');
  } finally {
    await admin.end();
  }
}, 90_000);

afterAll(async () => {
  for (const server of servers) await server.stop();
  await db?.stop();
});

/** The log line of the database fault a refused request caused. */
async function faultLogged(server: BuiltServer): Promise<Record<string, unknown>> {
  await expect.poll(() => server.logs.find((line) => line.msg === 'database fault')).toBeDefined();
  return server.logs.find((line) => line.msg === 'database fault')!;
}

async function sessionCipher(connection: mysql.Connection): Promise<string> {
  const [rows] = await connection.query(`show session status like 'Ssl_cipher'`);
  return (rows as { Value: string }[])[0]?.Value ?? '';
}

describe('the database link over TLS, against the built server', () => {
  it('serves over a link verified against ssl-ca, as a user the database refuses anything but TLS', async () => {
    // The control: this user gets nothing in plain text.
    await expect(connectTo(urlOf('tls_only', {}))).rejects.toMatchObject({ errno: 1045 });
    const server = await serve(urlOf('tls_only', { 'ssl-mode': 'VERIFY_IDENTITY', 'ssl-ca': file('ca.pem') }));
    const products = await send(`${server.url}/shop/v1.0/products`);
    expect(products.status).toBe(200);
    expect((products.json() as { products: unknown[] }).products.length).toBeGreaterThan(0);
    expect((await send(`${server.url}/readyz`)).status).toBe(200);
    expect(server.logs.find((line) => line.msg === 'listening')).toMatchObject({ databaseTls: 'VERIFY_IDENTITY' });
    // The server's own sessions are there, as the user that has no way in but TLS.
    const admin = await db.admin();
    try {
      const [rows] = await admin.query(`select count(*) as sessions from information_schema.processlist where user = 'tls_only'`);
      expect(Number((rows as { sessions: number }[])[0]!.sessions)).toBeGreaterThan(0);
    } finally {
      await admin.end();
    }
  });

  it('refuses a server whose certificate another CA signed (503, not ready, the log says why), never falling back to plain text', async () => {
    // The control: this user may connect in plain text, so a fallback would have been served.
    const plain = await connectTo(urlOf('xmlrest', {}));
    expect(await sessionCipher(plain)).toBe('');
    await plain.end();
    const server = await serve(urlOf('xmlrest', { 'ssl-mode': 'VERIFY_CA', 'ssl-ca': file('other-ca.pem') }));
    const products = await send(`${server.url}/shop/v1.0/products`);
    expect(products.status).toBe(503);
    expect(products.json()).toMatchObject({ message: 'Service unavailable', status: 503 });
    const ready = await send(`${server.url}/readyz`);
    expect([ready.status, ready.json()]).toEqual([503, { status: 'unavailable', reason: 'database fault: db_tls' }]);
    const fault = await faultLogged(server);
    expect(fault).toMatchObject({ level: 'warn', reason: 'db_tls', code: 'HANDSHAKE_SSL_ERROR' });
    expect(String(fault.error)).toMatch(/certificate/);
  });

  it('refuses ssl-mode=REQUIRED against a server without TLS, which would take plain text', async () => {
    // The run's shared MariaDB has no TLS, and takes plain text from this user.
    const server = await serve(`${inject('databaseUrl')}?ssl-mode=REQUIRED`);
    const products = await send(`${server.url}/shop/v1.0/products`);
    expect(products.status).toBe(503);
    expect((await send(`${server.url}/readyz`)).status).toBe(503);
    expect(await faultLogged(server)).toMatchObject({ reason: 'db_tls', code: 'HANDSHAKE_NO_SSL_SUPPORT', error: 'Server does not support secure connection' });
  });
});

describe('the database link over TLS, for the commands (scripts/connection.ts)', () => {
  it('REQUIRED encrypts without verifying; VERIFY_CA checks the chain but not the name; VERIFY_IDENTITY both', async () => {
    const required = await connectTo(urlOf('tls_only', { 'ssl-mode': 'REQUIRED' }));
    expect(await sessionCipher(required)).not.toBe('');
    await required.end();
    // PREFERRED is read as REQUIRED: encrypted, and never plain text behind the operator's back.
    const preferred = await connectTo(urlOf('tls_only', { ssl_mode: 'preferred' }));
    expect(await sessionCipher(preferred)).not.toBe('');
    await preferred.end();
    // The certificate is for 127.0.0.1: reached as localhost, the chain holds and the name does not.
    const byName = await connectTo(urlOf('tls_only', { 'ssl-mode': 'VERIFY_CA', 'ssl-ca': file('ca.pem') }, 'localhost'));
    expect(await sessionCipher(byName)).not.toBe('');
    await byName.end();
    await expect(connectTo(urlOf('tls_only', { 'ssl-mode': 'VERIFY_IDENTITY', 'ssl-ca': file('ca.pem') }, 'localhost'))).rejects.toMatchObject({
      code: 'HANDSHAKE_SSL_ERROR',
      message: expect.stringMatching(/localhost/),
    });
    await expect(connectTo(urlOf('tls_only', { 'ssl-mode': 'VERIFY_CA', 'ssl-ca': file('other-ca.pem') }))).rejects.toMatchObject({
      code: 'HANDSHAKE_SSL_ERROR',
    });
    // mysql2's ssl JSON: the CA given as PEM text; verifyIdentity asks for the name too.
    const json = await connectTo(urlOf('tls_only', { ssl: JSON.stringify({ ca: readFileSync(file('ca.pem'), 'utf8'), verifyIdentity: true }) }));
    expect(await sessionCipher(json)).not.toBe('');
    await json.end();
  });

  it('presents a client certificate from ssl-cert and ssl-key to a user that requires one', async () => {
    await expect(connectTo(urlOf('x509', { 'ssl-mode': 'VERIFY_CA', 'ssl-ca': file('ca.pem') }))).rejects.toMatchObject({ errno: 1045 });
    const withCertificate = await connectTo(
      urlOf('x509', { 'ssl-mode': 'VERIFY_IDENTITY', 'ssl-ca': file('ca.pem'), 'ssl-cert': file('client.pem'), 'ssl-key': file('client.key') }),
    );
    expect(await sessionCipher(withCertificate)).not.toBe('');
    await withCertificate.end();
  });

  it('xmlrest doctor says the link is encrypted, or why TLS was refused', async () => {
    const doctor = (databaseUrl: string) =>
      exec(process.execPath, ['scripts/xmlrest.mjs', 'doctor'], {
        env: { ...process.env, DATABASE_URL: databaseUrl, JWT_SECRET: 'doctor-secret-0123456789-0123456789' },
      }).then(
        ({ stdout }) => stdout,
        (error: { stdout: string }) => error.stdout,
      );
    const good = await doctor(urlOf('tls_only', { 'ssl-mode': 'VERIFY_IDENTITY', 'ssl-ca': file('ca.pem') }));
    expect(good).toMatch(/^ok {3}configuration: DATABASE_URL set \(ssl-mode VERIFY_IDENTITY\)/m);
    expect(good).toMatch(/^ok {3}database: .*MariaDB.* over TLS \(TLS_[A-Z0-9_]+\), answered in \d+ ms$/m);
    const wrong = await doctor(urlOf('xmlrest', { 'ssl-mode': 'VERIFY_CA', 'ssl-ca': file('other-ca.pem') }));
    expect(wrong).toMatch(/^FIX {2}database: TLS refused \(.*certificate.*\): check ssl-mode and ssl-ca in DATABASE_URL/m);
  }, 180_000);
});

describe('TLS options checked before anything connects', () => {
  it('npm start names every unknown or malformed option and exits 1', async () => {
    const started = await exec(process.execPath, ['dist/scripts/serve.js'], {
      env: {
        PATH: process.env.PATH ?? '',
        PORT: '0',
        JWT_SECRET: 'x'.repeat(32),
        // The demo desk webhook's settings: this test is about the database URL's options.
        ...DEMO_WEBHOOK_ENV,
        DATABASE_URL: `mysql://u:secret-pw@127.0.0.1:1/db?ssl-mode=VERIFY_SOMETIMES&ssl-ca=${file('missing.pem')}&sslmode=require&connectionLimit=lots&ssl-cert=${file('client.pem')}`,
      },
      timeout: 15_000,
    }).then(
      () => ({ code: 0, output: '' }),
      (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, output: error.stdout + error.stderr }),
    );
    expect(started.code).toBe(1);
    expect(started.output).toContain('xmlrest: cannot start: 5 problems with the configuration');
    expect(started.output).toContain(
      '  - DATABASE_URL carries an unknown option "sslmode": it takes connectionLimit, socketPath, ssl-mode, ssl-ca, ssl-cert, ssl-key, ssl',
    );
    expect(started.output).toContain('  - DATABASE_URL connectionLimit is a whole number from 1, not "lots"');
    expect(started.output).toContain('  - DATABASE_URL ssl-mode is DISABLED, PREFERRED, REQUIRED, VERIFY_CA, VERIFY_IDENTITY, not "VERIFY_SOMETIMES"');
    expect(started.output).toContain(`  - DATABASE_URL ssl-ca names a file that cannot be read: ${file('missing.pem')} (ENOENT)`);
    expect(started.output).toContain('  - DATABASE_URL ssl-cert needs ssl-key: a client certificate is the pair');
    expect(started.output).not.toContain('secret-pw');
  });
});
