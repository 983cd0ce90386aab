import { createHmac } from 'node:crypto';
import jwt from 'jsonwebtoken';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { backends as demo } from '../../generated/index.js';
import {
  createLogger,
  createReloadableApp,
  type Database,
  listen,
  openDatabase,
  type ReloadableApp,
  type RunningServer,
  revokeToken,
  revokeUserTokens,
} from '../../runtime/index.js';
import { connectTo } from '../../scripts/connection.js';
import { createDefaultTables } from '../../scripts/schema.js';
import { DEMO_WEBHOOK_ENV } from '../support/demo-webhook.js';
import { decodeJwt } from '../support/server.js';

/**
 * Token hygiene and the JWT attack suite: clock-skew leeway, nbf,
 * key rotation by kid, revocation by jti and by user (kept in the database),
 * and the tokens an attacker would try.
 */
const OLD = 'old-key-0123456789-0123456789-0123456789';
const NEW = 'new-key-0123456789-0123456789-0123456789';
const ROTATION = JSON.stringify({ '2026-11': NEW, '2026-10': OLD });
const now = () => Math.floor(Date.now() / 1000);
// The shop backend with 60 s of clock skew allowed.
const skewed = demo.map((backend) => (backend.name === 'shop' ? { ...backend, clockSkew: 60 } : backend));

let database: Database;
let server: ReloadableApp;
let running: RunningServer;
let url = '';

beforeAll(async () => {
  const connection = await connectTo(inject('databaseUrl'));
  await createDefaultTables(connection);
  await connection.end();
  database = openDatabase(inject('databaseUrl'));
  server = createReloadableApp({
    backends: skewed,
    webhookSecrets: DEMO_WEBHOOK_ENV,
    database,
    jwtSecret: ROTATION,
    logger: createLogger('silent'),
    revocationPollMs: 0,
  });
  running = await listen(server.app, 0);
  url = running.url;
});
afterAll(async () => {
  await running.close();
  await database.end();
});

const claims = (extra: Record<string, unknown> = {}) => ({
  sub: '1',
  aud: 'customer',
  iss: 'shop',
  backend: 'shop',
  exp: now() + 600,
  iat: now(),
  jti: `t-${Math.random()}`,
  ...extra,
});
const sign = (payload: object, secret = NEW, options: jwt.SignOptions = { algorithm: 'HS256', keyid: '2026-11' }) => jwt.sign(payload, secret, options);
const b64 = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
/** Signed by hand, for payloads jsonwebtoken itself refuses to sign. */
const handMade = (payload: unknown, header: object = { alg: 'HS256', typ: 'JWT', kid: '2026-11' }) => {
  const input = `${b64(header)}.${b64(payload)}`;
  return `${input}.${createHmac('sha256', NEW).update(input).digest('base64url')}`;
};

async function orders(token: string): Promise<{ status: number; description: string | null }> {
  const response = await fetch(`${url}/shop/v1.0/orders`, { headers: { authorization: `Bearer ${token}` } });
  const challenge = response.headers.get('www-authenticate');
  return { status: response.status, description: challenge ? (/error_description="([^"]*)"/.exec(challenge)?.[1] ?? null) : null };
}

describe('key rotation', () => {
  it('signs with the first key, naming it in kid', async () => {
    const response = await fetch(`${url}/shop/`, { method: 'POST', body: new URLSearchParams({ auth: 'bearer', userid: 'alice', password: 'alice-pass' }) });
    const { token } = (await response.json()) as { token: string };
    expect(decodeJwt(token).header).toEqual({ alg: 'HS256', typ: 'JWT', kid: '2026-11' });
    expect((await orders(token)).status).toBe(200);
  });

  it('verifies tokens of every listed key, and refuses an unknown kid or none', async () => {
    expect((await orders(sign(claims(), OLD, { algorithm: 'HS256', keyid: '2026-10' }))).status).toBe(200);
    expect(await orders(sign(claims(), NEW, { algorithm: 'HS256', keyid: '2025-01' }))).toEqual({ status: 401, description: 'token key (kid) is not known' });
    expect(await orders(sign(claims(), NEW, { algorithm: 'HS256' }))).toEqual({ status: 401, description: 'token key (kid) is not known' });
    // The right kid with the other key's signature is a bad signature, not a lucky guess.
    expect(await orders(sign(claims(), OLD, { algorithm: 'HS256', keyid: '2026-11' }))).toEqual({ status: 401, description: 'token signature is invalid' });
  });
});

