import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectTo } from '../../scripts/connection.js';
import { addUser } from '../../scripts/schema.js';
import { type BuiltServer, startBuiltServer } from '../support/built-server.js';
import { basicHeader, formBody, send } from '../support/http.js';
import { decodeJwt } from '../support/server.js';

/**
 * The holes a line-by-line review of the password checks found (issue 27),
 * each attacked at the door, over HTTP against the built server.
 */
let connection: mysql.Connection;
const ids = new Map<string, number>();

beforeAll(async () => {
  connection = await connectTo(inject('databaseUrl'));
});
afterAll(async () => {
  await connection.end();
});

async function user(name: string, roles: string[]): Promise<number> {
  const id = await addUser(connection, name, `${name}-pw`, roles);
  ids.set(name, id);
  return id;
}

const xmlrest = (...args: string[]) =>
  promisify(execFile)(process.execPath, ['scripts/xmlrest.mjs', ...args], { env: { ...process.env, DATABASE_URL: inject('databaseUrl') } });
const shapeA = (url: string, userid: string, password: string) => send(`${url}/shop/`, { method: 'POST', ...formBody({ auth: 'bearer', userid, password }) });
const shapeB = (url: string, name: string, pass: string) => send(`${url}/shop/v1.0/token`, { method: 'POST', ...formBody({ user: name, pass }) });
const staffMe = (url: string, name: string, pass: string) => send(`${url}/staff/v1.0/me`, { headers: { authorization: basicHeader(name, pass) } });
const audOf = (body: unknown): string[] => [decodeJwt((body as { token: string }).token).payload.aud].flat().map(String).sort();

describe('1. a remembered login never outlives a change of the user', () => {
  let server: BuiltServer;

  beforeAll(async () => {
    // The revocation poll at its default (5 s): nothing here waits for it.
    server = await startBuiltServer();
  });
  afterAll(() => server.stop());

  /** Signs in through every door, twice, so that whatever the server remembers of these credentials it remembers. */
  async function remembered(name: string): Promise<void> {
    for (let i = 0; i < 2; i++) {
      expect((await shapeA(server.url, name, `${name}-pw`)).status).toBe(200);
      expect((await shapeB(server.url, name, `${name}-pw`)).status).toBe(201);
      expect((await staffMe(server.url, name, `${name}-pw`)).status).toBe(200);
    }
  }

  // The CLI takes seconds to start (tsx): one call, so that the server's poll (every 5 s) rarely passes meanwhile.
  for (const [how, revoke] of [
    ['with SQL by hand', (name: string) => connection.execute("delete from usr_role where user_id = ? and role_name = 'staff'", [ids.get(name)!])],
    ['with the CLI', (name: string) => xmlrest('role', 'revoke', name, 'staff')],
  ] as const) {
    it(`revoked ${how}: the next shape A token lacks the role and Basic is refused it, with no wait`, async () => {
      const name = `cr-revoke-${how.includes('SQL') ? 'sql' : 'cli'}`;
      await user(name, ['customer', 'staff', 'guest']);
      await remembered(name);
      expect(audOf((await shapeA(server.url, name, `${name}-pw`)).json())).toEqual(['customer', 'guest', 'staff']);
      await revoke(name);
      const after = await shapeA(server.url, name, `${name}-pw`);
      expect(after.status).toBe(200);
      expect(audOf(after.json())).toEqual(['customer', 'guest']);
      // staff/v1.0/me needs staff: the remembered Basic login holds it no more.
      expect((await staffMe(server.url, name, `${name}-pw`)).status).toBe(403);
    });
  }

  it('a user disabled with SQL gets no token and no Basic call at once, whatever was remembered', async () => {
    const name = 'cr-disabled';
    await user(name, ['customer', 'staff']);
    await remembered(name);
    await connection.execute("update usr set pass_word = concat('!', pass_word) where user_id = ?", [ids.get(name)!]);
    expect((await shapeA(server.url, name, `${name}-pw`)).status).toBe(401);
    expect((await shapeB(server.url, name, `${name}-pw`)).status).toBe(401);
    expect((await staffMe(server.url, name, `${name}-pw`)).status).toBe(401);
  });

  it('a password reset with SQL ends the old password at once, on every door', async () => {
    const name = 'cr-reset';
    await user(name, ['customer', 'staff']);
    await remembered(name);
    await connection.execute("update usr set pass_word = 'cr-reset-new-pw' where user_id = ?", [ids.get(name)!]);
    expect((await shapeA(server.url, name, `${name}-pw`)).status).toBe(401);
    expect((await shapeB(server.url, name, `${name}-pw`)).status).toBe(401);
    expect((await staffMe(server.url, name, `${name}-pw`)).status).toBe(401);
    expect((await staffMe(server.url, name, 'cr-reset-new-pw')).status).toBe(200);
  });
});

