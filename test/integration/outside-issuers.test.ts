import { execFile } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectTo } from '../../scripts/connection.js';
import { addUser } from '../../scripts/schema.js';
import { type BuiltServer, startBuiltServer } from '../support/built-server.js';
import { formBody, send } from '../support/http.js';
import {
  type FixtureIssuer,
  type PrivateJwk,
  publicJwk,
  signingKey,
  startFixtureIssuer,
  startTestProvider,
  type TestProvider,
} from '../support/identity-provider.js';
import { buildScratchProject } from '../support/scratch-project.js';

/**
 * Identity from outside (docs/internals/contract.md §9, issue 28), at the door of the
 * built server: access tokens of a real OpenID Provider (oidc-provider, found
 * by discovery, RS256, PS256, ES256 and EdDSA), and of fixture issuers shaped
 * like Keycloak and Entra ID, beside the backend's own HS256 tokens; keys that
 * rotate, a provider that goes away and comes back, and the attacks RFC 8725
 * lists (algorithm confusion, none, foreign issuers and audiences, keys named
 * in the token's own header).
 */
const ROOT = path.resolve('test/.tmp/outside-issuers');
const TENANT = '9188040d-6c67-4c5b-b112-36a304b66dad';
const ENTRA = `https://login.microsoftonline.com/${TENANT}/v2.0`;
const KEYCLOAK = 'https://sso.example.com/realms/acme';
const DISCOVERED = 'https://discovered.example';
const LOCAL_USER = 'oidc-local-user';
const OPERATOR = 'oidc-operator';

let provider: TestProvider;
let fixture: FixtureIssuer;
let rsa1: PrivateJwk;
let rsa2: PrivateJwk;
let ec1: PrivateJwk;
let ed1: PrivateJwk;
let fixtureKey: PrivateJwk;
let attackerKey: PrivateJwk;
let connection: mysql.Connection;
let server: BuiltServer;

const env = { IDP_REFETCH_SECONDS: '2', IDP_STALE_SECONDS: '4', ADMIN_PORT: '0' };

beforeAll(async () => {
  [rsa1, rsa2, ec1, ed1, fixtureKey, attackerKey] = await Promise.all([
    signingKey('RS256', 'rsa1'),
    signingKey('RS256', 'rsa2'),
    signingKey('ES256', 'ec1'),
    signingKey('EdDSA', 'ed1'),
    signingKey('RS256', 'fixture-rsa'),
    signingKey('RS256', 'attacker'),
  ]);
  provider = await startTestProvider({
    keys: [rsa1, ec1, ed1],
    jwksMaxAge: 1,
    clients: {
      alice: { roles: ['customer'] },
      carol: { roles: ['shop-administrator'] },
      nobody: {},
    },
  });
  fixture = await startFixtureIssuer([fixtureKey]);
  fixture.discoveryIssuer = DISCOVERED;
  connection = await connectTo(inject('databaseUrl'));
  await addUser(connection, LOCAL_USER, 'local-pass-1', ['member']);
  await addUser(connection, OPERATOR, 'operator-pass-1', ['xmlrest-operator']);
  const keys = `jwks_uri="${fixture.jwksUri}"`;
  await buildScratchProject(ROOT, {
    databaseUrl: inject('databaseUrl'),
    files: {
      'resources/api/backend.xml': `<Backend xmlns="urn:xmlrest:resource:1.0" auth_scheme="Bearer" issuer="api" uid_type="text">
  <Issuer iss="${provider.issuer}" audience="shop-api" discovery="${provider.issuer}/.well-known/openid-configuration" algorithms="RS256 PS256 ES256 EdDSA">
    <Role from="shop-administrator" to="admin"/>
  </Issuer>
  <Issuer iss="${KEYCLOAK}" audience="account shop-api" ${keys} roles="realm_access.roles" user="preferred_username"/>
  <Issuer iss="${ENTRA}" audience="api://shop" ${keys} map_only="true" user="oid">
    <Role from="Shop.Admin" to="admin"/>
  </Issuer>
  <Issuer iss="https://space.example" audience="shop-api" ${keys} roles="scope" role_format="space"/>
  <Issuer iss="https://comma.example" audience="shop-api" ${keys} roles="groups" role_format="comma"/>
  <Issuer iss="https://json.example" audience="shop-api" ${keys} roles='"https://example.com/claims".roles' role_format="json" user='"https://example.com/claims".uid'/>
  <Issuer iss="${DISCOVERED}" audience="shop-api" discovery="${fixture.discoveryUrl}"/>
</Backend>
`,
      'resources/api/whoami.xml': `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0" auth="*">
  <Request method="GET"><Sql id="me">select cast($uid as char) as uid</Sql></Request>
</Resource>
`,
      'resources/api/admin.xml': `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0" auth="admin">
  <Request method="GET"><Sql id="area">select 'admin' as area</Sql></Request>
</Resource>
`,
      'resources/api/customer.xml': `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0" auth="customer">
  <Request method="GET"><Sql id="area">select 'customer' as area</Sql></Request>
</Resource>
`,
      'resources/local/backend.xml': `<Backend xmlns="urn:xmlrest:resource:1.0" auth_scheme="Bearer" issuer="local">
  <Issuer iss="https://idp.local.example" audience="local-api" ${keys}>
    <UserQuery>select user_id from usr where user_name = $claim.preferred_username</UserQuery>
  </Issuer>
</Backend>
`,
      'resources/local/me.xml': `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0" auth="*">
  <Request method="GET"><Sql id="me">select user_name from usr where user_id = $uid</Sql></Request>
</Resource>
`,
    },
  });
  server = await startBuiltServer({ root: ROOT, env });
}, 180_000);

