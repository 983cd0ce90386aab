import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
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
 * way in (Basic, Bearer tokens of both shapes, API keys), leaves no user behind and one line of history; wrong
 * guards planted in built modules are named (a role added, a role list widened to `*`, a `*` narrowed); a server
 * built from other resources is refused before anything is sent; a 401 to credentials the server accepts is an
 * error, not a refusal, and the login limits stop the run; stopped with SIGINT, or with the server gone, it removes
 * its users all the same; and the test suites' own servers pass too (the golden access-rules backends; the lab
 * backend, whose own AuthQuery it cannot make users for, is reported unproven there: exit 3 unless
 * --allow-unproven). A database of this file's own: the users it makes come and go without other files seeing them.
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
  checks: {
    backend: string;
    method: string;
    path: string;
    role: string;
    credentials: string;
    expected: string;
    got: string;
    status: number | null;
    note?: string;
    tool?: string;
  }[];
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

/** A server of this test's own that serves the demo's OpenAPI document (as the built server does) and answers the rest as `answer` says. */
async function fakeServer(
  answer: (request: IncomingMessage, response: ServerResponse) => void,
  document = readFileSync(path.join(ROOT, 'generated/openapi.json')),
) {
  const seen: string[] = [];
  const server: Server = createServer((request, response) => {
    seen.push(`${request.method} ${request.url}`);
    if (request.url === '/openapi.json') response.end(document);
    else answer(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe('xmlrest verify-access', () => {
  it('agrees with access.lock on the demo, with every way in, leaves no user behind, and says so in the history', async () => {
    // An earlier run's history line whose users' tokens have ended: their revocation rows go; a user that exists keeps its row.
    await connection.query(
      "insert into xmlrest_console_audit (backend, actor, action, target, detail, address) values ('*', 'xmlrest command (test)', 'verify-access', 'http://earlier', 'made and removed 2 temporary users (ids 999001 999002; their tokens end by 2020-01-01T00:00:00Z); removed 1 left by an earlier run (ids 1; their tokens end by 2020-01-01T00:00:00Z)', 'command line')",
    );
    await connection.query(
      "insert into xmlrest_revoked_user (backend, sub, revoked_before) values ('*', '999001', now()), ('*', '999002', now()), ('*', '1', now()), ('*', '999003', now())",
    );
    const { code, stdout, stderr } = await verify([demo.url, '--json']).done;
    expect(code, stderr).toBe(0);
    const verdict = JSON.parse(stdout) as Verdict;
    expect(verdict.disagreements).toEqual([]);
    expect(verdict.unproven).toEqual([]);
    expect(new Set(verdict.checks.filter((check) => check.tool === undefined).map((check) => check.credentials))).toEqual(
      new Set(['none', 'Basic', 'Bearer (shape A)', 'Bearer (shape B)', 'API key']),
    );
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
    // Every user calls every backend of the default tables: the shop's customer on the staff board, refused.
    expect(verdict.checks).toContainEqual(
      expect.objectContaining({ path: '/staff/v1.0/board', method: 'GET', role: 'customer', credentials: 'Basic', expected: 'refused', got: 'refused' }),
    );
    // The user holding a role no route names: admitted by `*`, refused by every role list.
    expect(verdict.checks).toContainEqual(
      expect.objectContaining({ path: '/shop/v1.0/account', role: 'xmlrest-verify-any', credentials: 'API key', expected: 'admitted', got: 'admitted' }),
    );
    expect(verdict.checks).toContainEqual(
      expect.objectContaining({ path: '/staff/v1.0/me', role: 'xmlrest-verify-any', credentials: 'Basic', expected: 'refused', got: 'refused', status: 403 }),
    );
    // A list's filters, sort and page are optional: admitted, it answers its first page (200), not a 400 for a parameter left out.
    expect(verdict.checks).toContainEqual(
      expect.objectContaining({ path: '/shop/v2.0/orders', role: 'customer', credentials: 'API key', expected: 'admitted', got: 'admitted', status: 200 }),
    );
    expect(verdict.checks).toContainEqual(
      expect.objectContaining({ path: '/shop/v2.0/orders', role: 'staff', credentials: 'Bearer (shape A)', expected: 'refused', got: 'refused', status: 403 }),
    );
    expect(verdict.checks).toContainEqual(
      expect.objectContaining({ path: '/shop/v3.0/products', role: '(anonymous)', expected: 'admitted', got: 'admitted', status: 200 }),
    );
    // tools/list (docs/internals/contract.md §16) as every caller: each tool of the lock's routes listed exactly to
    // those the lock admits, the token request of shape B (it takes a password) no tool at all.
    const tools = verdict.checks.filter((check) => check.tool !== undefined);
    expect(tools.filter((check) => check.got === 'error')).toEqual([]);
    expect(new Set(tools.map((check) => check.credentials))).toEqual(
      new Set(['MCP, no credentials', 'MCP, Basic', 'MCP, Bearer (shape A)', 'MCP, Bearer (shape B)', 'MCP, API key']),
    );
    expect(tools).toContainEqual(
      expect.objectContaining({ tool: 'shop_report_v1_0_get', role: 'customer', credentials: 'MCP, API key', expected: 'refused', got: 'refused' }),
    );
    expect(tools).toContainEqual(
      expect.objectContaining({ tool: 'shop_report_v1_0_get', role: 'admin', credentials: 'MCP, Bearer (shape B)', expected: 'admitted', got: 'admitted' }),
    );
    expect(tools).toContainEqual(
      expect.objectContaining({
        tool: 'shop_products_v1_0_get',
        role: '(anonymous)',
        credentials: 'MCP, no credentials',
        expected: 'admitted',
        got: 'admitted',
      }),
    );
    expect(tools).toContainEqual(
      expect.objectContaining({ tool: 'staff_board_v1_0_post', role: 'customer', credentials: 'MCP, Basic', expected: 'refused', got: 'refused' }),
    );
    expect(tools.filter((check) => check.path === '/shop/v1.0/token')).toEqual([]);
    // No sign-in failed: nothing for the login limits to count.
    expect(verdict.checks.filter((check) => check.status === 401 && check.role !== '(anonymous)')).toEqual([]);
    expect(stderr).toMatch(/removed 12 temporary users \(/);
    expect(await leftovers()).toEqual([]);
    const [[keys]] = (await connection.query("select count(*) as n from xmlrest_api_key where name = 'verify-access'")) as unknown as [[{ n: number }]];
    expect(Number(keys.n)).toBe(0);
    // Nothing of the application's changed: the POSTs were refused their missing parameters.
    const [[orders]] = (await connection.query('select count(*) as n from orders')) as unknown as [[{ n: number }]];
    expect(Number(orders.n)).toBe(0);
    // One line of history for the run, under `*`: what it made, their roles, that it removed them.
    const [history] = (await connection.query(
      "select target, detail from xmlrest_console_audit where backend = '*' and action = 'verify-access' and target = ?",
      [demo.url],
    )) as unknown as [{ target: string; detail: string }[]];
    expect(history).toHaveLength(1);
    expect(history[0]!.detail).toMatch(/^made and removed 12 temporary users \(ids (?:\d+ ){11}\d+; their tokens end by \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\); /);
    expect(history[0]!.detail).toMatch(/xmlrest-verify-\w+-\d: admin, .*: crm-operator, .*: crm-user, .*: customer, .*: staff, .*: xmlrest-verify-any, /);
    // The earlier run's rows are pruned (their tokens have ended); a user that exists, and an id no run named, keep theirs.
    const [revoked] = (await connection.query(
      "select sub from xmlrest_revoked_user where backend = '*' and sub in ('999001', '999002', '1', '999003') order by sub",
    )) as unknown as [{ sub: string }[]];
    expect(revoked.map((row) => row.sub)).toEqual(['1', '999003']);
    // This run's users' rows stay until their tokens have ended.
    const ids = /\(ids ([\d ]+);/.exec(history[0]!.detail)![1]!.split(' ');
    const [own] = (await connection.query(
      `select sub from xmlrest_revoked_user where backend = '*' and sub in (${ids.map(() => '?').join(', ')})`,
      ids,
    )) as unknown as [object[]];
    expect(own).toHaveLength(12);
  }, 60_000);

  it('names a wrong guard planted in a built module: a role added, a role list widened to *, a * narrowed to roles', async () => {
    const planted = {
      'dist/generated/shop/report.js': ['await scope.authenticate(REPORT_GET_ROLES);', "await scope.authenticate(['admin', 'customer']);"],
      'dist/generated/staff/board.js': ['await scope.authenticate(BOARD_GET_ROLES);', "await scope.authenticate('*');"],
      'dist/generated/shop/account.js': ["await scope.authenticate('*');", "await scope.authenticate(['admin', 'customer']);"],
    };
    const built = new Map(Object.keys(planted).map((file) => [file, readFileSync(path.join(ROOT, file), 'utf8')]));
    for (const [file, [guard, wrong]] of Object.entries(planted)) {
      // The module still says what it said (its access, which access.lock and the console read); its guard does not.
      expect(built.get(file)).toContain(guard);
      writeFileSync(path.join(ROOT, file), built.get(file)!.replace(guard!, wrong!));
    }
    const server = await startBuiltServer({ root: ROOT, env: { DATABASE_URL: url } });
    try {
      const { code, stdout } = await verify([server.url]).done;
      expect(code).toBe(1);
      const disagreements = stdout.split('\n').filter((line) => line.startsWith('disagree:'));
      // A role added: customers read the sales report, with each credential.
      expect(stdout).toContain('disagree: shop GET /shop/v1.0/report as customer with Bearer (shape A): expected refused, got admitted (200)');
      expect(stdout).toContain('disagree: shop GET /shop/v1.0/report as customer with API key: expected refused, got admitted (200)');
      // Widened to *: the staff board admits a shop customer and a user entitled to nothing.
      expect(stdout).toContain('disagree: staff GET /staff/v1.0/board as customer with Basic: expected refused, got admitted (200)');
      expect(stdout).toContain('disagree: staff GET /staff/v1.0/board as xmlrest-verify-any with Basic: expected refused, got admitted (200)');
      // Narrowed: * refuses the staff user and the user entitled to nothing.
      expect(stdout).toContain('disagree: shop GET /shop/v1.0/account as staff with Bearer (shape B): expected admitted, got refused (403)');
      expect(stdout).toContain('disagree: shop GET /shop/v1.0/account as xmlrest-verify-any with API key: expected admitted, got refused (403)');
      // Every role each wrong guard misjudges, crm's two included (a demo user of each role calls every backend).
      expect(disagreements).toHaveLength(3 + 4 + 12);
      expect(stdout).toMatch(/19 disagree, 0 unproven/);
    } finally {
      for (const [file, text] of built) writeFileSync(path.join(ROOT, file), text);
      await server.stop();
    }
    expect(await leftovers()).toEqual([]);
  }, 60_000);

  it("names a tool tools/list shows to callers its route refuses, though every REST call agrees (a module's access widened, its guard not)", async () => {
    // What tools/list reads (the module's access, as ?for=me does) says customers may read the sales report; the
    // route's guard still refuses them: an agent is shown a tool it cannot call. The lock is right, the server wrong.
    const file = 'dist/generated/shop/report.js';
    const built = readFileSync(path.join(ROOT, file), 'utf8');
    expect(built).toContain('access: REPORT_GET_ROLES');
    writeFileSync(path.join(ROOT, file), built.replace('access: REPORT_GET_ROLES', "access: ['admin', 'customer']"));
    const server = await startBuiltServer({ root: ROOT, env: { DATABASE_URL: url } });
    try {
      const { code, stdout } = await verify([server.url]).done;
      expect(code).toBe(1);
      const disagreements = stdout.split('\n').filter((line) => line.startsWith('disagree:'));
      for (const credentials of ['Bearer (shape A)', 'Bearer (shape B)', 'API key']) {
        expect(disagreements).toContain(
          `disagree: shop tool shop_report_v1_0_get (GET /shop/v1.0/report) in tools/list as customer with MCP, ${credentials}: expected not listed, got listed`,
        );
      }
      // Only those: the REST calls of the report agree (its guard refuses customers, 403), and so does every other tool.
      expect(disagreements).toHaveLength(3);
    } finally {
      writeFileSync(path.join(ROOT, file), built);
      await server.stop();
    }
    expect(await leftovers()).toEqual([]);
  }, 90_000);

  it('names a tool listed that is the route of no line of access.lock', async () => {
    // A lock without the report's line (a server newer than the lock reviewed): admins' agents are shown its tool.
    const lock = readFileSync(path.join(ROOT, 'access.lock'), 'utf8');
    const older = path.join(ROOT, 'older.lock');
    writeFileSync(
      older,
      lock
        .split('\n')
        .filter((line) => line !== 'shop /shop/v1.0/report GET admin')
        .join('\n'),
    );
    try {
      const { code, stdout } = await verify([demo.url, '--lock', 'older.lock']).done;
      expect(code).toBe(1);
      expect(stdout).toContain(
        'disagree: shop tool shop_report_v1_0_get (POST /shop/mcp) in tools/list as admin with MCP, API key: expected not listed, got listed (listed, but it is the tool of no route of access.lock)',
      );
      expect(stdout).not.toMatch(/disagree: .* as customer/);
    } finally {
      rmSync(older, { force: true });
    }
    expect(await leftovers()).toEqual([]);
  }, 60_000);

  it('removes its users when stopped with SIGINT mid-run, and exits 130', async () => {
    // A server that answers its document, then never answers a call: the run waits mid-way, its users made.
    const hanging = await fakeServer(() => {});
    try {
      const run = verify([hanging.url]);
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
      expect(stderr).toMatch(/removed 12 temporary users/);
      expect(await leftovers()).toEqual([]);
    } finally {
      await hanging.close();
    }
  }, 60_000);

  it('exits 2 on a usage error, making no user: a wrong URL, plain http to another host without --insecure', async () => {
    const [wrong, plain] = await Promise.all([verify(['not-a-url']).done, verify(['http://staging.example.com']).done]);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain("xmlrest: BASE_URL is the server's URL with its BASE_PATH");
    expect(plain.code).toBe(2);
    expect(plain.stderr).toContain('xmlrest: BASE_URL is plain http to staging.example.com');
    expect(plain.stderr).toContain('--insecure');
    expect(await leftovers()).toEqual([]);
  });

  it('refuses a server built from other resources, sending nothing but the request for its document and making no user', async () => {
    const document = JSON.parse(readFileSync(path.join(ROOT, 'generated/openapi.json'), 'utf8')) as {
      paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: { properties: Record<string, unknown> } }> } }>>;
    };
    // Deployed from an older shop where placing an order took no product: here it takes one.
    for (const content of Object.values(document.paths['/shop/v1.0/orders']!.post!.requestBody!.content)) delete content.schema.properties.product_id;
    const older = await fakeServer((_request, response) => response.end('{}'), Buffer.from(JSON.stringify(document)));
    try {
      const { code, stderr } = await verify([older.url]).done;
      expect(code).toBe(2);
      expect(stderr).toContain(
        `the server at ${older.url} was not built from these resources (POST /shop/v1.0/orders takes (quantity) there, (product_id, quantity) in resources/)`,
      );
      expect(stderr).toContain('nothing was sent and no user made');
      expect(older.seen).toEqual(['GET /openapi.json']);
      expect(await leftovers()).toEqual([]);
    } finally {
      await older.close();
    }
  }, 60_000);

  it('takes a 401 to credentials the server accepts for an error, never for the guard refusing; the login limits stop the run (exit 2)', async () => {
    let mode: 'unauthorized' | 'limited' = 'unauthorized';
    const token = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl';
    const odd = await fakeServer((request, response) => {
      const signIn = request.method === 'POST' && (request.url === '/shop/' || request.url === '/shop/v1.0/token');
      if (mode === 'limited' && signIn) {
        response.writeHead(429, { 'content-type': 'application/json', 'retry-after': '60' });
        return void response.end('{"message":"Too many failed sign-ins","status":429}');
      }
      if (signIn) return void response.end(JSON.stringify({ token }));
      // Every other call: 401, as a server with another JWT_SECRET would answer the tokens it did not sign.
      response.writeHead(401, { 'content-type': 'application/json' });
      response.end('{"message":"Invalid token","status":401}');
    });
    try {
      const unauthorized = await verify([odd.url]).done;
      expect(unauthorized.code).toBe(1);
      // An expected refusal answered 401 is no proof of the guard: named, with what the server said.
      expect(unauthorized.stdout).toContain(
        'disagree: shop GET /shop/v1.0/report as customer with Bearer (shape A): expected refused, got 401: Invalid token: the server did not take credentials it accepts (a refusal by the role is a 403)',
      );
      expect(await leftovers()).toEqual([]);
      mode = 'limited';
      const limited = await verify([odd.url]).done;
      expect(limited.code).toBe(2);
      expect(limited.stderr).toContain(
        "xmlrest: verify-access could not finish: signing in as admin with Bearer (shape A): the server's login limits refused it",
      );
      expect(limited.stderr).toMatch(/removed 12 temporary users/);
      expect(await leftovers()).toEqual([]);
    } finally {
      await odd.close();
    }
  }, 60_000);

  it('removes its users when the run fails (the server goes away mid-run), and exits 2 saying why', async () => {
    const failing = await fakeServer((request) => request.socket.destroy());
    try {
      const { code, stderr } = await verify([failing.url]).done;
      expect(code).toBe(2);
      expect(stderr).toMatch(/removed 12 temporary users/);
      expect(stderr).toContain(`xmlrest: verify-access could not finish: the server at ${failing.url} does not answer: fetch failed`);
      expect(stderr).toContain('its temporary users are removed');
      expect(await leftovers()).toEqual([]);
    } finally {
      await failing.close();
    }
  }, 60_000);

  describe("against the test suites' own servers", () => {
    let database: Database;
    let served: RunningServer;
    beforeAll(async () => {
      database = openDatabase(url);
      // Both golden documents, as one server serving both projects' backends would serve them.
      const documents = ['test/golden/access-rules/expected/openapi.json', 'test/golden/lab/expected/openapi.json'].map(
        (file) => JSON.parse(readFileSync(file, 'utf8')) as { paths: object },
      );
      const openapi = { ...documents[0], paths: Object.assign({}, ...documents.map((document) => document.paths)) };
      const app = createReloadableApp({ backends: [...rules, ...lab], database, jwtSecret: TEST_SECRET, logger: createLogger('silent'), openapi });
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

    it('reports the routes of a backend with its own AuthQuery unproven, never passed: exit 3, or 0 with --allow-unproven', async () => {
      const golden = 'test/golden/lab';
      const args = [served.url, '--json', '--lock', `${golden}/expected/access.lock`, '--resources', `${golden}/resources`];
      const [strict, allowing] = await Promise.all([verify(args, process.cwd()).done, verify([...args, '--allow-unproven'], process.cwd()).done]);
      expect(strict.code).toBe(3);
      expect(strict.stderr).toContain('verify-access: 2 checks unproven (listed above): exit 3; give --allow-unproven to accept what cannot be proven');
      expect(allowing.code).toBe(0);
      const verdict = JSON.parse(allowing.stdout) as Verdict;
      expect(verdict.disagreements).toEqual([]);
      expect(verdict.unproven.map((check) => `${check.path} ${check.role}`).sort()).toEqual(['/lab/v1.0/whoami member', '/lab/v2.0/whoami member']);
      expect(verdict.unproven[0]!.note).toContain('its own AuthQuery');
      expect(verdict.checks).toContainEqual(expect.objectContaining({ path: '/lab/v1.0/whoami', role: '(anonymous)', expected: 'refused', got: 'refused' }));
    }, 60_000);
  });
});
