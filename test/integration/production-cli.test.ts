import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBuiltServer } from '../support/built-server.js';
import { DEMO_WEBHOOK_ENV } from '../support/demo-webhook.js';
import { ownDatabase } from '../support/own-database.js';
import { productionInstall, removeInstall } from '../support/production-install.js';
import { TEST_SECRET } from '../support/server.js';

/**
 * The whole `xmlrest` command in a production install (docs/internals/contract.md §13): the project's files in a folder
 * outside this checkout, `npm ci --omit=dev` (no tsx, no TypeScript compiler), the build made beforehand. Every command its --help lists,
 * and every subcommand, prints its usage; every command makes one real call against a real MariaDB. The list
 * of commands is read from the command's own help, so that a command added to scripts/cli/ is held to
 * both: one with no real call below fails here, by name.
 */
let ROOT = '';
let databaseUrl = '';

beforeAll(async () => {
  ROOT = productionInstall('production-cli');
  databaseUrl = await ownDatabase('production_cli');
}, 120_000);

afterAll(() => removeInstall(ROOT));

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

const xmlrest = (...args: string[]) => xmlrestIn(ROOT, ...args);

/** The install's bin, as npx runs it, in the folder `cwd`; only the environment a command needs. */
async function xmlrestIn(cwd: string, ...args: string[]): Promise<Result> {
  // With the demo desk webhook's URL and secret, as any deployment of these resources needs (doctor checks them).
  const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATABASE_URL: databaseUrl, JWT_SECRET: TEST_SECRET, ...DEMO_WEBHOOK_ENV };
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [path.join(ROOT, 'scripts/xmlrest.mjs'), ...args], { cwd, env });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** The commands a help text lists (`help` aside). */
function commandsOf(help: string): string[] {
  const section = help.split('\nCommands:\n')[1] ?? '';
  return section
    .split('\n')
    .map((line) => /^ {2}([a-z][a-z-]*)/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined && name !== 'help');
}

/**
 * One real call of each command, in order, each checked. A command whose subcommands are called is called
 * through them. Add a command's call here when you add the command.
 */
