import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, createReloadableApp, type Database, listen, openDatabase, type RunningServer } from '../../runtime/index.js';
import { connectTo } from '../../scripts/connection.js';
import { backends as rules } from '../golden/access-rules/expected/index.js';
import { backends as lab } from '../golden/lab/expected/index.js';
import { type BuiltServer, startBuiltServer } from '../support/built-server.js';
import { ownDatabase } from '../support/own-database.js';
import { copyBuiltProject } from '../support/project-copy.js';
import { TEST_SECRET } from '../support/server.js';

/**
 * `xmlrest verify-access BASE_URL` (issue 30): against the demo's built server it agrees everywhere, with every
 * way in (Basic, Bearer tokens of both shapes, API keys), and leaves no user behind; a wrong guard planted in a
 * built module is named; stopped with SIGINT mid-run it removes its users all the same; and the test suites'
 * own servers pass too (the golden access-rules backends; the lab backend, whose own AuthQuery it cannot make
 * users for, is reported unproven there, never passed). A database of this file's own: the users it makes come
 * and go without other files seeing them.
 */
const ROOT = path.resolve('test/.tmp/verify-access');
let url: string;
let connection: mysql.Connection;
let demo: BuiltServer;

beforeAll(async () => {
  url = await ownDatabase('verify_access');
  connection = await connectTo(url);
  copyBuiltProject(ROOT);
  demo = await startBuiltServer({ root: ROOT, env: { DATABASE_URL: url } });
}, 120_000);

afterAll(async () => {
  await demo?.stop();
  await connection?.end();
  rmSync(ROOT, { recursive: true, force: true });
});

interface Verdict {
  checks: { backend: string; method: string; path: string; role: string; credentials: string; expected: string; got: string; note?: string }[];
  disagreements: unknown[];
  unproven: { path: string; role: string; note: string }[];
}