describe('clock skew and nbf', () => {
  it('accepts a token expired within the backend clock skew, and refuses one past it', async () => {
    expect((await orders(sign(claims({ exp: now() - 30 })))).status).toBe(200);
    expect(await orders(sign(claims({ exp: now() - 90 })))).toEqual({ status: 401, description: 'token expired' });
  });

  it('honours nbf, with the same skew', async () => {
    expect(await orders(sign(claims({ nbf: now() + 600 })))).toEqual({ status: 401, description: 'token not yet valid' });
    expect((await orders(sign(claims({ nbf: now() + 30 })))).status).toBe(200);
  });
});

describe('refusals the server remembers', () => {
  const answer = async (token: string) => {
    const response = await fetch(`${url}/shop/v1.0/orders`, { headers: { authorization: `Bearer ${token}` } });
    return { status: response.status, challenge: response.headers.get('www-authenticate'), body: await response.json() };
  };

  it('answers a token refused for good the same way every time it comes back', async () => {
    const forged = sign(claims(), OLD, { algorithm: 'HS256', keyid: '2026-11' });
    const expired = sign(claims({ exp: now() - 90 }));
    for (const [token, description] of [
      [forged, 'token signature is invalid'],
      [expired, 'token expired'],
    ] as const) {
      const first = await answer(token);
      expect(first.status).toBe(401);
      expect(first.challenge).toContain(`error_description="${description}"`);
      expect(await answer(token)).toEqual(first);
      expect(await answer(token)).toEqual(first);
    }
  });

  it('does not remember a refusal that time undoes: a token not yet valid is accepted once it is', async () => {
    // nbf two seconds past the 60 s of skew: refused now, good within about two seconds.
    const token = sign(claims({ nbf: now() + 62 }));
    expect(await orders(token)).toEqual({ status: 401, description: 'token not yet valid' });
    const deadline = Date.now() + 5000;
    let status = 401;
    while (status === 401 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      status = (await orders(token)).status;
    }
    expect(status).toBe(200);
  });
});

describe('revocation, kept in the database', () => {
  it('refuses a token revoked by jti, even one the server remembers as verified', async () => {
    const token = sign(claims({ jti: 'revoke-me' }));
    expect((await orders(token)).status).toBe(200);
    await revokeToken(database, 'shop', 'revoke-me', now() + 600);
    await server.revocations.refresh();
    expect(await orders(token)).toEqual({ status: 401, description: 'token revoked' });
    expect((await orders(sign(claims()))).status).toBe(200);
  });

  it('refuses every token a user was issued before their tokens were revoked, and accepts a later one', async () => {
    // A sub of its own: revocations live in the database every test file shares.
    const before = sign(claims({ sub: '9002', aud: ['customer', 'admin'], iat: now() - 5 }));
    expect((await orders(before)).status).toBe(200);
    await revokeUserTokens(database, 'shop', '9002');
    await server.revocations.refresh();
    expect(await orders(before)).toEqual({ status: 401, description: 'token revoked' });
    expect((await orders(sign(claims({ sub: '1' })))).status).toBe(200);
    const after = sign(claims({ sub: '9002', iat: now() + 2 }));
    expect((await orders(after)).status).toBe(200);
  });
});

