import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { backends } from '../../generated/index.js';
import { generate } from '../../generator/index.js';
import { connectTo } from '../../scripts/connection.js';
import { addPlainTextUser, addUser } from '../../scripts/schema.js';
import { basic, form, startServer, type TestServer } from '../support/server.js';

/**
 * xmlrest stores argon2id hashes and the server verifies them;
 * plain-text rows from before still log in (in constant time) and can be
 * upgraded; successful checks are remembered briefly, keyed by an HMAC.
 */
let server: TestServer;
let connection: mysql.Connection;
// The staff backend, upgrading plain-text rows on the next successful login.
const upgrading = backends.map((backend) => (backend.name === 'staff' ? { ...backend, rehashPlaintext: true } : backend));

const storedPassword = async (name: string) => {
  const [rows] = await connection.execute('select pass_word from usr where user_name = ?', [name]);
  return (rows as { pass_word: string }[])[0]?.pass_word;
};
const me = (user: string, pass: string) => fetch(`${server.url}/staff/v1.0/me`, { headers: { authorization: basic(user, pass) } });

beforeAll(async () => {
  connection = await connectTo(inject('databaseUrl'));
  await addUser(connection, 'hana-hashed', 'hana-secret-1', ['staff', 'customer']);
  await addPlainTextUser(connection, 'pia-plain', 'pia-secret-1', ['staff']);
  await addUser(connection, 'cara-cached', 'cara-secret-1', ['staff']);
  await addUser(connection, 'dora-cli', 'dora-secret-1', ['staff', 'guest']);
  server = await startServer(upgrading, { revocationPollMs: 200 });
});
afterAll(async () => {
  await server.close();
  await connection.end();
});

describe('password storage', () => {
  it('stores an argon2id hash, never the password', async () => {
    const stored = await storedPassword('hana-hashed');
    expect(stored).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(stored).not.toContain('hana-secret-1');
  });

  it('verifies the hash for Basic and both token requests, and refuses a wrong password', async () => {
    expect((await me('hana-hashed', 'hana-secret-1')).status).toBe(200);
    expect((await me('hana-hashed', 'hana-secret-2')).status).toBe(401);
    const shapeA = await fetch(`${server.url}/shop/`, { method: 'POST', ...form({ auth: 'bearer', userid: 'hana-hashed', password: 'hana-secret-1' }) });
    expect(shapeA.status).toBe(200);
    const shapeB = await fetch(`${server.url}/shop/v1.0/token`, { method: 'POST', ...form({ user: 'hana-hashed', pass: 'hana-secret-1' }) });
    expect(shapeB.status).toBe(201);
    const wrongB = await fetch(`${server.url}/shop/v1.0/token`, { method: 'POST', ...form({ user: 'hana-hashed', pass: 'nope' }) });
    expect(wrongB.status).toBe(401);
    const unknownB = await fetch(`${server.url}/shop/v1.0/token`, { method: 'POST', ...form({ user: 'no-such-user', pass: 'nope' }) });
    expect(await unknownB.json()).toEqual({ message: 'Invalid credentials', status: 401 });
  });

  it('lets a plain-text row from before log in, then replaces it with a hash (rehash_plaintext)', async () => {
    expect(await storedPassword('pia-plain')).toBe('pia-secret-1');
    expect((await me('pia-plain', 'pia-secret-1 ')).status).toBe(401);
    expect((await me('pia-plain', 'pia-secret-1')).status).toBe(200);
    expect(await storedPassword('pia-plain')).toMatch(/^\$argon2id\$/);
    // The rehash changed the stored value: what was remembered for the plain text no longer meets it.
    expect((await me('pia-plain', 'pia-secret-1')).status).toBe(200);
    expect((await me('pia-plain', 'pia-secret-1 ')).status).toBe(401);
  });

  it('revokes no token when it replaces a plain-text password with its hash: the same password, not a change', async () => {
    await addPlainTextUser(connection, 'pia-token', 'pia-token-1', ['customer']);
    const own = await startServer(
      backends.map((backend) => ({ ...backend, rehashPlaintext: true })),
      { revocationPollMs: 0 },
    );
    try {
      const issued = await fetch(`${own.url}/shop/`, { method: 'POST', ...form({ auth: 'bearer', userid: 'pia-token', password: 'pia-token-1' }) });
      expect(issued.status).toBe(200);
      expect(await storedPassword('pia-token')).toMatch(/^\$argon2id\$/);
      const { token } = (await issued.json()) as { token: string };
      await own.revocations.refresh();
      expect((await fetch(`${own.url}/shop/v1.0/orders`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
      // A password changed by hand afterwards is a change: the token ends.
      await connection.execute("update usr set pass_word = 'pia-token-2' where user_name = 'pia-token'");
      await own.revocations.refresh();
      expect((await fetch(`${own.url}/shop/v1.0/orders`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(401);
    } finally {
      await own.close();
    }
  });
});

describe('the credential cache', () => {
  it('remembers a successful check for the stored value only: a password changed by hand ends it at once', async () => {
    expect((await me('cara-cached', 'cara-secret-1')).status).toBe(200);
    expect((await me('cara-cached', 'cara-secret-1')).status).toBe(200);
    await connection.execute("update usr set pass_word = 'changed-by-hand' where user_name = 'cara-cached'");
    expect((await me('cara-cached', 'cara-secret-1')).status).toBe(401);
    expect((await me('cara-cached', 'a-wrong-one')).status).toBe(401);
    expect((await me('cara-cached', 'changed-by-hand')).status).toBe(200);
  });
});

describe('the credential cache across processes', () => {
  it('never remembers roles: a role another process revoked through xmlrest is gone at the next request', async () => {
    expect((await me('dora-cli', 'dora-secret-1')).status).toBe(200);
    await promisify(execFile)(process.execPath, ['scripts/xmlrest.mjs', 'role', 'revoke', 'dora-cli', 'staff'], {
      env: { ...process.env, DATABASE_URL: inject('databaseUrl') },
    });
    expect((await me('dora-cli', 'dora-secret-1')).status).toBe(403);
  });
});

describe('auth queries', () => {
  it('must either compare $pass in SQL or return pass_word for the server to verify', () => {
    const result = generate([
      {
        path: 'resources/x/backend.xml',
        text: '<Backend auth_scheme="Basic"><AuthQuery>select user_id, role_name from usr_role where user_id = 1 and $user = $user</AuthQuery></Backend>',
      },
    ]);
    expect(result.ok).toBe(false);
    if (!result.ok)
      expect(result.errors).toEqual([
        'resources/x/backend.xml:1:30: an AuthQuery compares $pass in SQL, or returns a pass_word column for the server to verify',
      ]);
  });
});
