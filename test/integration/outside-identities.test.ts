import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Server as NetServer } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { importJWK, SignJWT } from 'jose';
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectTo } from '../../scripts/connection.js';
import { addUser } from '../../scripts/schema.js';
import { type BuiltServer, startBuiltServer } from '../support/built-server.js';
import { formBody, send } from '../support/http.js';
import { type PrivateJwk, publicJwk, signingKey, startTestProvider, type TestProvider } from '../support/identity-provider.js';
import { buildScratchProject } from '../support/scratch-project.js';

/**
 * Outside identities bound to their issuer, and key fetches a discovery document cannot steer (issue 40, holes 5
 * and 9; docs/internals/contract.md §9), at the door of the built server: two real OpenID Providers (oidc-provider, twice)
 * whose clients share a subject with each other and with a local user, and a provider served over https whose
 * discovery documents name key sets, one of them on a plain-http port of the server's own machine.
 */
const ROOT = path.resolve('test/.tmp/outside-identities');
/** Apart from the project, which its build empties. */
const TLS = path.resolve('test/.tmp/outside-identities-tls');
const LOCAL_NAME = 'bind-local-user';
const MAIL_NAME = 'bind-mail@example.com';

let connection: mysql.Connection;
let localId: number;
let mailId: number;
let providerA: TestProvider;
let providerB: TestProvider;
let key: PrivateJwk;
let https: NetServer & { closeAllConnections(): void };
let httpsBase: string;
/** A plain-http service on the server's machine, which no discovery document may aim the server at. */
let service: Server;
const serviceRequests: string[] = [];
let server: BuiltServer;

async function listen(target: NetServer): Promise<number> {
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', () => resolve()));
  return (target.address() as AddressInfo).port;
}

beforeAll(async () => {
  mkdirSync(TLS, { recursive: true });
  connection = await connectTo(inject('databaseUrl'));
  localId = await addUser(connection, LOCAL_NAME, 'bind-pass-1', ['member']);
  mailId = await addUser(connection, MAIL_NAME, 'bind-pass-2', ['member']);
  // Two providers, each with a client whose sub is the local user's id.
  key = await signingKey('RS256', 'bind-rsa');
  const clients = { [String(localId)]: {} };
  providerA = await startTestProvider({ keys: [await signingKey('RS256', 'a-rsa')], clients });
  providerB = await startTestProvider({ keys: [await signingKey('RS256', 'b-rsa')], clients });

  service = createHttpServer((request, response) => {
    serviceRequests.push(request.url ?? '');
    response.writeHead(200, { 'content-type': 'text/plain' });
    response.end('a private service');
  });
  const servicePort = await listen(service);

  // A provider over https, its certificate trusted by the server through NODE_EXTRA_CA_CERTS.
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'].concat([
      '-keyout',
      `${TLS}/key.pem`,
      '-out',
      `${TLS}/cert.pem`,
    ]),
    { stdio: 'ignore' },
  );
  https = createHttpsServer({ cert: readFileSync(`${TLS}/cert.pem`), key: readFileSync(`${TLS}/key.pem`) }, (request, response) => {
    const json = (body: unknown) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    if (request.url === '/good/.well-known/openid-configuration') return json({ issuer: `${httpsBase}/good`, jwks_uri: `${httpsBase}/good/keys` });
    if (request.url === '/good/keys') return json({ keys: [publicJwk(key)] });
    // The document steers the key fetch at a port of the server's own machine.
    if (request.url === '/steered/.well-known/openid-configuration')
      return json({ issuer: `${httpsBase}/steered`, jwks_uri: `http://127.0.0.1:${servicePort}/private` });
    response.writeHead(404);
    response.end();
  });
  httpsBase = `https://127.0.0.1:${await listen(https)}`;

  const discovery = (iss: string) => `iss="${iss}" audience="shop-api" discovery="${iss}/.well-known/openid-configuration"`;
  await buildScratchProject(ROOT, {
    databaseUrl: inject('databaseUrl'),
    files: {
      'resources/idpbind/backend.xml': `<Backend xmlns="urn:xmlrest:resource:1.0" auth_scheme="Bearer" issuer="idpbind" refresh_lifetime="3600">
  <Issuer ${discovery(providerA.issuer)}/>
  <Issuer ${discovery(providerB.issuer)}/>
  <Issuer ${discovery(`${httpsBase}/good`)}>
    <UserQuery>select user_id from usr where user_name = $claim.email</UserQuery>
  </Issuer>
  <Issuer ${discovery(`${httpsBase}/steered`)}/>
</Backend>
`,
      'resources/idpbind/whoami.xml': `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0" auth="*" audit="true">
  <Request method="GET"><Sql id="me">select cast($uid as char) as uid</Sql></Request>
</Resource>
`,
      'resources/idpbind/people.xml': `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0" auth="*">
  <Request method="GET">
    <Sql id="people">select u.user_id from usr u</Sql>
    <Page key="u.user_id" size="1"/>
  </Request>
</Resource>
`,
      'resources/idpbind/limited.xml': `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0" auth="*" rate_limit="2/h">
  <Request method="GET"><Sql id="one">select 1 as one</Sql></Request>
</Resource>
`,
    },
  });
  server = await startBuiltServer({ root: ROOT, env: { NODE_EXTRA_CA_CERTS: `${TLS}/cert.pem` } });
}, 180_000);

