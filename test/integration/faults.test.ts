import type { Agent } from 'node:http';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type PrivateMariadb, startPrivateMariadb } from '../../scripts/mariadb.js';
import { addUser, createDemoDatabase } from '../../scripts/schema.js';
import { type BuiltServer, startBuiltServer } from '../support/built-server.js';
import { formBody, send } from '../support/http.js';

/**
 * Database faults (docs/internals/contract.md §7), for real: a MariaDB of this file's own that the tests stop, kill,
 * pause (SIGSTOP) and start again under the built server. Every fault answers 503 with Retry-After and a JSON
 * body, never 500 and never a hang; the server recovers by itself; deadlocks and lock waits run again.
 */
const QUERY_TIMEOUT_MS = 2000;
const ACQUIRE_TIMEOUT_MS = 500;
const DIR = 'test/.tmp/faults-db';
let db: PrivateMariadb;
let server: BuiltServer;
let token = '';
/** What each fault was answered with, and how fast: printed once the file is done (the figures quoted in notes). */
const measured: string[] = [];
const slowest = (answers: { status: number; ms: number }[]) =>
  `${answers.map((answer) => answer.status).join(', ')}; slowest ${Math.max(...answers.map((answer) => answer.ms))} ms`;

async function startDatabase(fresh = false): Promise<void> {
  db = await startPrivateMariadb({
    dir: DIR,
    fresh,
    database: 'faults',
    ...(db ? { port: db.port, password: db.password } : {}),
    // Lock waits give up after a second, so that the retry of 1205 shows within a test.
    serverArgs: ['--innodb-lock-wait-timeout=1'],
  });
}

const env = (extra: Record<string, string> = {}) => ({
  DATABASE_URL: db.url,
  QUERY_TIMEOUT_MS: String(QUERY_TIMEOUT_MS),
  DB_ACQUIRE_TIMEOUT_MS: String(ACQUIRE_TIMEOUT_MS),
  ADMIN_PORT: '0',
  ...extra,
});

beforeAll(async () => {
  await startDatabase(true);
  await createDemoDatabase(db.url);
  // Orders are placed under load until the database dies: how many get through depends on the machine's speed, and
  // the demo's stock (100 cups, 5 kettles) would run out on a fast one, turning later orders into 400s.
  const connection = await mysql.createConnection({ uri: db.url });
  await connection.execute('update products set stock = 1000000');
  await connection.end();
  server = await startBuiltServer({ env: env() });
  const response = await send(`${server.url}/shop/v1.0/token`, { method: 'POST', ...formBody({ user: 'alice', pass: 'alice-pass' }) });
  token = `Bearer ${(response.json() as { token: string }).token}`;
}, 60_000);

afterAll(async () => {
  process.stdout.write(
    `faults (QUERY_TIMEOUT_MS ${QUERY_TIMEOUT_MS}, DB_ACQUIRE_TIMEOUT_MS ${ACQUIRE_TIMEOUT_MS}):\n${measured.map((line) => `  ${line}\n`).join('')}`,
  );
  await server?.stop();
  await db?.kill('SIGCONT').catch(() => undefined);
  await db?.stop();
});

/** Every test starts with the database up and the server ready. */
beforeEach(async () => {
  if (!(await alive())) await startDatabase();
  await ready(server);
}, 60_000);

async function alive(): Promise<boolean> {
  try {
    process.kill(db.pid, 0);
    const connection = await mysql.createConnection({ uri: db.url, connectTimeout: 1000 });
    await connection.end();
    return true;
  } catch {
    return false;
  }
}

