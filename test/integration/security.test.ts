import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { Agent } from 'node:http';
import { connect } from 'node:net';
import { promisify } from 'node:util';
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../runtime/config.js';
import { connectTo } from '../../scripts/connection.js';
import { addUser } from '../../scripts/schema.js';
import { type BuiltServer, startBuiltServer } from '../support/built-server.js';
import { basicHeader, formBody, send } from '../support/http.js';
import { decodeJwt, TEST_SECRET } from '../support/server.js';

/**
 * The classes of hole an outside attack found, each tried in its
 * variants over real HTTP against the built server (`npm start`'s entry).
 */
let connection: mysql.Connection;
const ids = new Map<string, number>();

beforeAll(async () => {
  connection = await connectTo(inject('databaseUrl'));
});
afterAll(async () => {
  await connection.end();
});

async function user(name: string, password: string, roles: string[]): Promise<number> {
  const id = await addUser(connection, name, password, roles);
  ids.set(name, id);
  return id;
}

const shapeA = (url: string, userid: string, password: string, from?: string) =>
  send(`${url}/shop/`, { method: 'POST', ...formBody({ auth: 'bearer', userid, password }), ...(from ? { from } : {}) });
const shapeB = (url: string, name: string, pass: string, from?: string) =>
  send(`${url}/shop/v1.0/token`, { method: 'POST', ...formBody({ user: name, pass }), ...(from ? { from } : {}) });
const staffMe = (url: string, name: string, pass: string, from?: string) =>
  send(`${url}/staff/v1.0/me`, { headers: { authorization: basicHeader(name, pass) }, ...(from ? { from } : {}) });
const subOf = (body: unknown) => String(decodeJwt((body as { token: string }).token).payload.sub);

describe('1. ambiguous credential keys', () => {
  let server: BuiltServer;
  const victim = 'sec-victim';
  const crafted: { name: string; password: string; attack: string }[] = [];

  beforeAll(async () => {
    // Limits high enough that a refusal here is never a 429 standing in for a 401.
    server = await startBuiltServer({ env: { LOGIN_MAX_FAILURES: '100000', LOGIN_MAX_FAILURES_PER_ADDRESS: '100000' } });
    await user(victim, 'victim-pass-1', ['customer', 'admin', 'staff']);
    let n = 0;
    for (const separator of ['\0', '\u0001', ':', '|', '\n']) {
      for (const prefix of ['plugin', 'user', 'shop', 'address']) {
        // Another user's name after a prefix and a separator: "plugin\0sec-victim" with password P.
        const password = `crafted-pass-${n++}`;
        crafted.push({ name: `${prefix}${separator}${victim}`, password, attack: password });
      }
      // The victim's name as a prefix: "sec-victim\0x" with P, tried as the victim with "x\0P".
      const password = `crafted-pass-${n++}`;
      crafted.push({ name: `${victim}${separator}x`, password, attack: `x${separator}${password}` });
    }
    for (const prefix of ['plugin', 'user']) {
      // The separator in the password: "plugin" with "sec-victim\0P", tried as the victim with P.
      const password = `crafted-pass-${n++}`;
      crafted.push({ name: `${prefix}`, password: `${victim}\0${password}`, attack: password });
    }
    for (const account of crafted) await user(account.name, account.password, ['customer', 'staff']);
  }, 60_000);
  afterAll(() => server.stop());

  it('gives every crafted account its own tokens, and the victim nothing for a crafted password, on shape A, shape B and Basic', async () => {
    const victimId = String(ids.get(victim));
    for (const account of crafted) {
      // The crafted account signs in every way there is, so that whatever is remembered of it is remembered.
      const a = await shapeA(server.url, account.name, account.password);
      const b = await shapeB(server.url, account.name, account.password);
      expect([a.status, b.status]).toEqual([200, 201]);
      expect(subOf(a.json())).toBe(String(ids.get(account.name)));
      expect(subOf(b.json())).toBe(String(ids.get(account.name)));
      if (!account.name.includes(':')) expect((await staffMe(server.url, account.name, account.password)).status).toBe(200);
      // Then the victim's name with the password that would collide with it under a joined key.
      const attacks = [
        await shapeB(server.url, victim, account.attack),
        await shapeA(server.url, victim, account.attack),
        await staffMe(server.url, victim, account.attack),
      ];
      expect(
        attacks.map((response) => response.status),
        JSON.stringify(account),
      ).toEqual([401, 401, 401]);
    }
    // The victim still signs in as themself, and nobody else got their id.
    const own = await shapeB(server.url, victim, 'victim-pass-1');
    expect(subOf(own.json())).toBe(victimId);
  }, 120_000);
});