afterAll(async () => {
  await server?.stop();
  await provider?.stop();
  await fixture?.close();
  await connection?.end();
  rmSync(ROOT, { recursive: true, force: true });
});

interface Answer {
  status: number;
  body: Record<string, unknown>;
  description: string | undefined;
  retryAfter: string | undefined;
}

async function call(target: BuiltServer, route: string, token: string): Promise<Answer> {
  const response = await send(`${target.url}${route}`, { headers: { authorization: `Bearer ${token}` } });
  const challenge = String(response.headers['www-authenticate'] ?? '');
  return {
    status: response.status,
    body: response.json() as Record<string, unknown>,
    description: /error_description="([^"]*)"/.exec(challenge)?.[1],
    retryAfter: response.headers['retry-after'] as string | undefined,
  };
}

const whoami = (token: string, target = server) => call(target, '/api/v1.0/whoami', token);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const now = () => Math.floor(Date.now() / 1000);

async function logged(target: BuiltServer, reason: string): Promise<boolean> {
  for (let waited = 0; waited < 5000; waited += 100) {
    if (target.logs.some((line) => line.reason === reason)) return true;
    await sleep(100);
  }
  return false;
}

describe('a real OpenID Provider, found by discovery', () => {
  it('admits its access tokens signed with RS256, PS256, ES256 and EdDSA; $uid is the sub', async () => {
    for (const alg of ['RS256', 'PS256', 'ES256', 'EdDSA'] as const) {
      const answer = await whoami(await provider.token('alice', { alg }));
      expect(answer, alg).toMatchObject({ status: 200, body: { me: [{ uid: 'alice' }] } });
    }
  });

  it('takes roles from the claims, maps them, and refuses a role not held with 403', async () => {
    const alice = await provider.token('alice');
    const carol = await provider.token('carol', { alg: 'ES256' });
    expect((await call(server, '/api/v1.0/customer', alice)).status).toBe(200);
    expect((await call(server, '/api/v1.0/admin', alice)).status).toBe(403);
    expect((await call(server, '/api/v1.0/admin', carol)).status).toBe(200);
    // A token with no role claim holds no role; auth="*" still admits it.
    const nobody = await provider.token('nobody', { alg: 'EdDSA' });
    expect((await call(server, '/api/v1.0/customer', nobody)).status).toBe(403);
    expect((await whoami(nobody)).status).toBe(200);
    expect(await logged(server, 'role_not_held')).toBe(true);
  });

  it("keeps the backend's own HS256 tokens working beside it", async () => {
    const response = await send(`${server.url}/api/`, { method: 'POST', ...formBody({ auth: 'bearer', userid: LOCAL_USER, password: 'local-pass-1' }) });
    expect(response.status).toBe(200);
    const own = (response.json() as { token: string }).token;
    expect((await whoami(own)).status).toBe(200);
  });

  it('refuses a token meant for another audience, and one from an issuer it does not know', async () => {
    expect(await whoami(await provider.token('alice', { audience: 'other-api' }))).toMatchObject({
      status: 401,
      description: 'token audience (aud) is not accepted',
    });
    const foreign = await fixture.sign(fixtureKey, { iss: 'https://evil.example', aud: 'shop-api', sub: 'mallory' });
    expect(await whoami(foreign)).toMatchObject({ status: 401, description: 'token issuer is not accepted' });
    expect(await logged(server, 'wrong_audience')).toBe(true);
    expect(await logged(server, 'wrong_issuer')).toBe(true);
  });

  it('refuses algorithm confusion (HS256 keyed with the public key), none, and a forged signature', async () => {
    const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const claims = { iss: provider.issuer, aud: 'shop-api', sub: 'mallory', roles: ['shop-administrator'], exp: now() + 600, iat: now() };
    // The RSA public key as an HMAC secret, in each form a confused verifier might take it: its JWK and its n.
    for (const secret of [JSON.stringify(publicJwk(rsa1)), Buffer.from(rsa1.n!, 'base64url')]) {
      const input = `${part({ alg: 'HS256', typ: 'JWT', kid: 'rsa1' })}.${part(claims)}`;
      const confused = `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
      expect(await whoami(confused)).toMatchObject({ status: 401, description: 'token algorithm is not accepted' });
    }
    const none = `${part({ alg: 'none', typ: 'JWT' })}.${part(claims)}.`;
    expect((await whoami(none)).status).toBe(401);
    const forged = await fixture.sign({ ...attackerKey, kid: 'rsa1' }, claims);
    expect(await whoami(forged)).toMatchObject({ status: 401, description: 'token signature is invalid' });
    expect(await logged(server, 'bad_signature')).toBe(true);
  });

  it('never follows or trusts a key the token names itself (jwk, jku, x5u, x5c)', async () => {
    const claims = { iss: provider.issuer, aud: 'shop-api', sub: 'mallory', roles: ['shop-administrator'] };
    const evil = fixture.jwksUri.replace('/keys', '/evil-keys');
    const token = await fixture.sign(attackerKey, claims, { jwk: publicJwk(attackerKey), jku: evil, x5u: evil });
    expect(await whoami(token)).toMatchObject({ status: 401, description: 'token key (kid) is not known' });
    expect(fixture.otherRequests).toEqual([]);
    expect(await logged(server, 'unknown_kid')).toBe(true);
  });
});

describe('times', () => {
  const base = { iss: KEYCLOAK, aud: 'account', preferred_username: 'kc-user', realm_access: { roles: ['customer'] } };

  it('refuses an expired token, one not yet valid, one issued in the future, and one without exp, past the clock skew', async () => {
    expect(await whoami(await fixture.sign(fixtureKey, { ...base, exp: now() - 120 }))).toMatchObject({ status: 401, description: 'token expired' });
    expect(await whoami(await fixture.sign(fixtureKey, { ...base, nbf: now() + 120 }))).toMatchObject({ status: 401, description: 'token not yet valid' });
    expect(await whoami(await fixture.sign(fixtureKey, { ...base, iat: now() + 120 }))).toMatchObject({
      status: 401,
      description: 'token issue time (iat) is in the future',
    });
    expect(await whoami(await fixture.sign(fixtureKey, { ...base, exp: undefined }))).toMatchObject({ status: 401, description: 'token has no expiry (exp)' });
    expect(await logged(server, 'expired')).toBe(true);
  });

  it('allows the clock skew (30 s by default) either way', async () => {
    expect((await whoami(await fixture.sign(fixtureKey, { ...base, exp: now() - 10 }))).status).toBe(200);
    expect((await whoami(await fixture.sign(fixtureKey, { ...base, nbf: now() + 10, iat: now() + 10 }))).status).toBe(200);
  });
});

describe('claims shaped as each provider shapes them', () => {
  it('reads a Keycloak token: realm_access.roles, and the user from preferred_username', async () => {
    const token = await fixture.sign(fixtureKey, {
      iss: KEYCLOAK,
      aud: ['account', 'shop-api'],
      azp: 'shop-web',
      typ: 'Bearer',
      sub: 'f1b2c3d4-0000-4000-8000-000000000001',
      preferred_username: 'kc-user',
      realm_access: { roles: ['offline_access', 'customer'] },
      resource_access: { account: { roles: ['manage-account'] } },
      scope: 'openid email profile',
    });
    expect(await whoami(token)).toMatchObject({ status: 200, body: { me: [{ uid: 'kc-user' }] } });
    expect((await call(server, '/api/v1.0/customer', token)).status).toBe(200);
    expect((await call(server, '/api/v1.0/admin', token)).status).toBe(403);
  });

  it('reads an Entra ID v2.0 token: the roles array, mapped only (map_only), the user from oid', async () => {
    const entra = (roles: string[]) =>
      fixture.sign(fixtureKey, {
        iss: ENTRA,
        aud: 'api://shop',
        tid: TENANT,
        oid: '00000000-0000-4000-8000-0000000000aa',
        azp: '5e2b1c3d-0000-4000-8000-000000000002',
        ver: '2.0',
        roles,
      });
    const admin = await entra(['Shop.Admin']);
    expect(await whoami(admin)).toMatchObject({ status: 200, body: { me: [{ uid: '00000000-0000-4000-8000-0000000000aa' }] } });
    expect((await call(server, '/api/v1.0/admin', admin)).status).toBe(200);
    // map_only: a role with no Role mapping counts for nothing, even one named as ours.
    expect((await call(server, '/api/v1.0/customer', await entra(['customer']))).status).toBe(403);
  });

  it('reads roles as a space-separated string, a comma-separated string, and a JSON string under a URI-named claim', async () => {
    const space = await fixture.sign(fixtureKey, { iss: 'https://space.example', aud: 'shop-api', sub: 's1', scope: 'openid customer email' });
    const comma = await fixture.sign(fixtureKey, { iss: 'https://comma.example', aud: 'shop-api', sub: 'c1', groups: 'staff, customer' });
    const json = await fixture.sign(fixtureKey, {
      iss: 'https://json.example',
      aud: 'shop-api',
      sub: 'ignored',
      'https://example.com/claims': { roles: '["customer","staff"]', uid: 'j1' },
    });
    for (const token of [space, comma, json]) expect((await call(server, '/api/v1.0/customer', token)).status).toBe(200);
    expect(await whoami(json)).toMatchObject({ status: 200, body: { me: [{ uid: 'j1' }] } });
    // A claim of another shape than the format says holds no role.
    const wrongShape = await fixture.sign(fixtureKey, { iss: 'https://comma.example', aud: 'shop-api', sub: 'c2', groups: ['customer'] });
    expect((await call(server, '/api/v1.0/customer', wrongShape)).status).toBe(403);
  });

  it('maps a token to a local user with a UserQuery, and refuses one with no local user (403 unknown_user)', async () => {
    const known = await fixture.sign(fixtureKey, { iss: 'https://idp.local.example', aud: 'local-api', sub: 'x', preferred_username: LOCAL_USER });
    expect(await call(server, '/local/v1.0/me', known)).toMatchObject({ status: 200, body: { me: [{ user_name: LOCAL_USER }] } });
    const unknown = await fixture.sign(fixtureKey, { iss: 'https://idp.local.example', aud: 'local-api', sub: 'y', preferred_username: 'nobody-here' });
    expect((await call(server, '/local/v1.0/me', unknown)).status).toBe(403);
    // A claim that is not text or a whole number is never sent to the query.
    const object = await fixture.sign(fixtureKey, { iss: 'https://idp.local.example', aud: 'local-api', sub: 'z', preferred_username: { $ne: 1 } });
    expect((await call(server, '/local/v1.0/me', object)).status).toBe(403);
    expect(await logged(server, 'unknown_user')).toBe(true);
  });

  it("refuses a user id that is not one of the backend's (a text id with a space at an end): 403 unknown_user", async () => {
    const token = await fixture.sign(fixtureKey, { iss: 'https://space.example', aud: 'shop-api', sub: ' alice', scope: 'customer' });
    expect((await whoami(token)).status).toBe(403);
  });
});

describe('keys that rotate', () => {
  it('admits a token signed with a key the provider has just added, fetching the set once', async () => {
    const old = await provider.token('alice');
    expect((await whoami(old)).status).toBe(200);
    await provider.stop();
    await provider.start([rsa2, rsa1, ec1, ed1]);
    await sleep(2100); // the refetch interval of this server (IDP_REFETCH_SECONDS=2)
    const before = provider.keyRequests;
    const fresh = await provider.token('alice');
    expect(JSON.parse(Buffer.from(fresh.split('.')[0]!, 'base64url').toString()).kid).toBe('rsa2');
    expect((await whoami(fresh)).status).toBe(200);
    expect(provider.keyRequests - before).toBeGreaterThanOrEqual(1);
    expect((await whoami(old)).status).toBe(200);
  });

  it('refuses a token of a key the provider removed, once the set is fetched again, though it was remembered', async () => {
    const old = await fixture.sign({ ...rsa1 }, { iss: provider.issuer, aud: 'shop-api', sub: 'alice', roles: ['customer'] });
    expect((await whoami(old)).status).toBe(200);
    await provider.stop();
    await provider.start([rsa2, ec1, ed1]);
    await sleep(2100);
    // Any token naming an unknown key makes the server fetch the set again: rsa1 is gone from it.
    const unknown = await fixture.sign({ ...attackerKey, kid: `k-${randomUUID()}` }, { iss: provider.issuer, aud: 'shop-api', sub: 'x' });
    expect((await whoami(unknown)).status).toBe(401);
    expect(await whoami(old)).toMatchObject({ status: 401, description: 'token key (kid) is not known' });
    expect((await whoami(await provider.token('alice'))).status).toBe(200);
  });

  it('under a flood of unknown kids fetches the set at most once per 30 s (the default), and serves valid callers', async () => {
    const defaults = await startBuiltServer({ root: ROOT });
    try {
      const valid = await provider.token('alice', { alg: 'ES256' });
      expect((await whoami(valid, defaults)).status).toBe(200);
      const before = provider.keyRequests;
      const flood = Array.from({ length: 20 }, async () => {
        const answers: number[] = [];
        for (let i = 0; i < 20; i++) {
          const token = await fixture.sign({ ...attackerKey, kid: `flood-${randomUUID()}` }, { iss: provider.issuer, aud: 'shop-api', sub: 'x' });
          answers.push((await whoami(token, defaults)).status);
        }
        return answers;
      });
      const served: number[] = [];
      for (let i = 0; i < 20; i++) served.push((await whoami(valid, defaults)).status);
      const refused = (await Promise.all(flood)).flat();
      expect(refused).toHaveLength(400);
      expect(new Set(refused)).toEqual(new Set([401]));
      expect(new Set(served)).toEqual(new Set([200]));
      expect(provider.keyRequests - before).toBeLessThanOrEqual(1);
    } finally {
      await defaults.stop();
    }
  }, 60_000);
});

describe('a provider that goes away', () => {
  it('serves with the last good keys through the stale window, then answers 503 with Retry-After and /readyz names it; recovers by itself', async () => {
    const token = await provider.token('alice');
    expect((await whoami(token)).status).toBe(200);
    await provider.stop();
    // A server started now has no keys of this provider: 503, never 401, and it is not ready.
    const late = await startBuiltServer({ root: ROOT, env });
    try {
      const first = await whoami(token, late);
      expect(first).toMatchObject({ status: 503 });
      expect(Number(first.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(await logged(late, 'idp_unavailable')).toBe(true);
      const ready = await send(`${late.url}/readyz`);
      expect(ready.status).toBe(503);
      expect((ready.json() as { reason: string }).reason).toContain(`identity provider ${provider.issuer}`);

      // The running server kept its keys: they serve while fresh (at least 1 minute), then for the stale window (4 s here).
      expect((await whoami(token)).status).toBe(200);
      let answer = await whoami(token);
      const started = Date.now();
      while (answer.status === 200 && Date.now() - started < 90_000) {
        await sleep(500);
        answer = await whoami(token);
      }
      expect(answer.status).toBe(503);
      expect(Number(answer.retryAfter)).toBeGreaterThanOrEqual(1);
      expect((await send(`${server.url}/readyz`)).status).toBe(503);
      // The backend's own tokens and the other issuers' are unaffected.
      const keycloak = await fixture.sign(fixtureKey, { iss: KEYCLOAK, aud: 'account', preferred_username: 'kc-user' });
      expect((await whoami(keycloak)).status).toBe(200);

      await provider.start();
      for (const target of [server, late]) {
        let back = await whoami(token, target);
        for (let waited = 0; back.status !== 200 && waited < 15_000; waited += 250) {
          await sleep(250);
          back = await whoami(token, target);
        }
        expect(back.status).toBe(200);
        expect((await send(`${target.url}/readyz`)).status).toBe(200);
      }
    } finally {
      await late.stop();
    }
  }, 150_000);

  it('counts key fetches by issuer and outcome in /metrics', async () => {
    const text = await (await fetch(`${server.adminUrl}/metrics`)).text();
    expect(text).toContain(`xmlrest_idp_key_fetches_total{issuer="${provider.issuer}",outcome="ok"}`);
    expect(text).toMatch(new RegExp(`xmlrest_idp_key_fetches_total\\{issuer="${provider.issuer.replaceAll('.', '\\.')}",outcome="unreachable"\\} [1-9]`));
  });
});

describe('discovery', () => {
  it('refuses to start when a discovery document names another issuer, and says why', async () => {
    fixture.discoveryIssuer = 'https://impostor.example';
    try {
      const refused = startBuiltServer({ root: ROOT, env });
      await expect(refused).rejects.toThrow(/exited with code 1/);
      await expect(refused).rejects.toThrow(/names the issuer \\"https:\/\/impostor.example\\", not \\"https:\/\/discovered.example\\"/);
    } finally {
      fixture.discoveryIssuer = DISCOVERED;
    }
  });

  it("reads a discovered issuer's key set", async () => {
    const token = await fixture.sign(fixtureKey, { iss: DISCOVERED, aud: 'shop-api', sub: 'd1' });
    expect(await whoami(token)).toMatchObject({ status: 200, body: { me: [{ uid: 'd1' }] } });
  });
});

describe('explaining access for an outside user', () => {
  const run = promisify(execFile);
  const xmlrest = async (...args: string[]) => {
    try {
      const { stdout } = await run(process.execPath, ['--import', 'tsx', 'scripts/cli/xmlrest.ts', ...args], {
        cwd: ROOT,
        env: { ...process.env, DATABASE_URL: inject('databaseUrl') },
      });
      return { code: 0, stdout };
    } catch (error) {
      const failed = error as { code: number; stdout: string; stderr: string };
      return { code: failed.code, stdout: failed.stdout + failed.stderr };
    }
  };
  const claimsFile = (name: string, content: string) => {
    const file = path.join(ROOT, name);
    writeFileSync(file, content);
    return file;
  };

  it('xmlrest explain --claims answers from a payload or a token, mapping roles as the server does', async () => {
    const entra = claimsFile('entra.json', JSON.stringify({ iss: ENTRA, aud: 'api://shop', oid: 'e-1', roles: ['Shop.Admin'] }));
    const allowed = await xmlrest('explain', '--claims', entra, 'GET', '/api/v1.0/admin');
    expect(allowed.code).toBe(0);
    expect(allowed.stdout).toContain('allowed: e-1 may call GET /api/v1.0/admin on backend api');
    expect(allowed.stdout).toContain('e-1 holds: admin');

    const keycloak = claimsFile(
      'keycloak.jwt',
      await fixture.sign(fixtureKey, { iss: KEYCLOAK, aud: 'account', preferred_username: 'kc-user', realm_access: { roles: ['customer'] } }),
    );
    const denied = await xmlrest('explain', '--claims', keycloak, 'GET', '/api/v1.0/admin', '--json');
    expect(denied.code).toBe(1);
    expect(JSON.parse(denied.stdout)).toEqual({ allowed: false, backend: 'api', needs: ['admin'], holds: ['customer'], reason: 'kc-user holds none of admin' });

    const foreign = claimsFile('foreign.json', JSON.stringify({ iss: 'https://evil.example', aud: 'shop-api', sub: 'm', roles: ['admin'] }));
    const refused = await xmlrest('explain', '--claims', foreign, 'GET', '/api/v1.0/admin');
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('backend api accepts no token of the issuer https://evil.example');

    const audience = claimsFile('audience.json', JSON.stringify({ iss: ENTRA, aud: 'api://other', oid: 'e-1', roles: ['Shop.Admin'] }));
    expect((await xmlrest('explain', '--claims', audience, 'GET', '/api/v1.0/admin')).stdout).toContain(
      "the token's audience (api://other) holds none of api://shop",
    );
    expect((await xmlrest('explain', '--claims', entra, 'GET', '/api/v1.0/admin', 'extra')).code).toBe(2);
  });

  it("runs an issuer's UserQuery against the database, as the server does", async () => {
    const known = claimsFile('known.json', JSON.stringify({ iss: 'https://idp.local.example', aud: 'local-api', preferred_username: LOCAL_USER }));
    const answer = await xmlrest('explain', '--claims', known, 'GET', '/local/v1.0/me');
    expect(answer.code).toBe(0);
    expect(answer.stdout).toMatch(/allowed: [0-9]+ may call GET \/local\/v1.0\/me/);
    const unknown = claimsFile('unknown.json', JSON.stringify({ iss: 'https://idp.local.example', aud: 'local-api', preferred_username: 'nobody-here' }));
    const refused = await xmlrest('explain', '--claims', unknown, 'GET', '/local/v1.0/me');
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('finds no local user for these claims');
  });

  const operator = async () => {
    const response = await send(`${server.url}/api/`, { method: 'POST', ...formBody({ auth: 'bearer', userid: OPERATOR, password: 'operator-pass-1' }) });
    expect(response.status).toBe(200);
    return `Bearer ${(response.json() as { token: string }).token}`;
  };

  it("the console's access page answers the same", async () => {
    const answer = await send(`${server.url}/_console/api/b/api/explain-claims`, {
      method: 'POST',
      headers: { authorization: await operator(), 'x-xmlrest-console': '1', 'content-type': 'application/json' },
      body: JSON.stringify({
        claims: { iss: ENTRA, aud: 'api://shop', oid: 'e-2', roles: ['Shop.Admin', 'customer'] },
        method: 'GET',
        path: '/api/v1.0/customer',
      }),
    });
    expect(answer.status).toBe(200);
    expect(answer.json()).toMatchObject({ allowed: false, backend: 'api', needs: ['customer'], holds: ['admin'], user: 'e-2' });
  });

  it("opens the console to an outside user only through an explicit Role mapping, never a provider's role of the console role's name", async () => {
    const console = (token: string) => send(`${server.url}/_console/api/b/api/resources`, { headers: { authorization: `Bearer ${token}` } });
    const passedThrough = await fixture.sign(fixtureKey, {
      iss: KEYCLOAK,
      aud: 'account',
      preferred_username: 'kc-op',
      realm_access: { roles: ['xmlrest-operator'] },
    });
    expect((await console(passedThrough)).status).toBe(403);
    expect((await console((await operator()).slice('Bearer '.length))).status).toBe(200);
  });

  it("xmlrest doctor fetches every issuer's keys and says what is wrong", async () => {
    fixture.discoveryIssuer = 'https://impostor.example';
    try {
      const { stdout } = await xmlrest('doctor');
      expect(stdout).toMatch(
        new RegExp(`ok {3}identity provider ${provider.issuer.replaceAll('.', '\\.')} \\(backend api\\): 3 keys \\(RSA, EC P-256, OKP Ed25519\\)`),
      );
      expect(stdout).toContain(`ok   identity provider ${KEYCLOAK} (backend api): 1 keys (RSA)`);
      expect(stdout).toContain(
        `FIX  identity provider ${DISCOVERED} (backend api): the discovery document ${fixture.discoveryUrl} names the issuer "https://impostor.example"`,
      );
    } finally {
      fixture.discoveryIssuer = DISCOVERED;
    }
  });
});