/** Runs the command in `cwd` (the project by default) as a process; its child for a test that signals it. */
function verify(args: string[], cwd = ROOT): { child: ChildProcess; done: Promise<{ code: number | null; stdout: string; stderr: string }> } {
  const child = spawn(process.execPath, [path.join(cwd, 'scripts/xmlrest.mjs'), 'verify-access', ...args], {
    cwd,
    env: { ...process.env, DATABASE_URL: url },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
  return { child, done };
}

const leftovers = async () =>
  ((await connection.query("select user_name from usr where user_name like 'xmlrest-verify-%'")) as unknown as [{ user_name: string }[]])[0].map(
    (row) => row.user_name,
  );

describe('xmlrest verify-access', () => {
  it('agrees with access.lock on the demo, with every way in, and leaves no user behind', async () => {
    const { code, stdout, stderr } = await verify([demo.url, '--json']).done;
    expect(code, stderr).toBe(0);
    const verdict = JSON.parse(stdout) as Verdict;
    expect(verdict.disagreements).toEqual([]);
    expect(verdict.unproven).toEqual([]);
    expect(new Set(verdict.checks.map((check) => check.credentials))).toEqual(new Set(['none', 'Basic', 'Bearer (shape A)', 'Bearer (shape B)', 'API key']));
    // Every line of the lock, as the caller with no credentials at least; a refusal and an admission of each role.
    const lock = readFileSync(path.join(ROOT, 'access.lock'), 'utf8')
      .split('\n')
      .filter((line) => line !== '' && !line.startsWith('#'));
    for (const line of lock) {
      const [backend, served, method] = line.split(' ');
      expect(
        verdict.checks.some((check) => check.backend === backend && check.path === served && check.method === method),
        line,
      ).toBe(true);
    }
    expect(verdict.checks).toContainEqual(expect.objectContaining({ path: '/shop/v1.0/report', role: 'customer', expected: 'refused', got: 'refused' }));
    expect(verdict.checks).toContainEqual(
      expect.objectContaining({ path: '/staff/v1.0/board', method: 'POST', role: 'admin', expected: 'admitted', got: 'admitted' }),
    );
    expect(verdict.checks).toContainEqual(expect.objectContaining({ role: '(no role)', expected: 'refused', got: 'refused' }));
    expect(stderr).toMatch(/removed 4 temporary users/);
    expect(await leftovers()).toEqual([]);
    const [[keys]] = (await connection.query("select count(*) as n from xmlrest_api_key where name = 'verify-access'")) as unknown as [[{ n: number }]];
    expect(Number(keys.n)).toBe(0);
    // Nothing of the application's changed: the POSTs were refused their missing parameters.
    const [[orders]] = (await connection.query('select count(*) as n from orders')) as unknown as [[{ n: number }]];
    expect(Number(orders.n)).toBe(0);
  }, 60_000);

  it('names a wrong guard planted in a built module: backend, method, path, role, expected, got', async () => {
    const module = path.join(ROOT, 'dist/generated/shop/report.js');
    const built = readFileSync(module, 'utf8');
    expect(built).toContain('await scope.authenticate(REPORT_GET_ROLES);');
    // The module still says admin (its access, which access.lock and the console read); its guard lets customers in.
    writeFileSync(module, built.replace('await scope.authenticate(REPORT_GET_ROLES);', "await scope.authenticate(['admin', 'customer']);"));
    const planted = await startBuiltServer({ root: ROOT, env: { DATABASE_URL: url } });
    try {
      const { code, stdout } = await verify([planted.url]).done;
      expect(code).toBe(1);
      expect(stdout).toContain('disagree: shop GET /shop/v1.0/report as customer with Bearer (shape A): expected refused, got admitted (200)');
      expect(stdout).toContain('disagree: shop GET /shop/v1.0/report as customer with API key: expected refused, got admitted (200)');
      expect(stdout.split('\n').filter((line) => line.startsWith('disagree:'))).toHaveLength(3);
      expect(stdout).toMatch(/3 disagree, 0 unproven/);
    } finally {
      writeFileSync(module, built);
      await planted.stop();
    }
    expect(await leftovers()).toEqual([]);
  }, 60_000);

  it('removes its users when stopped with SIGINT mid-run, and exits 130', async () => {
    // A server that answers its document, then never answers a call: the run waits mid-way, its users made.
    const hanging: Server = createServer((request, response) => {
      if (request.url === '/openapi.json') response.end('{}');
    });
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    try {
      const run = verify([`http://127.0.0.1:${(hanging.address() as AddressInfo).port}`]);
      let made = false;
      run.child.stderr!.on('data', (chunk: Buffer) => {
        if (!made && chunk.toString().includes('temporary users (')) {
          made = true;
          setTimeout(() => run.child.kill('SIGINT'), 200);
        }
      });
      const { code, stderr } = await run.done;
      expect(made, stderr).toBe(true);
      expect(code).toBe(130);
      expect(stderr).toContain('SIGINT: removing the temporary users, then stopping');
      expect(stderr).toMatch(/removed 4 temporary users/);
      expect(await leftovers()).toEqual([]);
    } finally {
      hanging.closeAllConnections();
      await new Promise((resolve) => hanging.close(resolve));
    }
  }, 60_000);

  it('exits 2 on a usage error, making no user', async () => {
    const { code, stderr } = await verify(['not-a-url']).done;
    expect(code).toBe(2);
    expect(stderr).toContain("xmlrest: BASE_URL is the server's URL with its BASE_PATH");
    expect(await leftovers()).toEqual([]);
  });

  it('removes its users when the run fails (the server goes away mid-run), and exits 2 saying why', async () => {
    const failing: Server = createServer((request, response) => {
      if (request.url === '/openapi.json') response.end('{}');
      else request.socket.destroy();
    });
    await new Promise<void>((resolve) => failing.listen(0, '127.0.0.1', resolve));
    try {
      const { code, stderr } = await verify([`http://127.0.0.1:${(failing.address() as AddressInfo).port}`]).done;
      expect(code).toBe(2);
      expect(stderr).toMatch(/removed 4 temporary users/);
      expect(stderr).toContain('xmlrest: verify-access could not finish: fetch failed');
      expect(await leftovers()).toEqual([]);
    } finally {
      await new Promise((resolve) => failing.close(resolve));
    }
  }, 60_000);

  describe("against the test suites' own servers", () => {
    let database: Database;
    let served: RunningServer;
    beforeAll(async () => {
      database = openDatabase(url);
      const app = createReloadableApp({ backends: [...rules, ...lab], database, jwtSecret: TEST_SECRET, logger: createLogger('silent') });
      served = await listen(app.app, 0, '127.0.0.1');
    });
    afterAll(async () => {
      await served?.close();
      await database?.end();
    });

    it('agrees with the access-rules golden case (several roles, *, a method’s own rule, a public method; Bearer and Basic)', async () => {
      const golden = 'test/golden/access-rules';
      const { code, stdout, stderr } = await verify(
        [served.url, '--json', '--lock', `${golden}/expected/access.lock`, '--resources', `${golden}/resources`],
        process.cwd(),
      ).done;
      expect(code, stderr).toBe(0);
      const verdict = JSON.parse(stdout) as Verdict;
      expect(verdict.disagreements).toEqual([]);
      expect(verdict.checks).toContainEqual(
        expect.objectContaining({ backend: 'desk', path: '/desk/v1.0/profile', role: 'admin', expected: 'admitted', got: 'admitted' }),
      );
      expect(await leftovers()).toEqual([]);
    }, 60_000);

    it('reports the routes of a backend with its own AuthQuery unproven beyond the call without credentials, never passed', async () => {
      const golden = 'test/golden/lab';
      const { code, stdout } = await verify(
        [served.url, '--json', '--lock', `${golden}/expected/access.lock`, '--resources', `${golden}/resources`],
        process.cwd(),
      ).done;
      expect(code).toBe(0);
      const verdict = JSON.parse(stdout) as Verdict;
      expect(verdict.disagreements).toEqual([]);
      expect(verdict.unproven.map((check) => `${check.path} ${check.role}`).sort()).toEqual(['/lab/v1.0/whoami member', '/lab/v2.0/whoami member']);
      expect(verdict.unproven[0]!.note).toContain('its own AuthQuery');
      expect(verdict.checks).toContainEqual(expect.objectContaining({ path: '/lab/v1.0/whoami', role: '(anonymous)', expected: 'refused', got: 'refused' }));
    }, 60_000);
  });
});