describe('2. bounded inputs on the credential path', () => {
  let server: BuiltServer;
  let offline: BuiltServer;

  beforeAll(async () => {
    server = await startBuiltServer();
    // No database at all: an answer that needs none proves that nothing was queried (nor hashed, which comes after).
    offline = await startBuiltServer({ env: { DATABASE_URL: 'mysql://nobody:nothing@127.0.0.1:1/none' } });
  });
  afterAll(async () => {
    await server.stop();
    await offline.stop();
  });

  it('refuses an over-long user name, password or Authorization value before any query or hash', async () => {
    const longName = 'n'.repeat(256);
    const longPass = 'p'.repeat(1025);
    for (const at of [server, offline]) {
      expect((await staffMe(at.url, longName, 'x')).status).toBe(401);
      expect((await staffMe(at.url, 'carol', longPass)).status).toBe(401);
      // Multi-byte: 128 two-byte characters are 256 bytes.
      expect((await staffMe(at.url, 'é'.repeat(128), 'x')).status).toBe(401);
      const longHeader = await send(`${at.url}/staff/v1.0/me`, { headers: { authorization: `Basic ${'A'.repeat(8200)}` } });
      expect(longHeader.status).toBe(401);
      const longBearer = await send(`${at.url}/shop/v1.0/orders`, {
        headers: { authorization: `Bearer ${'a'.repeat(4000)}.${'b'.repeat(4000)}.${'c'.repeat(200)}` },
      });
      expect(longBearer.status).toBe(401);
      expect((await shapeA(at.url, longName, 'x')).status).toBe(400);
      expect((await shapeA(at.url, 'alice', longPass)).status).toBe(400);
      expect((await shapeB(at.url, longName, 'x')).status).toBe(400);
      expect((await shapeB(at.url, 'alice', longPass)).status).toBe(400);
      // Every token form field is bounded, auth included.
      const longAuth = await send(`${at.url}/shop/`, { method: 'POST', ...formBody({ auth: 'b'.repeat(5000), userid: 'alice', password: 'x' }) });
      expect(longAuth.status).toBe(400);
    }
  });

  it('still checks credentials at the limits: a 255-byte name and a 1,024-byte password', async () => {
    expect((await staffMe(server.url, 'n'.repeat(255), 'p'.repeat(1024))).status).toBe(401);
    expect((await shapeA(server.url, 'n'.repeat(255), 'p'.repeat(1024))).status).toBe(401);
    expect((await shapeB(server.url, 'n'.repeat(190), 'p'.repeat(1024))).status).toBe(401);
    // The offline server reaches the database at these sizes, and says it cannot.
    expect((await shapeA(offline.url, 'n'.repeat(255), 'x')).status).not.toBe(401);
  });

  it('keeps its memory flat under 10,000 failed logins with unique 100 KB user names', async () => {
    const target = await startBuiltServer();
    // Keep-alive connections, as a determined client would use: what is measured is what each login leaves
    // behind. (A new connection per request also grows V8's heap, lazily, until a major GC gives it back,
    // with a bare Node server as much as with this one: that is the collector's pace, not a leak.)
    const agent = new Agent({ keepAlive: true, maxSockets: 8 });
    try {
      const attempt = (i: number) => {
        const name = `${i}-${'x'.repeat(100 * 1024)}`;
        const request: { path: string; fields: Record<string, string> } =
          i % 2 === 0
            ? { path: '/shop/', fields: { auth: 'bearer', userid: name, password: 'wrong' } }
            : { path: '/shop/v1.0/token', fields: { user: name, pass: 'wrong' } };
        return send(`${target.url}${request.path}`, { method: 'POST', ...formBody(request.fields), agent });
      };
      const run = async (from: number, count: number) => {
        let next = from;
        const statuses = new Map<number, number>();
        await Promise.all(
          Array.from({ length: 8 }, async () => {
            while (next < from + count) {
              const { status } = await attempt(next++);
              statuses.set(status, (statuses.get(status) ?? 0) + 1);
            }
          }),
        );
        return statuses;
      };
      const t0 = Date.now();
      await run(0, 2_000);
      process.stdout.write(`warm-up: ${Date.now() - t0} ms\n`);
      const before = await target.rss();
      const statuses = await run(2_000, 10_000);
      const after = await target.rss();
      const grown = (after - before) / 1024 / 1024;
      process.stdout.write(
        `memory: RSS ${Math.round(before / 1048576)} MB -> ${Math.round(after / 1048576)} MB after 10,000 failed logins with 100 KB names (+${grown.toFixed(1)} MB); statuses ${JSON.stringify([...statuses])}\n`,
      );
      expect([...statuses.keys()].every((status) => status >= 400 && status < 500)).toBe(true);
      expect(grown).toBeLessThan(25);
    } finally {
      agent.destroy();
      await target.stop();
    }
  }, 240_000);
});