async function ready(at: BuiltServer, within = 20_000): Promise<void> {
  const deadline = Date.now() + within;
  while (Date.now() < deadline) {
    if ((await send(`${at.adminUrl}/readyz`)).status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the server did not become ready');
}

/** One request, timed. */
async function timed(path: string, options: Parameters<typeof send>[1] = {}): Promise<{ status: number; ms: number; retryAfter: unknown; body: string }> {
  const started = Date.now();
  const response = await send(`${server.url}${path}`, options);
  return { status: response.status, ms: Date.now() - started, retryAfter: response.headers['retry-after'], body: response.text };
}

const order = (productId: number) => {
  const body = formBody({ product_id: String(productId), quantity: '1' });
  return timed('/shop/v1.0/orders', { method: 'POST', headers: { authorization: token, ...body.headers }, body: body.body });
};

function expectServiceUnavailable(answer: { status: number; retryAfter: unknown; body: string }): void {
  expect(answer.status).toBe(503);
  expect(answer.retryAfter).toBe('1');
  expect(JSON.parse(answer.body)).toEqual({ message: 'Service unavailable', status: 503, requestId: expect.any(String) });
}

describe('a database that is down', () => {
  it('answers 503 with Retry-After at once, says not ready, stays healthy, and recovers by itself when it returns', async () => {
    await db.stop();
    const answers = [
      await timed('/shop/v1.0/products'),
      await timed('/shop/v1.0/orders', { headers: { authorization: token } }),
      await timed('/staff/v1.0/me', { headers: { authorization: `Basic ${Buffer.from('carol:carol-pass').toString('base64')}` } }),
    ];
    for (const answer of answers) {
      expectServiceUnavailable(answer);
      expect(answer.ms).toBeLessThan(QUERY_TIMEOUT_MS + 1000);
    }
    measured.push(`database stopped (connection refused): ${slowest(answers)}`);
    expect((await send(`${server.url}/healthz`)).status).toBe(200);
    const notReady = await send(`${server.url}/readyz`);
    expect(notReady.status).toBe(503);
    expect(notReady.json()).toMatchObject({ status: 'unavailable', reason: expect.any(String) });
    await startDatabase();
    await ready(server);
    expect((await timed('/shop/v1.0/products')).status).toBe(200);
    expect((await order(2)).status).toBe(201);
  });

  it('lets the server start while the database is down, and serve once it is up', async () => {
    await db.stop();
    const late = await startBuiltServer({ env: env() });
    try {
      expect((await send(`${late.url}/healthz`)).status).toBe(200);
      expect((await send(`${late.adminUrl}/readyz`)).status).toBe(503);
      expect((await send(`${late.url}/shop/v1.0/products`)).status).toBe(503);
      await startDatabase();
      await ready(late);
      expect((await send(`${late.url}/shop/v1.0/products`)).status).toBe(200);
    } finally {
      await late.stop();
    }
  });

  it('answers 503 when the database refuses the server its user or its database, and logs why', async () => {
    const wrongPassword = new URL(db.url);
    wrongPassword.password = 'not-the-password';
    const otherDatabase = new URL(db.url);
    otherDatabase.pathname = '/no_such_database';
    for (const url of [wrongPassword, otherDatabase]) {
      const wrong = await startBuiltServer({ env: env({ DATABASE_URL: url.toString() }) });
      try {
        const started = Date.now();
        const response = await send(`${wrong.url}/shop/v1.0/products`);
        expectServiceUnavailable({ status: response.status, retryAfter: response.headers['retry-after'], body: response.text });
        expect(Date.now() - started).toBeLessThan(QUERY_TIMEOUT_MS + 1000);
        expect((await send(`${wrong.adminUrl}/readyz`)).status).toBe(503);
        // The log comes through a pipe: the answer may arrive before its line does.
        await expect
          .poll(() => wrong.logs, { timeout: 10_000 })
          .toContainEqual(expect.objectContaining({ msg: 'database fault', reason: 'db_unreachable', error: expect.stringMatching(/Access denied/) }));
        expect(wrong.logs.filter((line) => line.level === 'error' || line.level === 50)).toEqual([]);
      } finally {
        await wrong.stop();
      }
    }
  });

  it('answers 503 within the limits for a host that does not answer at all', async () => {
    // TEST-NET-1 (RFC 5737): routed nowhere, so a connection is never accepted, or refused at once.
    const nowhere = await startBuiltServer({ env: env({ DATABASE_URL: 'mysql://u:p@192.0.2.1:3306/none' }) });
    try {
      const started = Date.now();
      const answer = await send(`${nowhere.url}/shop/v1.0/products`);
      expect(answer.status).toBe(503);
      expect(Date.now() - started).toBeLessThan(QUERY_TIMEOUT_MS + 1000);
      measured.push(`unreachable host (192.0.2.1): ${answer.status} in ${Date.now() - started} ms`);
    } finally {
      await nowhere.stop();
    }
  });
});

describe('a database that dies or hangs under load', () => {
  it('gives no 500 when killed mid-load, and full service again after it restarts', async () => {
    const statuses: number[] = [];
    let next = 0;
    const load = Promise.all(
      Array.from({ length: 6 }, async () => {
        while (next++ < 300) statuses.push(next % 3 === 0 ? (await order(2)).status : (await timed('/shop/v1.0/products')).status);
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 150));
    await db.kill('SIGKILL');
    await load;
    expect(statuses.filter((status) => ![200, 201, 503].includes(status))).toEqual([]);
    expect(statuses).toContain(503);
    const counts = statuses.reduce<Record<number, number>>((all, status) => ({ ...all, [status]: (all[status] ?? 0) + 1 }), {});
    measured.push(`killed (SIGKILL) under load: ${JSON.stringify(counts)}`);
    await startDatabase();
    await ready(server);
    expect((await timed('/shop/v1.0/products')).status).toBe(200);
  });

  it('answers every request within QUERY_TIMEOUT_MS + 1 s while the database process is stopped (SIGSTOP)', async () => {
    await db.kill('SIGSTOP');
    try {
      const basic = `Basic ${Buffer.from('carol:carol-pass').toString('base64')}`;
      const answers = await Promise.all([
        timed('/shop/v1.0/products'),
        timed('/shop/v1.0/products'),
        timed('/shop/v1.0/orders', { headers: { authorization: token } }),
        order(2),
        timed('/staff/v1.0/me', { headers: { authorization: basic } }),
        timed('/shop/', { method: 'POST', ...formBody({ auth: 'bearer', userid: 'bob', password: 'bob-pass' }) }),
      ]);
      for (const answer of answers) {
        expectServiceUnavailable(answer);
        expect(answer.ms).toBeLessThanOrEqual(QUERY_TIMEOUT_MS + 1000);
      }
      measured.push(`stopped (SIGSTOP), six kinds of request at once: ${slowest(answers)}`);
      const started = Date.now();
      expect((await send(`${server.adminUrl}/readyz`)).status).toBe(503);
      expect(Date.now() - started).toBeLessThan(1500);
      expect((await send(`${server.url}/healthz`)).status).toBe(200);
    } finally {
      await db.kill('SIGCONT');
    }
    await ready(server);
    expect((await timed('/shop/v1.0/products')).status).toBe(200);
  }, 60_000);
});

describe('a busy database', () => {
  /** Holds a lock on a product row from the test's own connection until `release` is called. */
  async function lockProduct(productId: number): Promise<{ release(): Promise<void> }> {
    const connection = await mysql.createConnection(db.url);
    await connection.query('start transaction');
    await connection.execute('select * from products where product_id = ? for update', [productId]);
    return {
      release: async () => {
        await connection.query('rollback');
        await connection.end();
      },
    };
  }

  it('answers 503 when no pooled connection frees up within DB_ACQUIRE_TIMEOUT_MS', async () => {
    const single = await startBuiltServer({ env: env({ DATABASE_URL: `${db.url}?connectionLimit=1` }) });
    const lock = await lockProduct(3);
    try {
      const body = formBody({ product_id: '3', quantity: '1' });
      // Holds the pool's one connection, waiting for the lock.
      const waiting = send(`${single.url}/shop/v1.0/orders`, { method: 'POST', headers: { authorization: token, ...body.headers }, body: body.body });
      await new Promise((resolve) => setTimeout(resolve, 200));
      const started = Date.now();
      const answer = await send(`${single.url}/shop/v1.0/products`);
      measured.push(`pool exhausted (one connection, held): ${answer.status} in ${Date.now() - started} ms`);
      expect(answer.status).toBe(503);
      expect(answer.headers['retry-after']).toBe('1');
      expect(Date.now() - started).toBeGreaterThanOrEqual(ACQUIRE_TIMEOUT_MS - 50);
      expect(Date.now() - started).toBeLessThan(ACQUIRE_TIMEOUT_MS + 1000);
      await lock.release();
      expect((await waiting).status).toBe(201);
    } finally {
      await lock.release().catch(() => undefined);
      await single.stop();
    }
  });

  it('runs a transaction again after a lock wait timeout (1205), and answers once the lock is gone', async () => {
    const lock = await lockProduct(1);
    setTimeout(() => void lock.release(), 1500);
    const answer = await order(1);
    expect(answer.status).toBe(201);
    await expect
      .poll(() => server.logs.some((line) => line.msg === 'database operation run again' && line.reason === 'db_conflict'), { timeout: 10_000 })
      .toBe(true);
  });

  it('answers 503 within QUERY_TIMEOUT_MS + 1 s when the lock outlasts every try', async () => {
    const lock = await lockProduct(1);
    try {
      const answer = await order(1);
      expectServiceUnavailable(answer);
      expect(answer.ms).toBeLessThanOrEqual(QUERY_TIMEOUT_MS + 1000);
      measured.push(`lock held past every try (1205 x4): ${answer.status} in ${answer.ms} ms`);
    } finally {
      await lock.release();
    }
  });

  it('runs a transaction again when the database chose it as a deadlock victim (1213)', async () => {
    // The test's transaction changes three rows, then locks alice's user row; the server's order for alice
    // locks a product, then waits for alice's row (the foreign key); the test then waits for that product:
    // a deadlock, whose victim is the transaction that changed fewer rows, the server's.
    const connection = await mysql.createConnection(db.url);
    const bob = await addUser(connection, `deadlock-${Date.now()}`, 'deadlock-pass', ['customer']);
    await connection.query('start transaction');
    for (let i = 0; i < 3; i++) await connection.execute('insert into orders (user_id, product_id, quantity) values (?, 2, 1)', [bob]);
    await connection.execute('select * from usr where user_id = 1 for update');
    const placing = order(2);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const before = server.logs.length;
    await connection.execute('update products set stock = stock where product_id = 2').catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await connection.query('commit');
    await connection.end();
    const answer = await placing;
    expect(answer.status).toBe(201);
    await expect
      .poll(() => server.logs.slice(before).some((line) => line.msg === 'database operation run again' && line.reason === 'db_conflict'), { timeout: 10_000 })
      .toBe(true);
  });
});

describe('a full database', () => {
  it('answers a write the database refuses for want of space with 503 and Retry-After, keeps serving reads, and writes again once there is room', async () => {
    // InnoDB on a full disk answers 1114 "The table is full"; a disk cannot be filled here, so the database is made
    // to answer that very error from a trigger on the write's table (SIGNAL with the errno), as the driver sees it.
    const connection = await mysql.createConnection(db.url);
    await connection.query(
      "create trigger orders_full before insert on orders for each row signal sqlstate 'HY000' set mysql_errno = 1114, message_text = 'The table ''orders'' is full'",
    );
    try {
      const before = server.logs.length;
      const refused = await order(1);
      measured.push(`a full table (1114): ${refused.status} in ${refused.ms} ms`);
      expectServiceUnavailable(refused);
      await expect
        .poll(
          () =>
            server.logs
              .slice(before)
              .filter((line) => line.reason === 'db_full')
              .map((line) => line.msg),
          { timeout: 5000 },
        )
        .not.toEqual([]);
      expect((await timed('/shop/v1.0/products')).status).toBe(200);
    } finally {
      await connection.query('drop trigger if exists orders_full');
      await connection.end();
    }
    expect((await order(1)).status).toBe(201);
  });
});

describe('graceful shutdown', () => {
  it('stops taking requests, finishes every one in flight, closes idle connections, and exits 0', async () => {
    const stopping = await startBuiltServer({ env: env({ SHUTDOWN_TIMEOUT_MS: '8000' }) });
    const connection = await mysql.createConnection(db.url);
    await connection.query('start transaction');
    await connection.execute('select * from products where product_id = 2 for update');
    try {
      const place = () => {
        const body = formBody({ product_id: '2', quantity: '1' });
        return send(`${stopping.url}/shop/v1.0/orders`, { method: 'POST', headers: { authorization: token, ...body.headers }, body: body.body });
      };
      const inFlight = [place(), place(), place()];
      // An idle keep-alive connection, open before the signal.
      const { Agent: HttpAgent } = await import('node:http');
      const agent: Agent = new HttpAgent({ keepAlive: true, maxSockets: 1 });
      expect((await send(`${stopping.url}/shop/v1.0/products`, { agent })).status).toBe(200);
      const idle = [...Object.values(agent.freeSockets).flat()][0]!;
      const idleClosed = new Promise((resolve) => idle.once('close', resolve));
      await new Promise((resolve) => setTimeout(resolve, 300));
      const signalled = Date.now();
      process.kill(stopping.pid, 'SIGTERM');
      await idleClosed;
      const notReady = await send(`${stopping.adminUrl}/readyz`);
      expect(notReady.status).toBe(503);
      await expect(send(`${stopping.url}/shop/v1.0/products`)).rejects.toThrow();
      await connection.query('rollback');
      const statuses = (await Promise.all(inFlight)).map((response) => response.status);
      expect(statuses).toEqual([201, 201, 201]);
      expect(await stopping.exited).toBe(0);
      expect(Date.now() - signalled).toBeLessThan(8000);
      measured.push(`SIGTERM with 3 requests in flight: ${statuses.join(', ')}, exit 0 after ${Date.now() - signalled} ms`);
      agent.destroy();
    } finally {
      await connection.end();
      await stopping.stop();
    }
  });
});
