import { execFile } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { promisify } from 'node:util';
import mysql from 'mysql2/promise';
import { describe, expect, inject, it } from 'vitest';
import { connectTo } from '../../scripts/connection.js';

/** The `xmlrest` bin and `npm start`'s entry, run as processes against the run's MariaDB. */
const exec = promisify(execFile);

async function xmlrest(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, ['scripts/xmlrest.mjs', ...args], { env: { ...process.env, DATABASE_URL: inject('databaseUrl') } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

async function rolesOf(name: string): Promise<string[]> {
  const connection = await connectTo(inject('databaseUrl'));
  const [rows] = await connection.execute(
    'select r.role_name from usr_role r inner join usr u on u.user_id = r.user_id where u.user_name = ? order by r.role_name',
    [name],
  );
  await connection.end();
  return (rows as { role_name: string }[]).map((row) => row.role_name);
}

describe('xmlrest commands', () => {
  it('db init creates the default tables and is safe to run again', async () => {
    expect(await xmlrest('db', 'init')).toMatchObject({ code: 0, stdout: 'created usr and usr_role\n' });
    expect(await xmlrest('db', 'init', '--demo')).toMatchObject({ code: 0, stdout: 'created usr and usr_role and the demo tables\n' });
    const connection = await connectTo(inject('databaseUrl'));
    const [tables] = await connection.query("show tables where Tables_in_xmlrest_test in ('usr', 'usr_role', 'xmlrest_role')");
    await connection.end();
    expect((tables as Record<string, string>[]).map((row) => Object.values(row)[0]).sort()).toEqual(['usr', 'usr_role', 'xmlrest_role']);
  });

  it('user add creates a user with roles; grant is idempotent; revoke removes', async () => {
    const added = await xmlrest('user', 'add', 'erin', '--password', 'e:p', '--role', 'reader', '--role', 'writer');
    expect(added.code).toBe(0);
    expect(added.stdout).toMatch(/^created user erin \(user_id \d+\) with reader, writer\n$/);
    expect(added.stdout + added.stderr).not.toContain('e:p');
    expect(await rolesOf('erin')).toEqual(['reader', 'writer']);
    expect((await xmlrest('role', 'grant', 'erin', 'reader')).code).toBe(0);
    expect(await rolesOf('erin')).toEqual(['reader', 'writer']);
    expect((await xmlrest('role', 'revoke', 'erin', 'writer')).stdout).toBe('erin no longer holds writer\n');
    expect(await rolesOf('erin')).toEqual(['reader']);
    const duplicate = await xmlrest('user', 'add', 'erin', '--password', 'x');
    expect(duplicate.code).toBe(1);
    expect(duplicate.stderr).toContain('Duplicate entry');
  });

  it('answers a wrong command line with the error, a one-line hint and exit code 2', async () => {
    const wrong = await xmlrest('frobnicate');
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain("error: unknown command 'frobnicate'");
    expect(wrong.stderr.trim().split('\n').at(-1)).toBe('(run xmlrest --help, or xmlrest <command> --help, for usage)');
    const nobody = await xmlrest('role', 'grant', 'nobody-at-all', 'x');
    expect(nobody.code).toBe(2);
    expect(nobody.stderr).toBe('xmlrest: no such user: nobody-at-all\n(run xmlrest --help, or xmlrest <command> --help, for usage)\n');
  });
});

describe('the server entry (npm start): the configuration, checked first and explained', () => {
  /** The built server (npm start's entry) with exactly this environment; its exit code and what it said. */
  const serve = (env: Record<string, string>) =>
    exec(process.execPath, ['dist/scripts/serve.js'], { env: { PATH: process.env.PATH ?? '', PORT: '0', ...env }, timeout: 60_000 }).then(
      () => ({ code: 0, output: '' }),
      (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, output: error.stdout + error.stderr }),
    );

  it('refuses to start a Bearer backend with a secret shorter than 32 bytes, says how to make one, and never prints it', async () => {
    const secret = 'short-secret-value';
    const started = await serve({ DATABASE_URL: inject('databaseUrl'), JWT_SECRET: secret });
    expect(started.code).toBe(1);
    expect(started.output).toContain('JWT_SECRET must be at least 32 bytes long (make one with node -e');
    expect(started.output).not.toContain(secret);
  });

  it('names every problem at once, each with what to do, before it connects to anything', async () => {
    // A listener where DATABASE_URL points: the server must not even knock.
    let knocks = 0;
    const listener = createServer((socket) => {
      knocks++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    try {
      const port = (listener.address() as AddressInfo).port;
      const started = await serve({ DATABASE_URL: `mysql://u:secret-pw@127.0.0.1:${port}/db`, PORT: 'eighty', QUERY_TIMEOUT_MS: 'soon' });
      expect(started.code).toBe(1);
      expect(started.output).toContain('xmlrest: cannot start: 3 problems with the configuration (the environment, or .env):');
      expect(started.output).toContain('  - JWT_SECRET is not set: backend shop signs and checks Bearer tokens with it. Make one with node -e');
      expect(started.output).toContain('  - PORT is not a port number: eighty');
      expect(started.output).toContain('  - QUERY_TIMEOUT_MS is a whole number, not soon');
      expect(started.output).not.toContain('secret-pw');
      expect(knocks).toBe(0);
      const missing = await serve({});
      expect(missing.output).toContain('  - DATABASE_URL is not set: set it to your MySQL or MariaDB database, mysql://user:password@host:3306/database');
      const malformed = await serve({ DATABASE_URL: 'postgres://u:p@h/d', JWT_SECRET: 'x'.repeat(32) });
      expect(malformed.output).toContain('  - DATABASE_URL must start with mysql:// (the form is mysql://user:password@host:3306/database');
    } finally {
      listener.close();
    }
  });
});

describe('xmlrest doctor', () => {
  it('says everything looks right on a working setup, and exits 0', async () => {
    // exec rejects on a non-zero exit.
    const { stdout } = await exec(process.execPath, ['scripts/xmlrest.mjs', 'doctor'], {
      env: { ...process.env, DATABASE_URL: inject('databaseUrl'), JWT_SECRET: 'doctor-secret-0123456789-0123456789' },
    });
    expect(stdout).toMatch(/^ok {3}Node\.js /m);
    expect(stdout).toMatch(/^ok {3}database: .*MariaDB.*, answered in \d+ ms$/m);
    expect(stdout).toMatch(/^ok {3}default tables: usr, usr_role/m);
    expect(stdout).toContain('ok   generated/ and access.lock match resources/');
    expect(stdout).toContain('ok   the build (dist/) is current');
    expect(stdout.trim().split('\n').at(-1)).toBe('everything looks right');
  });

  it('names what to fix, and exits 1', async () => {
    const checked = await xmlrestWith({ DATABASE_URL: 'mysql://u:p@127.0.0.1:1/none', JWT_SECRET: '' }, 'doctor');
    expect(checked.code).toBe(1);
    expect(checked.stdout).toContain('FIX  JWT_SECRET is not set');
    expect(checked.stdout).toMatch(/^FIX {2}database: not reachable \(ECONNREFUSED\)/m);
    expect(checked.stdout.trim().split('\n').at(-1)).toBe('2 things to fix');
  });
});

async function xmlrestWith(env: Record<string, string>, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, ['scripts/xmlrest.mjs', ...args], { env: { ...process.env, ...env } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe('the xmlrest command line', () => {
  const COMMANDS = [
    [],
    ['generate'],
    ['db'],
    ['db', 'init'],
    ['user'],
    ['user', 'add'],
    ['role'],
    ['role', 'grant'],
    ['role', 'revoke'],
    ['token'],
    ['token', 'revoke'],
    ['explain'],
    ['doctor'],
  ];

  it.each(COMMANDS)('xmlrest %s --help prints usage to stdout and exits 0', async (...command: string[]) => {
    const { code, stdout, stderr } = await xmlrestWith({}, ...command, '--help');
    expect(code).toBe(0);
    expect(stdout).toMatch(new RegExp(`^Usage: xmlrest${command.map((word) => ` ${word}`).join('')} `));
    expect(stderr).toBe('');
  });

  it('prints its version', async () => {
    const { code, stdout } = await xmlrestWith({}, '--version');
    expect(code).toBe(0);
    expect(stdout.trim()).toMatch(/^[0-9]+\.[0-9]+\.[0-9]+$/);
  });

  it.each([
    ['generate --frobnicate', "error: unknown option '--frobnicate'"],
    ['explain bob', "error: missing required argument 'method'"],
    ['user add zed', "error: required option '--password <password>' not specified"],
    ['tokens', "error: unknown command 'tokens'"],
  ])('xmlrest %s exits 2 with the error and a one-line hint', async (args, error) => {
    const { code, stdout, stderr } = await xmlrestWith({}, ...args.split(' '));
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain(error);
    expect(stderr.trim().split('\n').at(-1)).toBe('(run xmlrest --help, or xmlrest <command> --help, for usage)');
  });

  it('npm run generate takes the same options, and refuses an unknown one', async () => {
    const wrong = await exec('npm', ['run', '-s', 'generate', '--', '--frobnicate']).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => error,
    );
    // npm passes the command's failure on (its own exit code is npm's to choose).
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toContain("error: unknown option '--frobnicate'");
  });
});
