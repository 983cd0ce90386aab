import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { backends } from '../../generated/index.js';
import { basic, form, startServer, type TestServer } from '../support/server.js';

/** Failed logins are limited per user name and per client address, with Retry-After on 429. */
// Each test has a server of its own, so that no test depends on the counts another one left.
let server: TestServer;

beforeEach(async () => {
  server = await startServer(backends, { loginLimits: { perUser: 3, perAddress: 8, windowSeconds: 60 } });
});
afterEach(() => server.close());

const me = (user: string, pass: string) => fetch(`${server.url}/staff/v1.0/me`, { headers: { authorization: basic(user, pass) } });

describe('failed-login limits', () => {
  it('blocks a user name at the address that failed, even with the right password, and says when to retry', async () => {
    for (let i = 0; i < 3; i++) expect((await me('carol', `guess-${i}`)).status).toBe(401);
    const blocked = await me('carol', 'carol-pass');
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(50);
    expect(await blocked.json()).toEqual({ message: 'Too many failed logins: try again later', status: 429 });
  });

  it('counts the token requests too, shape A by user name', async () => {
    const shapeA = (password: string) => fetch(`${server.url}/shop/`, { method: 'POST', ...form({ auth: 'bearer', userid: 'alice', password }) });
    for (let i = 0; i < 3; i++) expect((await shapeA('wrong')).status).toBe(401);
    expect((await shapeA('alice-pass')).status).toBe(429);
  });

  it('blocks the client address once it has failed for many user names', async () => {
    // Eight failures over several names reach the address limit of 8.
    for (const name of ['carol', 'carol', 'alice', 'alice', 'nobody-3', 'nobody-4']) expect((await me(name, 'wrong')).status).toBe(401);
    expect((await me('nobody-1', 'x')).status).toBe(401);
    expect((await fetch(`${server.url}/shop/v1.0/token`, { method: 'POST', ...form({ user: 'nobody-2', pass: 'x' }) })).status).toBe(401);
    const blocked = await me('dave', 'dave-pass');
    expect(blocked.status).toBe(429);
    const shapeB = await fetch(`${server.url}/shop/v1.0/token`, { method: 'POST', ...form({ user: 'bob', pass: 'bob-pass' }) });
    expect(shapeB.status).toBe(429);
    // Public resources and tokens already issued are not logins: they go on.
    expect((await fetch(`${server.url}/shop/v1.0/products`)).status).toBe(200);
  });
});

describe('failed-login limits shared in the database (LOGIN_COUNTERS=database)', () => {
  it('counts the failures every server sees, so spreading guesses over servers does not help', async () => {
    const limits = { perUser: 4, perAddress: 0, windowSeconds: 60 };
    const first = await startServer(backends, { loginLimits: limits, loginCounters: 'database' });
    const second = await startServer(backends, { loginLimits: limits, loginCounters: 'database' });
    try {
      const guess = (at: TestServer, pass: string) => fetch(`${at.url}/staff/v1.0/me`, { headers: { authorization: basic('dave', pass) } });
      for (const at of [first, second, first, second]) expect((await guess(at, 'wrong')).status).toBe(401);
      const blocked = await guess(first, 'dave-pass');
      expect(blocked.status).toBe(429);
      expect((await guess(second, 'dave-pass')).status).toBe(429);
    } finally {
      await first.close();
      await second.close();
    }
  });
});

describe('a client already logged in', () => {
  it('keeps working while its user name is blocked: its right password is remembered, an attacker cannot lock it out', async () => {
    const own = await startServer(backends, { loginLimits: { perUser: 3, perAddress: 0, windowSeconds: 60 } });
    try {
      const guess = (pass: string) => fetch(`${own.url}/staff/v1.0/me`, { headers: { authorization: basic('carol', pass) } });
      expect((await guess('carol-pass')).status).toBe(200);
      for (let i = 0; i < 3; i++) expect((await guess(`guess-${i}`)).status).toBe(401);
      expect((await guess('guess-4')).status).toBe(429);
      expect((await guess('carol-pass')).status).toBe(200);
    } finally {
      await own.close();
    }
  });
});

describe('concurrent guesses', () => {
  it('cannot slip between the count and the check: each attempt is counted before it runs', async () => {
    const own = await startServer(backends, { loginLimits: { perUser: 3, perAddress: 0, windowSeconds: 60 } });
    try {
      const statuses = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          fetch(`${own.url}/staff/v1.0/me`, { headers: { authorization: basic('carol', `parallel-${i}`) } }).then((r) => r.status),
        ),
      );
      expect(statuses.filter((status) => status === 401)).toHaveLength(3);
      expect(statuses.filter((status) => status === 429)).toHaveLength(9);
    } finally {
      await own.close();
    }
  });
});