const REAL_CALLS: Record<string, (() => Promise<void>)[]> = {
  init: [
    async () => {
      // A new project beside the install, from the compiled command: its files, xmlrest at the install's version.
      const folder = mkdtempSync(path.join(tmpdir(), 'xmlrest-init-'));
      try {
        const made = await xmlrestIn(folder, 'init', '--scheme', 'Bearer');
        expect(made).toMatchObject({ code: 0, stderr: '' });
        expect(existsSync(path.join(folder, 'resources/api/token.xml'))).toBe(true);
        const version = JSON.parse(readFileSync('package.json', 'utf8')).version as string;
        expect(JSON.parse(readFileSync(path.join(folder, 'package.json'), 'utf8')).dependencies).toEqual({ xmlrest: `^${version}` });
      } finally {
        rmSync(folder, { recursive: true, force: true });
      }
    },
  ],
  dev: [
    async () => {
      // A build-time command, as generate is: it regenerates, which a production install's build would never serve.
      const refused = await xmlrest('dev');
      expect(refused).toMatchObject({ code: 2 });
      expect(refused.stderr).toContain('xmlrest dev is a build-time command, and this is a production install');
    },
  ],
  build: [
    async () => {
      // A team's build, with the TypeScript the generator brings (a dependency): it needs no build tools.
      const built = await xmlrest('build');
      expect(built).toMatchObject({ code: 0 });
      expect(built.stderr).toMatch(/^xmlrest build: \d+ modules compiled into dist\/\n$/);
    },
  ],
  start: [
    async () => {
      // What a team's npm start runs: the project in the current folder, served from its build.
      const server = await startBuiltServer({ root: ROOT, entry: 'scripts/xmlrest.mjs', args: ['start'], env: { DATABASE_URL: databaseUrl, CONSOLE: 'off' } });
      try {
        expect((await fetch(`${server.url}/shop/v1.0/products`)).status).toBe(200);
      } finally {
        await server.stop();
      }
    },
  ],
  db: [
    async () => {
      // The demo's tables: demo.sql, read beside the compiled command.
      expect(await xmlrest('db', 'init', '--demo')).toMatchObject({ code: 0, stdout: 'created usr and usr_role and the demo tables\n' });
    },
  ],
  user: [
    async () => {
      const added = await xmlrest('user', 'add', 'prod-cli-1', '--password', 'prod-cli-pass', '--role', 'customer');
      expect(added).toMatchObject({ code: 0 });
      expect(added.stdout).toMatch(/^created user prod-cli-1 \(user_id \d+\) with customer\n$/);
    },
  ],
  role: [
    async () => expect(await xmlrest('role', 'grant', 'prod-cli-1', 'reader')).toMatchObject({ code: 0, stdout: 'prod-cli-1 holds reader\n' }),
    async () => expect(await xmlrest('role', 'revoke', 'prod-cli-1', 'reader')).toMatchObject({ code: 0, stdout: 'prod-cli-1 no longer holds reader\n' }),
  ],
  token: [
    async () => {
      const revoked = await xmlrest('token', 'revoke', '--backend', 'shop', '--user', 'prod-cli-1');
      expect(revoked).toMatchObject({ code: 0 });
      expect(revoked.stdout).toContain('revoked every token of prod-cli-1 on shop');
    },
  ],
  key: [
    async () => {
      // key create reads generated/ (which backends take keys) from the build.
      const made = await xmlrest('key', 'create', '--backend', 'shop', '--user', 'prod-cli-1', '--name', 'production', '--role', 'customer');
      expect(made).toMatchObject({ code: 0 });
      expect(made.stdout).toMatch(/^xr_[A-Za-z0-9]+\n$/);
      const listed = JSON.parse((await xmlrest('key', 'list', '--user', 'prod-cli-1', '--json')).stdout) as { key_id: number; name: string }[];
      expect(listed.map((key) => key.name)).toEqual(['production']);
      expect(await xmlrest('key', 'revoke', String(listed[0]!.key_id))).toMatchObject({ code: 0 });
    },
  ],
  resource: [
    async () => {
      // A build-time command: refused, plainly, with nothing written.
      const lock = readFileSync(path.join(ROOT, 'access.lock'), 'utf8');
      const refused = await xmlrest('resource', 'auth', 'shop/report', '--roles', 'manager');
      expect(refused).toMatchObject({ code: 2 });
      expect(refused.stderr).toContain('xmlrest resource auth is a build-time command, and this is a production install');
      // The command line was right: no hint to read the usage.
      expect(refused.stderr).not.toContain('for usage');
      expect(readFileSync(path.join(ROOT, 'access.lock'), 'utf8')).toBe(lock);
    },
  ],
  generate: [
    async () => {
      // generate --check runs as doctor's "generated/ matches resources/" below.
      const refused = await xmlrest('generate');
      expect(refused).toMatchObject({ code: 2 });
      expect(refused.stderr).toContain('xmlrest generate is a build-time command, and this is a production install');
      expect(refused.stderr.split('\n')).toHaveLength(2);
    },
  ],
  explain: [
    async () => {
      // From the build's dist/generated: no TypeScript loader here.
      const explained = await xmlrest('explain', 'prod-cli-1', 'GET', '/shop/v1.0/orders');
      expect(explained).toMatchObject({ code: 0 });
      expect(explained.stdout).toContain('allowed: prod-cli-1 may call GET /shop/v1.0/orders on backend shop');
      // From a folder that is not the project: said so, not "run npm run build" about a build that is current.
      const elsewhere = await xmlrestIn(tmpdir(), 'explain', 'prod-cli-1', 'GET', '/shop/v1.0/orders');
      expect(elsewhere.code).toBe(1);
      expect(elsewhere.stderr).toBe(`xmlrest: ${tmpdir()} holds no generated/: run xmlrest in the project's folder (where resources/ and generated/ are)\n`);
    },
  ],
  'verify-access': [
    async () => {
      // The install's own server (npm start's entry) on the same database, proven against its access.lock.
      const server = await startBuiltServer({ root: ROOT, entry: 'scripts/start.mjs', env: { DATABASE_URL: databaseUrl } });
      try {
        const proven = await xmlrest('verify-access', server.url);
        expect(proven.stderr).toMatch(/verify-access: removed \d+ temporary users/);
        expect(proven.code).toBe(0);
        expect(proven.stdout).toMatch(/checks agree, 0 disagree,/);
      } finally {
        await server.stop();
      }
    },
  ],
  events: [
    async () => {
      const listed = await xmlrest('events', 'list', '--failed');
      expect(listed).toMatchObject({ code: 0, stderr: '' });
      expect(listed.stdout.split('\n')[0]).toBe('id  state  event  event id  webhook  attempts  last answer  created  next attempt');
      expect(await xmlrest('events', 'retry', '--all-failed')).toMatchObject({
        code: 0,
        stdout: '0 events due again: every server delivers them at its next poll\n',
      });
    },
  ],
  audit: [
    async () =>
      // The demo's desk tickets are audited: the rows of the calls made above (verify-access), if any.
      expect(await xmlrest('audit', 'list', '--since', '1h')).toMatchObject({
        code: 0,
        stdout: expect.stringMatching(
          /^at {2}backend {2}call {2}user {2}key {2}status {2}request id {2}from {2}parameters\n(\S.* {2}desk {2}(GET|POST) tickets v1\.0 {2}.*\n)*$/,
        ),
      }),
  ],
  check: [
    async () => {
      const checked = await xmlrest('check');
      expect(checked).toMatchObject({ code: 0 });
      expect(checked.stdout).toMatch(/^xmlrest check: all \d+ statements of \d+ resources match the database\n$/);
    },
  ],
  doctor: [
    async () => {
      const { code, stdout } = await xmlrest('doctor');
      expect(stdout).toContain('ok   the build (dist/) is current: npm start will run it');
      expect(stdout).toContain('ok   generated/ and access.lock match resources/');
      expect({ code, last: stdout.trim().split('\n').at(-1) }).toEqual({ code: 0, last: 'everything looks right' });
    },
  ],
};

