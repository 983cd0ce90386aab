import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../runtime/config.js';
import { DatabaseUrlError, parseDatabaseUrl } from '../../runtime/db/index.js';

/** DATABASE_URL's options, TLS above all: what each asks of mysql2, and every option refused by name. */
const DIR = path.resolve('test/.tmp/unit-database-url');
const CA = path.join(DIR, 'ca.pem');
const KEY = path.join(DIR, 'ca.key');
const BASE = 'mysql://u:secret-pw@db.example.com:3306/app';

beforeAll(() => {
  mkdirSync(DIR, { recursive: true });
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=test CA', '-keyout', KEY, '-out', CA], {
    stdio: 'ignore',
  });
});

function problemsOf(url: string): readonly string[] {
  try {
    parseDatabaseUrl(url);
  } catch (error) {
    if (error instanceof DatabaseUrlError) return error.problems;
    throw error;
  }
  return [];
}

describe('DATABASE_URL TLS options', () => {
  it('leaves the link in plain text when the URL asks for nothing, and says so', () => {
    const parsed = parseDatabaseUrl(`${BASE}?connectionLimit=20`);
    expect(parsed.sslMode).toBe('DISABLED');
    expect(parsed.config.ssl).toBeUndefined();
    expect(parsed.config.connectionLimit).toBe(20);
  });

  it('REQUIRED encrypts without verifying; VERIFY_CA verifies the chain only; VERIFY_IDENTITY the name too', () => {
    expect(parseDatabaseUrl(`${BASE}?ssl-mode=REQUIRED`).config.ssl).toEqual({ rejectUnauthorized: false, verifyIdentity: false });
    expect(parseDatabaseUrl(`${BASE}?ssl-mode=PREFERRED`).config.ssl).toEqual({ rejectUnauthorized: false, verifyIdentity: false });
    const ca = readFileSync(CA, 'utf8');
    expect(parseDatabaseUrl(`${BASE}?ssl-mode=VERIFY_CA&ssl-ca=${CA}`).config.ssl).toEqual({ ca, rejectUnauthorized: true, verifyIdentity: false });
    const identity = parseDatabaseUrl(`${BASE}?ssl_mode=verify_identity&ssl_ca=${CA}`);
    expect(identity.sslMode).toBe('VERIFY_IDENTITY');
    expect(identity.config.ssl).toEqual({ ca, rejectUnauthorized: true, verifyIdentity: true });
    // The system's CAs when none is given; a CA alone means verify against it, as MySQL's connectors read it.
    expect(parseDatabaseUrl(`${BASE}?ssl-mode=VERIFY_CA`).config.ssl).toEqual({ rejectUnauthorized: true, verifyIdentity: false });
    expect(parseDatabaseUrl(`${BASE}?ssl-ca=${CA}`).sslMode).toBe('VERIFY_CA');
  });

  it("takes mysql2's ssl JSON, a CA as a file or as PEM text (a + in it stays a +)", () => {
    const ca = readFileSync(CA, 'utf8');
    expect(parseDatabaseUrl(`${BASE}?ssl={"rejectUnauthorized":true}`).sslMode).toBe('VERIFY_CA');
    expect(parseDatabaseUrl(`${BASE}?ssl=${encodeURIComponent(JSON.stringify({ rejectUnauthorized: false }))}`).sslMode).toBe('REQUIRED');
    const pem = parseDatabaseUrl(`${BASE}?ssl=${encodeURIComponent(JSON.stringify({ ca, verifyIdentity: true }))}`);
    expect(pem.sslMode).toBe('VERIFY_IDENTITY');
    expect(pem.config.ssl).toMatchObject({ ca, rejectUnauthorized: true, verifyIdentity: true });
    expect(parseDatabaseUrl(`${BASE}?ssl=${encodeURIComponent(JSON.stringify({ ca: CA }))}`).config.ssl).toMatchObject({ ca });
  });

  it('refuses every unknown, repeated or malformed option by name, all at once', () => {
    expect(problemsOf(`${BASE}?sslmode=require&ssl-mode=SOMETIMES&connectionLimit=0&timezone=Z`)).toEqual([
      'DATABASE_URL carries an unknown option "sslmode": it takes connectionLimit, socketPath, ssl-mode, ssl-ca, ssl-cert, ssl-key, ssl',
      'DATABASE_URL carries an unknown option "timezone": it takes connectionLimit, socketPath, ssl-mode, ssl-ca, ssl-cert, ssl-key, ssl',
      'DATABASE_URL connectionLimit is a whole number from 1, not "0"',
      'DATABASE_URL ssl-mode is DISABLED, PREFERRED, REQUIRED, VERIFY_CA, VERIFY_IDENTITY, not "SOMETIMES"',
    ]);
    expect(problemsOf(`${BASE}?ssl-mode=REQUIRED&ssl_mode=DISABLED`)).toEqual(['DATABASE_URL gives ssl-mode twice']);
    expect(problemsOf(`${BASE}?ssl-ca=${DIR}/nowhere.pem`)).toEqual([`DATABASE_URL ssl-ca names a file that cannot be read: ${DIR}/nowhere.pem (ENOENT)`]);
    expect(problemsOf(`${BASE}?ssl-mode=VERIFY_CA&ssl-ca=${KEY}`)).toEqual(['DATABASE_URL ssl-ca holds no PEM certificate (-----BEGIN CERTIFICATE-----)']);
    expect(problemsOf(`${BASE}?ssl-mode=REQUIRED&ssl-ca=${CA}`)).toEqual([
      'DATABASE_URL ssl-ca is not used when the server is not verified (ssl-mode=REQUIRED): use ssl-mode=VERIFY_CA or VERIFY_IDENTITY to check the server against it',
    ]);
    expect(problemsOf(`${BASE}?ssl-mode=DISABLED&ssl-ca=${CA}`)).toEqual(['DATABASE_URL ssl-mode=DISABLED turns TLS off: ssl-ca would not be used']);
    expect(problemsOf(`${BASE}?ssl-mode=REQUIRED&ssl-key=${KEY}`)).toEqual(['DATABASE_URL ssl-key needs ssl-cert: a client certificate is the pair']);
    expect(problemsOf(`${BASE}?ssl-mode=REQUIRED&ssl-cert=${CA}&ssl-key=${CA}`)[0]).toMatch(
      /^DATABASE_URL ssl-cert and ssl-key are not a certificate and its key \(/,
    );
    expect(problemsOf(`${BASE}?ssl=Amazon%20RDS`)).toEqual([
      'DATABASE_URL ssl is a JSON object of TLS options (ca, cert, key, rejectUnauthorized, verifyIdentity), percent-encoded',
    ]);
    expect(problemsOf(`${BASE}?ssl={"ca":"x","servername":"db"}&ssl-mode=REQUIRED`)).toEqual([
      'DATABASE_URL carries both ssl and ssl-mode: use one or the other',
      'DATABASE_URL ssl has an unknown key "servername": it takes ca, cert, key, rejectUnauthorized, verifyIdentity',
      'DATABASE_URL ssl ca names a file that cannot be read: x (ENOENT)',
    ]);
    expect(problemsOf(`${BASE}?ssl={"rejectUnauthorized":false,"verifyIdentity":true}`)).toEqual([
      'DATABASE_URL ssl verifyIdentity needs rejectUnauthorized: a name is only worth checking on a verified certificate',
    ]);
  });

  it('never repeats the password or a private key given inline', () => {
    const key = readFileSync(KEY, 'utf8');
    const problems = problemsOf(`${BASE}?ssl=${encodeURIComponent(JSON.stringify({ cert: key, key, extra: 1 }))}`);
    expect(problems.length).toBeGreaterThan(0);
    expect(problems.join('\n')).not.toContain('secret-pw');
    expect(problems.join('\n')).not.toContain(key.split('\n')[1]!);
  });

  it('is checked with the rest of the configuration, each problem on its own line', () => {
    let error: unknown;
    try {
      loadConfig({ DATABASE_URL: `${BASE}?ssl-mode=NOPE&pool=3`, PORT: 'x' }, '.env-none');
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([
      'DATABASE_URL carries an unknown option "pool": it takes connectionLimit, socketPath, ssl-mode, ssl-ca, ssl-cert, ssl-key, ssl',
      'DATABASE_URL ssl-mode is DISABLED, PREFERRED, REQUIRED, VERIFY_CA, VERIFY_IDENTITY, not "NOPE"',
      'PORT is not a port number: x',
    ]);
  });
});
