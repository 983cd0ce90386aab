import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectTo } from '../../scripts/connection.js';
import { DEMO_WEBHOOK_ENV } from '../support/demo-webhook.js';
import { ownDatabase } from '../support/own-database.js';

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
    const added = await xmlrest('user', 'add', 'ursula', '--password', 'e:p', '--role', 'reader', '--role', 'writer');
    expect(added.code).toBe(0);
    expect(added.stdout).toMatch(/^created user ursula \(user_id \d+\) with reader, writer\n$/);
    expect(added.stdout + added.stderr).not.toContain('e:p');
    expect(await rolesOf('ursula')).toEqual(['reader', 'writer']);
    expect((await xmlrest('role', 'grant', 'ursula', 'reader')).code).toBe(0);
    expect(await rolesOf('ursula')).toEqual(['reader', 'writer']);
    expect((await xmlrest('role', 'revoke', 'ursula', 'writer')).stdout).toBe('ursula no longer holds writer\n');
    expect(await rolesOf('ursula')).toEqual(['reader']);
    const duplicate = await xmlrest('user', 'add', 'ursula', '--password', 'x');
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

describe('xmlrest resource auth: who may call a resource or a method, written to its file as the console does (docs/internals/contract.md §8)', () => {
  const ROOT = 'test/.tmp/resource-auth';
  const file = (name: string) => readFileSync(path.join(ROOT, 'resources/shop', name), 'utf8');
  const lock = () => readFileSync(path.join(ROOT, 'access.lock'), 'utf8');
  const inProject = (...args: string[]) => xmlrestIn(ROOT, ...args);
  // Each command is a process that starts tsx and regenerates the project: seconds each on a busy machine.
  const SLOW = 300_000;
  beforeAll(async () => {
    rmSync(ROOT, { recursive: true, force: true });
    mkdirSync(path.join(ROOT, 'generated'), { recursive: true });
    cpSync('resources/shop', path.join(ROOT, 'resources/shop'), { recursive: true });
    cpSync('generated/column-types.json', path.join(ROOT, 'generated/column-types.json'));
    expect((await inProject('generate')).code).toBe(0);
  }, SLOW);
  afterAll(() => rmSync(ROOT, { recursive: true, force: true }));

  it(
    'refuses a list with no role name in it, on the resource and on a method, with exit 2 and nothing written',
    async () => {
      const before = { report: file('report.xml'), reviews: file('reviews.xml'), lock: lock() };
      for (const args of [
        ['shop/report', '--roles', ' '],
        ['shop/report', '--roles', ''],
        ['shop/report@1.0', '--method', 'GET', '--roles', '\t '],
        ['shop/reviews', '--method', 'DELETE', '--roles', ''],
      ]) {
        const refused = await inProject('resource', 'auth', ...args);
        expect(refused, args.join(' ')).toMatchObject({ code: 2, stdout: '' });
        expect(refused.stderr).toBe('xmlrest: auth holds no role name\n(run xmlrest --help, or xmlrest <command> --help, for usage)\n');
      }
      expect(await inProject('resource', 'auth', 'shop/report', '--roles', 'admin;drop')).toMatchObject({ code: 2 });
      expect({ report: file('report.xml'), reviews: file('reviews.xml'), lock: lock() }).toEqual(before);
    },
    SLOW,
  );

  it(
    'sets a list of roles, *, public, and a method’s own rule, regenerating generated/ and access.lock',
    async () => {
      const original = file('report.xml');
      const set = await inProject('resource', 'auth', 'shop/report', '--roles', 'admin  auditor admin');
      expect(set).toMatchObject({ code: 0, stdout: 'resources/shop/report.xml: report v1.0: admin -> admin auditor; generated/ and access.lock rewritten\n' });
      expect(file('report.xml')).toBe(original.replace('auth="admin"', 'auth="admin auditor"'));
      expect(lock()).toContain('shop /shop/v1.0/report GET admin auditor\n');
      expect(readFileSync(path.join(ROOT, 'generated/shop/report.ts'), 'utf8')).toContain("['admin', 'auditor']");

      expect((await inProject('resource', 'auth', 'shop/report', '--any')).code).toBe(0);
      expect(lock()).toContain('shop /shop/v1.0/report GET *\n');
      expect((await inProject('resource', 'auth', 'shop/report', '--public')).code).toBe(0);
      expect(file('report.xml')).toBe(original.replace(' auth="admin"', ''));
      expect(lock()).toContain('shop /shop/v1.0/report GET public\n');
      expect((await inProject('resource', 'auth', 'shop/report', '--roles', 'admin')).code).toBe(0);
      expect(file('report.xml')).toBe(original);

      // A method's own rule: public as auth="", then removed so that the method inherits again.
      const method = await inProject('resource', 'auth', 'shop/report', '--method', 'get', '--public');
      expect(method).toMatchObject({
        code: 0,
        stdout: 'resources/shop/report.xml: report v1.0 GET: inherits the resource’s -> public; generated/ and access.lock rewritten\n',
      });
      expect(file('report.xml')).toBe(original.replace('<Request method="GET" owner="shared">', '<Request method="GET" auth="" owner="shared">'));
      expect(lock()).toContain('shop /shop/v1.0/report GET public\n');
      expect((await inProject('resource', 'auth', 'shop/report', '--method', 'GET', '--inherit')).code).toBe(0);
      expect(file('report.xml')).toBe(original);
      expect(lock()).toContain('shop /shop/v1.0/report GET admin\n');
    },
    SLOW,
  );

  it(
    'puts the file back when the project does not generate with the change, and says why',
    async () => {
      const before = { reviews: file('reviews.xml'), lock: lock() };
      // POST binds $uid: it cannot become public.
      const refused = await inProject('resource', 'auth', 'shop/reviews', '--method', 'POST', '--public');
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(
        'xmlrest: resources/shop/reviews.xml is as it was: the project does not generate with this change: resources/shop/reviews.xml:',
      );
      expect(refused.stderr).toContain('uses $uid but POST is public');
      expect({ reviews: file('reviews.xml'), lock: lock() }).toEqual(before);
    },
    SLOW,
  );

  it.each([
    [['shop/report'], 'resource auth takes one of --roles "ROLE ...", --any, --public or --inherit'],
    [['shop/report', '--any', '--public'], 'resource auth takes one of --roles "ROLE ...", --any, --public or --inherit'],
    [['shop/report', '--inherit'], '--inherit removes a method’s own rule: give --method'],
    [['shop/report', '--method', 'DELETE', '--any'], 'resources/shop/report.xml has no DELETE Request'],
    [['shop/report', '--method', 'FETCH', '--any'], '--method is one of GET, POST, PUT, PATCH, DELETE, not FETCH'],
    [['shop/nothing', '--any'], 'no resource nothing v1.0 in resources/shop/'],
    [['shop/../report', '--any'], 'name the resource as BACKEND/NAME or BACKEND/NAME@VERSION, not shop/../report'],
  ])(
    'xmlrest resource auth %j exits 2 saying what is wrong',
    async (args, message) => {
      const wrong = await inProject('resource', 'auth', ...args);
      expect(wrong.code).toBe(2);
      expect(wrong.stderr.split('\n')[0]).toBe(`xmlrest: ${message}`);
    },
    SLOW,
  );
});