describe('the xmlrest command in a production install', { timeout: 120_000 }, () => {
  it('reaches no build tools, runs the compiled command, and refuses a build older than a source it runs or reads', async () => {
    // Outside this checkout, Node finds no tsx for the install's modules (here, a folder above would lend it one).
    expect(path.relative(process.cwd(), ROOT).startsWith('..')).toBe(true);
    expect(() => createRequire(path.join(ROOT, 'scripts/xmlrest.mjs')).resolve('tsx')).toThrow(/Cannot find module 'tsx'/);
    expect(existsSync(path.join(ROOT, 'dist/scripts/cli/xmlrest.js'))).toBe(true);
    const version = await xmlrest('--version');
    expect(version).toEqual({ code: 0, stdout: `${JSON.parse(readFileSync('package.json', 'utf8')).version}\n`, stderr: '' });
    // A compiled module's source, and a file the build copies (db init --demo reads dist/'s copy), each made newer
    // than the build: with no tsx to run the sources, the command says to build, and runs nothing.
    for (const source of ['runtime/app.ts', 'scripts/demo.sql']) {
      const file = path.join(ROOT, source);
      const { atime, mtime } = statSync(file);
      utimesSync(file, atime, new Date());
      try {
        expect(await xmlrest('--version'), source).toEqual({
          code: 1,
          stdout: '',
          stderr: `xmlrest: the build is older than its sources (${source}): run \`npm run build\`\n`,
        });
      } finally {
        utimesSync(file, atime, mtime);
      }
    }
  });

  it('prints the usage of every command and subcommand', async () => {
    const top = await xmlrest('--help');
    expect(top.code).toBe(0);
    const commands = commandsOf(top.stdout);
    expect(commands).toEqual(expect.arrayContaining(['generate', 'db', 'user', 'role', 'key', 'explain', 'check', 'doctor']));
    // Each command a process of its own: the commands side by side, their subcommands side by side.
    await Promise.all(
      commands.map(async (command) => {
        const help = await xmlrest(command, '--help');
        expect(help, command).toMatchObject({ code: 0, stderr: '' });
        expect(help.stdout, command).toMatch(new RegExp(`^Usage: xmlrest ${command}`));
        await Promise.all(
          commandsOf(help.stdout).map(async (sub) => {
            const subHelp = await xmlrest(command, sub, '--help');
            expect(subHelp, `${command} ${sub}`).toMatchObject({ code: 0, stderr: '' });
            expect(subHelp.stdout, `${command} ${sub}`).toMatch(new RegExp(`^Usage: xmlrest ${command} ${sub}`));
          }),
        );
      }),
    );
  });

  it('makes one real call of every command against the database', async () => {
    const commands = commandsOf((await xmlrest('--help')).stdout);
    const uncalled = commands.filter((command) => !(command in REAL_CALLS));
    expect(uncalled, 'commands with no real call in REAL_CALLS').toEqual([]);
    for (const command of commands) for (const call of REAL_CALLS[command]!) await call();
    // Some twenty commands, each a Node process of its own, a build and a server among them: minutes on a busy machine.
  }, 300_000);
});