describe('9. a password changed or a user locked with SQL ends their tokens', () => {
  let server: BuiltServer;

  beforeAll(async () => {
    server = await startBuiltServer();
  });
  afterAll(() => server.stop());

  const orders = async (token: string) => (await send(`${server.url}/shop/v1.0/orders`, { headers: { authorization: `Bearer ${token}` } })).status;
  /** Within the revocation poll (5 s) and a second for the request itself. */
  async function refusedWithinPoll(token: string): Promise<void> {
    const started = Date.now();
    while ((await orders(token)) !== 401) {
      if (Date.now() - started > 6_500) throw new Error(`the token still works ${Date.now() - started} ms after the change`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  for (const [how, change] of [
    ['a new password', "update usr set pass_word = 'cr-changed-by-hand' where user_id = ?"],
    ['a lock (the console disables a user so)', "update usr set pass_word = concat('!', pass_word) where user_id = ?"],
  ] as const) {
    it(`${how}: the user's earlier tokens, of both shapes, are refused within the poll`, async () => {
      const name = `cr-tokens-${how.startsWith('a new') ? 'password' : 'lock'}`;
      await user(name, ['customer']);
      const a = (shapeA(server.url, name, `${name}-pw`).then((response) => response.json()) as Promise<{ token: string }>).then((body) => body.token);
      const b = (shapeB(server.url, name, `${name}-pw`).then((response) => response.json()) as Promise<{ token: string }>).then((body) => body.token);
      const tokens = await Promise.all([a, b]);
      for (const token of tokens) expect(await orders(token)).toBe(200);
      await connection.execute(change, [ids.get(name)!]);
      for (const token of tokens) await refusedWithinPoll(token);
    });
  }
});

describe('8. credentials come from the body only, on every token request', () => {
  let server: BuiltServer;

  beforeAll(async () => {
    server = await startBuiltServer();
  });
  afterAll(() => server.stop());

  const missing = (name: string) => ({ message: `Missing parameter '${name}'`, status: 400 });

  it('refuses a shape B token request whose user or password is in the query string', async () => {
    const inQuery = await send(`${server.url}/shop/v1.0/token?user=alice&pass=alice-pass`, { method: 'POST' });
    expect([inQuery.status, inQuery.json()]).toEqual([400, missing('user')]);
    // One field in the body, the other in the query string: still refused, naming the one missing from the body.
    const split = await send(`${server.url}/shop/v1.0/token?pass=alice-pass`, { method: 'POST', ...formBody({ user: 'alice' }) });
    expect([split.status, split.json()]).toEqual([400, missing('pass')]);
    const json = await send(`${server.url}/shop/v1.0/token?user=alice&pass=alice-pass`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect([json.status, json.json()]).toEqual([400, missing('user')]);
    // The body wins over a query string it does not need: the request is judged by its body alone.
    const both = await send(`${server.url}/shop/v1.0/token?user=bob&pass=bob-pass`, { method: 'POST', ...formBody({ user: 'alice', pass: 'alice-pass' }) });
    expect(both.status).toBe(201);
    expect(decodeJwt((both.json() as { token: string }).token).payload.sub).toBe('1');
  });

  it('refuses a shape A token request whose fields are in the query string', async () => {
    const inQuery = await send(`${server.url}/shop/?auth=bearer&userid=alice&password=alice-pass`, { method: 'POST' });
    expect(inQuery.status).toBe(400);
    const split = await send(`${server.url}/shop/?password=alice-pass`, { method: 'POST', ...formBody({ auth: 'bearer', userid: 'alice' }) });
    expect([split.status, split.json()]).toEqual([400, missing('password')]);
  });

  it('still issues tokens for credentials in a form or JSON body', async () => {
    expect((await shapeB(server.url, 'alice', 'alice-pass')).status).toBe(201);
    const json = await send(`${server.url}/shop/v1.0/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ user: 'alice', pass: 'alice-pass' }),
    });
    expect(json.status).toBe(201);
    expect((await shapeA(server.url, 'alice', 'alice-pass')).status).toBe(200);
  });
});