describe('3. role changes reach every token and cache', () => {
  let first: BuiltServer;
  let second: BuiltServer;
  const xmlrest = (...args: string[]) =>
    promisify(execFile)(process.execPath, ['scripts/xmlrest.mjs', ...args], { env: { ...process.env, DATABASE_URL: inject('databaseUrl') } });

  beforeAll(async () => {
    [first, second] = await Promise.all([startBuiltServer(), startBuiltServer()]);
  });
  afterAll(async () => {
    await first.stop();
    await second.stop();
  });

  /**
   * Signs `name` in everywhere: a shape A token on shop, and a remembered Basic login on staff. The users
   * keep a role they do not lose (guest): with none at all, the default auth query finds no row, and the
   * right password answers as a wrong one (docs/internals/contract.md §8).
   */
  async function signedIn(name: string): Promise<{ bearer: string; basic: string }> {
    const token = (await shapeA(first.url, name, `${name}-pw`)).json() as { token: string };
    return { bearer: `Bearer ${token.token}`, basic: basicHeader(name, `${name}-pw`) };
  }
  const status = async (url: string, path: string, authorization: string) => (await send(`${url}${path}`, { headers: { authorization } })).status;
  /** Within the 5 s revocation interval (and a second for the request itself), on both servers. */
  async function refusedWithin(path: string, authorization: string, expected: number[]): Promise<number> {
    const started = Date.now();
    for (;;) {
      const statuses = [await status(first.url, path, authorization), await status(second.url, path, authorization)];
      if (statuses.every((code) => expected.includes(code))) return Date.now() - started;
      if (Date.now() - started > 6_500) throw new Error(`${path} still answers ${statuses.join(', ')} after ${Date.now() - started} ms`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async function revokedEverywhere(name: string, revoke: () => Promise<unknown>, staffPath = '/staff/v1.0/me'): Promise<void> {
    const { bearer, basic } = await signedIn(name);
    for (const server of [first, second]) {
      expect(await status(server.url, '/shop/v1.0/orders', bearer)).toBe(200);
      expect(await status(server.url, staffPath, basic)).toBe(200);
    }
    await revoke();
    await refusedWithin('/shop/v1.0/orders', bearer, [401]);
    await refusedWithin(staffPath, basic, [403]);
  }

  const consoleRevoke = async (via: 'shop' | 'staff', name: string, role: string) => {
    const admin =
      via === 'shop'
        ? `Bearer ${((await shapeA(first.url, 'bob', 'bob-pass')).json() as { token: string }).token}`
        : basicHeader('sec-staff-admin', 'sec-staff-admin-pw');
    const response = await send(`${first.url}/_console/api/b/${via}/users/${ids.get(name)}/roles/${role}`, {
      method: 'DELETE',
      headers: { authorization: admin, 'x-xmlrest-console': '1' },
    });
    expect(response.status).toBe(200);
  };

  // Each console revokes only roles its own backend uses (console/scope.ts): staff's staff, shop's customer and
  // admin (its console role, which staff's board names too).
  it('from the console of a Basic backend: the Bearer tokens of every backend end too', async () => {
    await user('sec-staff-admin', 'sec-staff-admin-pw', ['xmlrest-operator', 'staff']);
    await user('sec-rc-1', 'sec-rc-1-pw', ['customer', 'staff', 'guest']);
    await revokedEverywhere('sec-rc-1', () => consoleRevoke('staff', 'sec-rc-1', 'staff'));
  });

  it('from the console of a Bearer backend: remembered Basic logins end too', async () => {
    await user('sec-rc-2', 'sec-rc-2-pw', ['customer', 'admin', 'guest']);
    await revokedEverywhere(
      'sec-rc-2',
      async () => {
        await consoleRevoke('shop', 'sec-rc-2', 'customer');
        await consoleRevoke('shop', 'sec-rc-2', 'admin');
      },
      '/staff/v1.0/board',
    );
  });

  it('from the CLI', async () => {
    await user('sec-rc-3', 'sec-rc-3-pw', ['customer', 'staff', 'guest']);
    await revokedEverywhere('sec-rc-3', async () => {
      await xmlrest('role', 'revoke', 'sec-rc-3', 'customer');
      await xmlrest('role', 'revoke', 'sec-rc-3', 'staff');
    });
  });

  it('directly in usr_role, with SQL', async () => {
    await user('sec-rc-4', 'sec-rc-4-pw', ['customer', 'staff', 'guest']);
    await revokedEverywhere('sec-rc-4', () =>
      connection.execute("delete from usr_role where user_id = ? and role_name in ('customer', 'staff')", [ids.get('sec-rc-4')!]),
    );
  });

  it('directly in usr_role, renaming the role with an UPDATE', async () => {
    await user('sec-rc-5', 'sec-rc-5-pw', ['customer', 'staff', 'guest']);
    await revokedEverywhere('sec-rc-5', () =>
      connection.execute("update usr_role set role_name = concat(role_name, '-old') where user_id = ?", [ids.get('sec-rc-5')!]),
    );
  });

  it('when the user is deleted', async () => {
    await user('sec-rc-6', 'sec-rc-6-pw', ['customer', 'staff']);
    const { bearer, basic } = await signedIn('sec-rc-6');
    expect(await status(first.url, '/staff/v1.0/me', basic)).toBe(200);
    await connection.execute('delete from usr where user_id = ?', [ids.get('sec-rc-6')!]);
    await refusedWithin('/shop/v1.0/orders', bearer, [401]);
    await refusedWithin('/staff/v1.0/me', basic, [401]);
  });
});

describe('4. lockout is not turned against the victim', () => {
  let server: BuiltServer;

  beforeAll(async () => {
    server = await startBuiltServer({ env: { LOGIN_MAX_FAILURES: '3', LOGIN_MAX_FAILURES_PER_ADDRESS: '20' } });
    await user('sec-lock-1', 'sec-lock-1-pw', ['customer', 'staff']);
  });
  afterAll(() => server.stop());

  it('blocks the attacker, never the user signing in from another address with the right password', async () => {
    const attacker = '127.0.0.2';
    const attempts = [
      (pass: string, from?: string) => shapeA(server.url, 'sec-lock-1', pass, from),
      (pass: string, from?: string) => shapeB(server.url, 'sec-lock-1', pass, from),
      (pass: string, from?: string) => staffMe(server.url, 'sec-lock-1', pass, from),
    ];
    // Three failures, one through each door: the user name's limit from that address, whichever door.
    for (const [i, attempt] of attempts.entries()) expect((await attempt(`guess-${i}`, attacker)).status).toBe(401);
    for (const attempt of attempts) {
      // The attacker is stopped, even if it guesses right now...
      expect((await attempt('sec-lock-1-pw', attacker)).status).toBe(429);
      // ...while the user, elsewhere, is not.
      expect([200, 201]).toContain((await attempt('sec-lock-1-pw')).status);
    }
  });

  it('counts a request against the user only after its password failed: right passwords never add up', async () => {
    await user('sec-lock-2', 'sec-lock-2-pw', ['customer', 'staff']);
    for (let i = 0; i < 6; i++) expect((await shapeA(server.url, 'sec-lock-2', 'sec-lock-2-pw')).status).toBe(200);
    for (let i = 0; i < 6; i++) expect((await shapeB(server.url, 'sec-lock-2', 'sec-lock-2-pw')).status).toBe(201);
    expect((await shapeA(server.url, 'sec-lock-2', 'wrong')).status).toBe(401);
    expect((await shapeA(server.url, 'sec-lock-2', 'sec-lock-2-pw')).status).toBe(200);
  });
});

describe('5. JWT strictness (RFC 7515, RFC 8725)', () => {
  let server: BuiltServer;
  const now = () => Math.floor(Date.now() / 1000);
  const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  /** Signed by hand with the server's secret: the payload is exactly the text given. */
  const signed = (payload: string | object, header: object = { alg: 'HS256', typ: 'JWT' }) => {
    const input = `${b64(header)}.${typeof payload === 'string' ? Buffer.from(payload).toString('base64url') : b64(payload)}`;
    return `${input}.${createHmac('sha256', TEST_SECRET).update(input).digest('base64url')}`;
  };
  const claims = (extra: Record<string, unknown> = {}) => ({
    sub: '1',
    aud: 'customer',
    iss: 'shop',
    backend: 'shop',
    exp: now() + 600,
    iat: now(),
    jti: `j-${Math.random()}`,
    ...extra,
  });
  const orders = async (token: string) => (await send(`${server.url}/shop/v1.0/orders`, { headers: { authorization: `Bearer ${token}` } })).status;

  beforeAll(async () => {
    server = await startBuiltServer();
  });
  afterAll(() => server.stop());

  it('accepts a well-formed token (the control)', async () => {
    expect(await orders(signed(claims()))).toBe(200);
  });

  it('refuses a crit header naming any extension', async () => {
    for (const crit of [['exp'], ['b64'], ['urn:example:unknown'], []]) {
      expect(await orders(signed(claims(), { alg: 'HS256', typ: 'JWT', crit }))).toBe(401);
    }
  });

  it('refuses exp, iat and nbf that are not integers in a sane range', async () => {
    const bad = [
      { exp: 1e308 },
      { exp: now() + 600.5 },
      { exp: String(now() + 600) },
      { exp: 2 ** 53 },
      { iat: 1e308 },
      { iat: -1 },
      { iat: now() + 0.25 },
      { nbf: 1e308 },
      { nbf: now() - 10.5 },
      { nbf: '0' },
    ];
    for (const extra of bad) expect(await orders(signed(claims(extra))), JSON.stringify(extra)).toBe(401);
    // The raw text 1e308 in the JSON, which JSON.parse reads as a finite number.
    expect(await orders(signed(`{"sub":"1","aud":"customer","iss":"shop","backend":"shop","iat":${now()},"exp":1e308}`))).toBe(401);
  });

  it('refuses an iat in the future beyond the clock skew, which would escape a revocation of the user', async () => {
    expect(await orders(signed(claims({ iat: now() + 120 })))).toBe(401);
    expect(await orders(signed(claims({ iat: (now() + 120) * 1000 })))).toBe(401);
  });

  it('honours nbf', async () => {
    expect(await orders(signed(claims({ nbf: now() + 120 })))).toBe(401);
    expect(await orders(signed(claims({ nbf: now() - 5 })))).toBe(200);
  });

  it('takes only the exact canonical text of a user id as sub', async () => {
    for (const sub of ['1abc', ' 1', '1 ', '01', '+1', '1.0', '1e0', '0x1', '１', '1\u0000', '']) {
      expect(await orders(signed(claims({ sub }))), JSON.stringify(sub)).toBe(401);
    }
  });
});

describe('6. slow clients', () => {
  let server: BuiltServer;

  beforeAll(async () => {
    server = await startBuiltServer({ env: { REQUEST_TIMEOUT_MS: '2000' } });
  });
  afterAll(() => server.stop());

  /** Sends `head`, then one byte of `trickle` every 200 ms; resolves with how long the server kept the connection. */
  function trickle(head: string, rest: string): Promise<{ ms: number; answer: string }> {
    const { port } = new URL(server.url);
    return new Promise((resolve) => {
      const started = Date.now();
      const socket = connect(Number(port), '127.0.0.1');
      let answer = '';
      let timer: NodeJS.Timeout | undefined;
      socket.on('connect', () => {
        socket.write(head);
        let i = 0;
        timer = setInterval(() => {
          if (i < rest.length && !socket.destroyed) socket.write(rest[i++]!);
        }, 200);
      });
      socket.on('data', (chunk) => (answer += chunk.toString()));
      const done = () => {
        clearInterval(timer);
        resolve({ ms: Date.now() - started, answer });
      };
      socket.on('close', done);
      socket.on('error', () => undefined);
    });
  }

  it('cuts off a client trickling its body, and serves others meanwhile', async () => {
    const slow = trickle(
      'POST /shop/v1.0/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\n',
      'u'.repeat(1000),
    );
    const others: number[] = [];
    for (let i = 0; i < 10; i++) {
      others.push((await send(`${server.url}/shop/v1.0/products`)).status);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const { ms, answer } = await slow;
    expect(others.every((status) => status === 200)).toBe(true);
    expect(ms).toBeLessThan(5_000);
    expect(answer === '' || answer.startsWith('HTTP/1.1 408')).toBe(true);
  });

  it('cuts off a client trickling its headers', async () => {
    const { ms } = await trickle('GET /shop/v1.0/products HTTP/1.1\r\n', 'X-Slow: ' + 'a'.repeat(1000));
    expect(ms).toBeLessThan(5_000);
  });

  it('defaults to 30 s for the whole request and 10 s for its headers', () => {
    const config = loadConfig({ DATABASE_URL: 'mysql://u:p@h/d' });
    expect(config.requestTimeoutMs).toBe(30_000);
    expect(config.headersTimeoutMs).toBe(10_000);
  });
});

describe('8. smaller ones', () => {
  let server: BuiltServer;

  beforeAll(async () => {
    server = await startBuiltServer();
  });
  afterAll(() => server.stop());

  it('stores the demo users as argon2id hashes', async () => {
    const [rows] = await connection.query("select user_name, pass_word from usr where user_name in ('alice', 'bob', 'carol', 'dave')");
    const users = rows as { user_name: string; pass_word: string }[];
    expect(users).toHaveLength(4);
    for (const row of users) expect(row.pass_word, row.user_name).toMatch(/^\$argon2id\$/);
  });

  it('NFC-normalises new user and role names, and refuses control, zero-width and bidirectional characters', async () => {
    const admin = `Bearer ${((await shapeA(server.url, 'bob', 'bob-pass')).json() as { token: string }).token}`;
    const consoleCall = (method: string, route: string, body?: unknown) =>
      send(`${server.url}/_console/api/b/shop/${route}`, {
        method,
        headers: { authorization: admin, 'x-xmlrest-console': '1', 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    const created = await consoleCall('POST', 'users', { name: 'sec-Ame\u0301lie', password: 'amelie-pass-1' });
    expect(created.status).toBe(201);
    expect((created.json() as { user_name: string }).user_name).toBe('sec-Am\u00e9lie');
    for (const name of ['sec-zero\u200bwidth', 'sec-bidi\u202eevil', 'sec-nul\u0000x', 'sec-line\nbreak', 'sec-tab\tx', 'sec-\u2066isolate']) {
      const refused = await consoleCall('POST', 'users', { name, password: 'some-pass-1' });
      expect(refused.status, JSON.stringify(name)).toBe(400);
    }
    for (const role of ['sec-role\u200b', 'sec-role\u202e']) expect((await consoleCall('POST', 'roles', { name: role })).status).toBe(400);
    const cli = await promisify(execFile)(process.execPath, ['scripts/xmlrest.mjs', 'user', 'add', 'sec-cli\u200bname', '--password', 'cli-pass-1'], {
      env: { ...process.env, DATABASE_URL: inject('databaseUrl') },
    }).then(
      () => 0,
      (error: { code: number }) => error.code,
    );
    expect(cli).toBe(2);
  });

  it('never names database constraints, tables or columns in an error body', async () => {
    const token = `Bearer ${((await shapeB(server.url, 'alice', 'alice-pass')).json() as { token: string }).token}`;
    const order = (fields: Record<string, string>) =>
      send(`${server.url}/shop/v1.0/orders`, { method: 'POST', headers: { authorization: token, ...formBody(fields).headers }, body: formBody(fields).body });
    const answers = [
      await order({ product_id: '1', quantity: '-1' }),
      await order({ product_id: '3', quantity: '1000' }),
      await order({ product_id: '999', quantity: '1' }),
    ];
    expect(answers.map((answer) => answer.status)).toEqual([400, 400, 409]);
    for (const answer of answers) {
      expect(answer.text).not.toMatch(/orders|products|stock|quantity|product_id|constraint|usr/i);
      expect(Object.keys(answer.json() as object).sort()).toEqual(['message', 'status']);
    }
  });
});