afterAll(async () => {
  await server?.stop();
  await providerA?.stop();
  await providerB?.stop();
  https?.closeAllConnections();
  https?.close();
  service?.close();
  await connection?.end();
  rmSync(ROOT, { recursive: true, force: true });
  rmSync(TLS, { recursive: true, force: true });
});

const get = (route: string, token: string) => send(`${server.url}/idpbind/v1.0/${route}`, { headers: { authorization: `Bearer ${token}` } });

async function signIn(): Promise<{ token: string; refresh_token: string }> {
  const response = await send(`${server.url}/idpbind/`, { method: 'POST', ...formBody({ auth: 'bearer', userid: LOCAL_NAME, password: 'bind-pass-1' }) });
  expect(response.status).toBe(200);
  return response.json() as { token: string; refresh_token: string };
}

describe('an outside identity is its issuer and its subject together (hole 5)', () => {
  it("keeps $uid the claim's value in SQL: both providers' client and the local user read the same id", async () => {
    const local = await signIn();
    for (const token of [await providerA.token(String(localId)), await providerB.token(String(localId)), local.token]) {
      const answer = await get('whoami', token);
      expect(answer.status).toBe(200);
      expect(answer.json()).toEqual({ me: [{ uid: String(localId) }] });
    }
  });

  it("logout scope=all with a provider's token ends none of the same-named local user's sessions", async () => {
    const local = await signIn();
    const outside = await providerA.token(String(localId));
    const logout = await send(`${server.url}/idpbind/v1.0/logout`, {
      method: 'POST',
      headers: { authorization: `Bearer ${outside}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'scope=all',
    });
    expect(logout.status).toBe(400);
    expect(logout.json()).toMatchObject({ status: 400, message: expect.stringContaining('sign out at the provider') });
    // The local user's session lives on: its refresh token still rotates, its access token still serves.
    const refreshed = await send(`${server.url}/idpbind/v1.0/token/refresh`, { method: 'POST', ...formBody({ refresh_token: local.refresh_token }) });
    expect(refreshed.status).toBe(201);
    expect((await get('whoami', local.token)).status).toBe(200);
  });

  it("counts a route's rate limit for each issuer's user apart, and apart from the local user", async () => {
    const a = await providerA.token(String(localId));
    expect((await get('limited', a)).status).toBe(200);
    expect((await get('limited', a)).status).toBe(200);
    expect((await get('limited', a)).status).toBe(429);
    // The same subject at another provider, and the local user of that id, are other callers.
    expect((await get('limited', await providerB.token(String(localId)))).status).toBe(200);
    expect((await get('limited', (await signIn()).token)).status).toBe(200);
  });

  it('names an outside user in the audit with its issuer, so that no two users are one row owner', async () => {
    for (const token of [await providerA.token(String(localId)), await providerB.token(String(localId)), (await signIn()).token]) {
      expect((await get('whoami', token)).status).toBe(200);
    }
    const wanted = [`${providerA.issuer} ${localId}`, `${providerB.issuer} ${localId}`, String(localId)];
    let users: string[] = [];
    // Rows of reads are written in batches after the answer.
    for (let waited = 0; waited < 10_000 && !wanted.every((user) => users.includes(user)); waited += 200) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      const [rows] = await connection.query("select distinct user_id from xmlrest_api_audit where backend = 'idpbind' and resource like 'whoami%'");
      users = (rows as { user_id: string }[]).map((row) => row.user_id);
    }
    expect(users.sort()).toEqual(wanted.sort());
  });

  it("opens a page's cursor for the caller it was made for, not for the same subject at another provider", async () => {
    const a = await providerA.token(String(localId));
    const first = await get('people', a);
    expect(first.status).toBe(200);
    const next = (first.json() as { next?: string }).next;
    expect(next).toEqual(expect.any(String));
    const after = `people?after=${encodeURIComponent(next!)}`;
    expect((await get(after, a)).status).toBe(200);
    const foreign = await get(after, await providerB.token(String(localId)));
    expect(foreign.status).toBe(400);
    expect((await get(after, (await signIn()).token)).status).toBe(400);
  });

  it('takes an email as a user id only when the token says it is verified', async () => {
    const sign = async (claims: Record<string, unknown>) => {
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({ iss: `${httpsBase}/good`, aud: 'shop-api', sub: 'mail-user', iat: now, exp: now + 600, ...claims })
        .setProtectedHeader({ alg: 'RS256', kid: key.kid })
        .sign(await importJWK(key, 'RS256'));
    };
    expect((await get('whoami', await sign({ email: MAIL_NAME }))).status).toBe(403);
    expect((await get('whoami', await sign({ email: MAIL_NAME, email_verified: false }))).status).toBe(403);
    const verified = await get('whoami', await sign({ email: MAIL_NAME, email_verified: true }));
    expect(verified.status).toBe(200);
    expect(verified.json()).toEqual({ me: [{ uid: String(mailId) }] });
  });
});

describe('a discovery document cannot steer the key fetch (hole 9)', () => {
  it('never fetches a plain-http key set that an https discovery document names, and /readyz names the issuer, not what the fetch met', async () => {
    expect(serviceRequests).toEqual([]);
    const ready = await send(`${server.url}/readyz`);
    expect(ready.status).toBe(503);
    const reason = String((ready.json() as { reason: string }).reason);
    expect(reason).toContain(`identity provider ${httpsBase}/steered`);
    const port = String((service.address() as AddressInfo).port);
    expect(reason).not.toContain(port);
    expect(reason).not.toMatch(/JSON|unreachable|ECONNREFUSED|answered|http:/);
    // The operator's log says what was refused, and so does xmlrest doctor.
    expect(server.logs.some((line) => String(line.problem ?? '').includes(`is http, which only a discovery document read over http`))).toBe(true);
    // Asynchronously: the providers answer from this process.
    const doctor = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'scripts/cli/xmlrest.ts', 'doctor'], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: inject('databaseUrl'), NODE_EXTRA_CA_CERTS: `${TLS}/cert.pem` },
    }).then(
      ({ stdout }) => stdout,
      (error: { stdout?: string }) => String(error.stdout),
    );
    expect(doctor).toContain(
      `FIX  identity provider ${httpsBase}/steered (backend idpbind): the jwks_uri of ${httpsBase}/steered/.well-known/openid-configuration is http`,
    );
    expect(serviceRequests).toEqual([]);
  });

  it('reads an https key set an https discovery document names', async () => {
    const now = Math.floor(Date.now() / 1000);
    const token = await new SignJWT({ iss: `${httpsBase}/good`, aud: 'shop-api', email: MAIL_NAME, email_verified: true, iat: now, exp: now + 600 })
      .setProtectedHeader({ alg: 'RS256', kid: key.kid })
      .sign(await importJWK(key, 'RS256'));
    expect((await get('whoami', token)).status).toBe(200);
  });
});