describe('the server entry (npm start): the configuration, checked first and explained', () => {
  /** The built server (npm start's entry) with exactly this environment; its exit code and what it said. */
  const serve = (env: Record<string, string>) =>
    // The demo desk webhook's settings are given: each test here is about other settings.
    exec(process.execPath, ['dist/scripts/serve.js'], { env: { PATH: process.env.PATH ?? '', PORT: '0', ...DEMO_WEBHOOK_ENV, ...env }, timeout: 60_000 }).then(
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
      expect(started.output).toContain(
        '  - JWT_SECRET is not set: backends desk and shop sign and check Bearer tokens with it, and backend crm signs the cursors of its pages with it. Make one with node -e',
      );
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

  it('warns of the outbox procedure a database initialised before it lacks, names xmlrest db init, and is content after it', async () => {
    // A database of its own: on the shared one, other files' servers would write their events apart meanwhile.
    const env = { DATABASE_URL: await ownDatabase('doctor_outbox'), JWT_SECRET: 'doctor-secret-0123456789-0123456789' };
    const connection = await connectTo(env.DATABASE_URL);
    try {
      await connection.query('drop procedure xmlrest_outbox_commit');
    } finally {
      await connection.end();
    }
    const older = await xmlrestWith(env, 'doctor');
    // Slower, not broken (the server writes the event apart from its COMMIT): a warning, exit code 0.
    expect(older.stdout).toMatch(/^WARN events: the procedure xmlrest_outbox_commit is missing \(.*\).*: run npx xmlrest db init$/m);
    expect({ code: older.code, last: older.stdout.trim().split('\n').at(-1) }).toEqual({ code: 0, last: 'nothing to fix; 1 warning above' });
    expect(await xmlrestWith(env, 'db', 'init')).toMatchObject({ code: 0 });
    const initialised = await xmlrestWith(env, 'doctor');
    expect(initialised.stdout).toMatch(/^ok {3}events: the procedure xmlrest_outbox_commit writes a request's event with its COMMIT in one call$/m);
    expect({ code: initialised.code, last: initialised.stdout.trim().split('\n').at(-1) }).toEqual({ code: 0, last: 'everything looks right' });
  });
});

/** The `xmlrest` bin run in another project folder, typed by its snapshot alone (no DATABASE_URL). */
async function xmlrestIn(cwd: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [path.resolve('scripts/xmlrest.mjs'), ...args], { cwd, env: { ...process.env, DATABASE_URL: '' } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

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
    ['resource'],
    ['resource', 'auth'],
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
    ['user add zed', 'xmlrest: give the password with exactly one of --password or --password-stdin'],
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