describe('revocation by xmlrest role revoke', () => {
  it("refuses a user's tokens on every backend when the revocation names no backend (*)", async () => {
    const token = sign(claims({ sub: '9003', aud: 'customer', iat: now() - 5 }));
    expect((await orders(token)).status).toBe(200);
    await revokeUserTokens(database, '*', '9003');
    await server.revocations.refresh();
    expect(await orders(token)).toEqual({ status: 401, description: 'token revoked' });
  });
});

describe('key ids', () => {
  it('refuses plain-number key ids, which JavaScript would reorder', () => {
    expect(() =>
      createReloadableApp({
        backends: skewed,
        webhookSecrets: DEMO_WEBHOOK_ENV,
        database,
        jwtSecret: JSON.stringify({ '2': NEW, '1': OLD }),
        logger: createLogger('silent'),
        revocationPollMs: 0,
      }),
    ).toThrow('must not be plain numbers');
  });
});

describe('JWT attack suite', () => {
  const valid = () => sign(claims());
  const attacks: [string, () => string, string][] = [
    ['alg none', () => `${b64({ alg: 'none', typ: 'JWT', kid: '2026-11' })}.${b64(claims())}.`, 'token algorithm is not HS256'],
    ['alg None (case games)', () => `${b64({ alg: 'None', typ: 'JWT', kid: '2026-11' })}.${b64(claims())}.`, 'token algorithm is not HS256'],
    [
      'algorithm confusion: RS256 header, HMAC with the secret',
      () => handMade(claims(), { alg: 'RS256', typ: 'JWT', kid: '2026-11' }),
      'token algorithm is not HS256',
    ],
    ['HS512 with the right key', () => sign(claims(), NEW, { algorithm: 'HS512', keyid: '2026-11' }), 'token algorithm is not HS256'],
    ['stripped signature', () => valid().replace(/\.[^.]+$/, '.'), 'token algorithm is not HS256'],
    [
      'signature of another payload',
      () => {
        const [header, , signature] = valid().split('.');
        return `${header}.${b64(claims({ sub: '2', aud: 'admin' }))}.${signature}`;
      },
      'token signature is invalid',
    ],
    ['wrong typ', () => sign(claims(), NEW, { algorithm: 'HS256', keyid: '2026-11', header: { alg: 'HS256', typ: 'JWS' } }), 'token type (typ) is not JWT'],
    ['exp as a string', () => handMade({ ...claims(), exp: String(now() + 600) }), 'token is malformed'],
    ['sub as a number', () => sign({ ...claims(), sub: 1 }), 'token has no subject (sub)'],
    ['aud as an object', () => sign({ ...claims(), aud: { role: 'customer' } }), 'token audience (aud) is missing or not a string'],
    ['iss as an array', () => sign({ ...claims(), iss: ['shop'] }), 'token issuer is not accepted'],
    ['payload that is not JSON', () => handMade('not json'), 'token is malformed'],
  ];
  it.each(attacks)('refuses %s with 401 and says why', async (_name, make, description) => {
    expect(await orders(make())).toEqual({ status: 401, description });
  });

  it('refuses re-encoded signatures (padding, the standard alphabet) as malformed, without a 500', async () => {
    const [header, payload, signature] = valid().split('.');
    const standard = Buffer.from(signature!, 'base64url').toString('base64');
    for (const token of [`${header}.${payload}.${standard}`, `${header}.${payload}.${signature}==`]) {
      const result = await orders(token);
      expect(result.status).toBe(401);
    }
  });

  it('takes a large token up to the 8 KB header limit, refuses a longer one unread, and serves the next request', async () => {
    const large = sign(claims({ filler: 'x'.repeat(5_000) }));
    expect((await orders(large)).status).toBe(200);
    expect((await orders(large.slice(0, -3) + 'AAA')).status).toBe(401);
    const huge = sign(claims({ filler: 'x'.repeat(10_000) }));
    expect(await orders(huge)).toEqual({ status: 401, description: 'token is malformed or not a Bearer token' });
    expect((await orders(valid())).status).toBe(200);
  });
});
