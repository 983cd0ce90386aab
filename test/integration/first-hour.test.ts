import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/mariadb.js';
import { docsSection } from '../support/docs-section.js';
import { copyProject } from '../support/project-copy.js';

/**
 * A newcomer's first hour, for real, in a copy of the project: `npm run demo`
 * with its private MariaDB prints its database and calls, and every command
 * it prints works when pasted; the README's "Your first resource" runs as
 * written against the demo's database (the demo stopped with Ctrl-C and
 * started again, on the same database URL); and a demo that fails leaves no
 * database behind.
 */
const ROOT = path.resolve('test/.tmp/first-hour');
let port = 0;

beforeAll(async () => {
  copyProject(ROOT);
  symlinkSync(path.resolve('node_modules'), path.join(ROOT, 'node_modules'));
  port = await freePort();
}, 60_000);

interface Demo {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** `npm run demo` in the copy, with no DATABASE_URL: its own private MariaDB under .xmlrest/demo-db. */
function startDemo(): Demo {
  let output = '';
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: String(port) };
  const child = spawn('npm', ['run', '-s', 'demo'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

async function serving(demo: Demo): Promise<string> {
  for (let i = 0; i < 1800; i++) {
    if (demo.output().includes('xmlrest demo is serving')) return demo.output();
    if (demo.child.exitCode !== null) throw new Error(`the demo exited with code ${demo.child.exitCode}:\n${demo.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the demo did not start within 180 s:\n${demo.output()}`);
}

/** Ctrl-C, as a terminal sends it: SIGINT to the whole process group. */
async function interrupt(demo: Demo): Promise<number | null> {
  process.kill(-demo.child.pid!, 'SIGINT');
  return demo.exited;
}

/** The private MariaDB's process, when one runs for the copy. */
function databaseAlive(): boolean {
  const pidFile = path.join(ROOT, '.xmlrest/demo-db/mariadbd.pid');
  if (!existsSync(pidFile)) return false;
  try {
    process.kill(Number(readFileSync(pidFile, 'utf8').trim()), 0);
    return true;
  } catch {
    return false;
  }
}

/** Runs a script in bash in the copy, each command's output after a marker line. */
function bash(script: string): string {
  return execFileSync('bash', ['-e', '-o', 'pipefail', '-c', script], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 120_000,
  });
}

let demo: Demo;
afterAll(async () => {
  if (demo && demo.child.exitCode === null) await interrupt(demo);
});

describe('npm run demo, from a fresh copy', () => {
  let printed = '';

  it('starts its database, prints its URL, a mariadb command line and calls, and each call works as printed', async () => {
    demo = startDemo();
    printed = await serving(demo);
    const base = `http://127.0.0.1:${port}`;
    expect(printed).toContain(`xmlrest demo is serving ${base}`);
    expect(printed).toMatch(/^ {4}export DATABASE_URL='mysql:\/\/xmlrest:[^@']+@127\.0\.0\.1:\d+\/xmlrest'$/m);
    expect(printed).toContain('    mariadb --defaults-extra-file=.xmlrest/demo-db/client.cnf');
    // Every command line, in order, in one new shell (TOKEN and ADMIN are set before they are used), but for the
    // export: a second terminal in the project folder has no DATABASE_URL, and the printed commands work there.
    const commands = printed
      .split('\n')
      .filter((line) => /^ {4}(curl|TOKEN=|ADMIN=|DESK=|DESK_TOKEN=|REFRESH=|mariadb |npx )/.test(line))
      .map((line) => line.trim());
    expect(commands.length).toBeGreaterThan(15);
    expect(commands.filter((command) => command.startsWith('npx xmlrest'))).not.toHaveLength(0);
    const pasted = (command: string) => (command.startsWith('mariadb') ? `${command} < /dev/null` : command.startsWith('npx') ? `${command} 2>&1` : command);
    const script = commands.map((command, index) => `echo "@@ ${index}"\n${pasted(command)}\necho`).join('\n');
    const output = bash(script);
    const answers = output.split(/^@@ \d+$/m).slice(1);
    expect(answers).toHaveLength(commands.length);
    for (const [index, command] of commands.entries()) {
      const answer = answers[index]!;
      expect(answer, command).not.toMatch(/curl: \(\d+\)|command not found|ERROR|DATABASE_URL is not set:(?! using)/);
      const status = /# (\d{3})/.exec(command)?.[1];
      if (status) expect(answer, command).toContain(`HTTP/1.1 ${status}`);
      else if (command.startsWith('curl')) expect(answer, command).not.toMatch(/"status":(4|5)\d\d/);
      // Said once, on stderr, by the command that fell back to the demo's database.
      if (command.startsWith('npx xmlrest'))
        expect(answer, command).toContain("xmlrest: DATABASE_URL is not set: using the demo's database (.xmlrest/demo-db/url");
    }
    expect(answers[commands.indexOf('npx xmlrest explain bob GET /shop/v1.0/report')]).toContain('allowed: bob may call GET /shop/v1.0/report');
    // The desk backend's features, as printed: a session refreshed and ended, the ticket's event, the audit rows.
    const answer = (command: string) => answers[commands.findIndex((line) => line.startsWith(command))] ?? '';
    expect(answer('curl -i -H "Authorization: Bearer $DESK_TOKEN" ' + `${base}/desk/v1.0/tickets     # 200`)).toContain('RateLimit-Limit: 60');
    expect(answer('curl -d refresh_token=$REFRESH')).toMatch(/^\{"token":"eyJ[^"]+","type":"Bearer","refresh_token":"xrr_[^"]+"\}$/m);
    expect(answer('curl -X POST -H "Authorization: Bearer $DESK_TOKEN"')).toContain('{"ended":1}');
    expect(answer('npx xmlrest events list --backend desk')).toMatch(/ticket\.opened +msg_/);
    expect(answer('npx xmlrest audit list --backend desk')).toMatch(/desk +POST tickets v1\.0 +1 +- +201 /);
    // The demo's own receiver got the event, signed as the secret the demo made says (delivered after the answer).
    for (let i = 0; i < 300 && !demo.output().includes('demo: webhook received'); i++) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(demo.output()).toMatch(/demo: webhook received msg_\w+, signature verified: \{"type":"ticket\.opened",/);
  }, 240_000);

  it('runs "Your first resource" of the README as written, against its database, across a restart', async () => {
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const section = docsSection('README.md', "## Your first resource, against the demo's database", ROOT);
    const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!);
    expect(blocks).toHaveLength(3);
    // Steps 2 and 3 in one new shell, with no DATABASE_URL: the commands find the demo's database themselves.
    bash(blocks.slice(0, 2).join('\n'));
    expect(readFileSync(path.join(ROOT, 'access.lock'), 'utf8')).toContain('library /library/v1.0/loans GET reader\n');
    // Step 4: Ctrl-C, and the demo again, on the same database URL.
    await interrupt(demo);
    expect(databaseAlive()).toBe(false);
    const url = /export DATABASE_URL='([^']+)'/.exec(printed)![1];
    demo = startDemo();
    const again = await serving(demo);
    expect(/export DATABASE_URL='([^']+)'/.exec(again)![1]).toBe(url);
    // Step 5, with the demo's URL for 127.0.0.1:3000 (the port this test gave it).
    const calls = bash(blocks[2]!.replaceAll('http://127.0.0.1:3000', `http://127.0.0.1:${port}`));
    expect(calls).toContain('HTTP/1.1 403 Forbidden');
    expect(calls).toContain('{"message":"Forbidden access to resource","status":403}');
    expect(calls).toContain('{"loans":[{"loan_id":1,"title":"Dune"}]}');
    // The commands the README names in its text, each pasted into a new terminal of its own.
    expect(readme).toContain('`npx xmlrest explain rita GET /library/v1.0/loans` says why she may');
    expect(bash('npx xmlrest explain rita GET /library/v1.0/loans 2>&1')).toContain('allowed: rita may call GET /library/v1.0/loans');
    expect(readme).toContain('`npx xmlrest doctor` checks a setup');
    // Without JWT_SECRET it rightly says what to fix before `npm start`; what matters here is that it found the database.
    const doctor = bash('npx xmlrest doctor 2>&1 || true');
    expect(doctor).toContain("using the demo's database");
    expect(doctor).toMatch(/^ok {3}database: /m);
    await interrupt(demo);
    expect(databaseAlive()).toBe(false);
  }, 300_000);

  it('stops its database when it fails (here: at generate), and says why', async () => {
    writeFileSync(path.join(ROOT, 'resources/library/broken.xml'), '<Resource v="1.0"><Request method="GET">\n');
    try {
      demo = startDemo();
      const code = await demo.exited;
      expect(code).not.toBe(0);
      expect(demo.output()).toContain('resources/library/broken.xml:');
      expect(demo.output()).toContain('demo: generate failed');
      expect(demo.output()).toContain('demo: stopping the private MariaDB');
      expect(databaseAlive()).toBe(false);
    } finally {
      rmSync(path.join(ROOT, 'resources/library/broken.xml'));
    }
  }, 120_000);
});
