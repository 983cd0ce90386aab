import { execFile } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectTo } from '../../scripts/connection.js';
import { type BuiltServer, startBuiltServer } from '../support/built-server.js';
import { send } from '../support/http.js';
import { type FixtureIssuer, type PrivateJwk, signingKey, startFixtureIssuer } from '../support/identity-provider.js';
import { buildScratchProject } from '../support/scratch-project.js';
import { TEST_SECRET } from '../support/server.js';
import { newSecret, WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * Settings per environment (docs/internals/contract.md §7, issue 41 point 6): one backend.xml whose Issuer and Webhook
 * name environment variables, built once and started as a deployment would be, with its own values: the
 * issuer's tokens are taken and the events go to the URL the environment names; a variable unset, empty or
 * holding a wrong value stops `npm start` (its entry, dist/scripts/serve.js: the scratch build has no console page, which
 * scripts/start.mjs would call a stale build) with the variable named and no value printed.
 */
const ROOT = path.resolve('test/.tmp/environment-settings');
const ISSUER = 'https://sso.staging.example/realms/shop';
const SECRET = newSecret();
const receiver = new WebhookReceiver([SECRET]);
let fixture: FixtureIssuer;
let key: PrivateJwk;
let server: BuiltServer;

/** The values of this environment. */
const values = () => ({
  OIDC_ISSUER: ISSUER,
  OIDC_JWKS_URI: fixture.jwksUri,
  ORDERS_HOOK_URL: receiver.url,
  ORDERS_HOOK_SECRET: SECRET,
});

beforeAll(async () => {
  key = await signingKey('RS256', 'env-rsa');
  fixture = await startFixtureIssuer([key]);
  await receiver.up();
  const connection = await connectTo(inject('databaseUrl'));
  await connection.query('drop table if exists env_orders');
  await connection.query('create table env_orders (order_id int unsigned not null auto_increment primary key, placed_by varchar(64) not null)');
  await connection.end();
  await buildScratchProject(ROOT, {
    databaseUrl: inject('databaseUrl'),
    files: {
      'resources/env/backend.xml': `<Backend xmlns="urn:xmlrest:resource:1.0" auth_scheme="Bearer" issuer="env" uid_type="text">
  <Issuer iss="\${OIDC_ISSUER}" audience="shop-api" jwks_uri="\${OIDC_JWKS_URI}"/>
  <Webhook event="order.*" url="\${ORDERS_HOOK_URL}" secret="ORDERS_HOOK_SECRET"/>
</Backend>
`,
      'resources/env/orders.xml': `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0" auth="*">
  <Request method="POST">
    <Sql id="added" output="false">insert into env_orders (placed_by) values ($uid)</Sql>
    <Sql id="order">select placed_by from env_orders where order_id = $[added][0].insertId</Sql>
    <Emit event="order.placed" step="order"/>
  </Request>
</Resource>
`,
    },
  });
  server = await startBuiltServer({ root: ROOT, env: values() });
}, 180_000);

afterAll(async () => {
  await server?.stop();
  await fixture?.close();
  await receiver.down();
  rmSync(ROOT, { recursive: true, force: true });
});

const token = (iss: string) =>
  fixture.sign(key, { iss, aud: 'shop-api', sub: 'env-alice', exp: Math.floor(Date.now() / 1000) + 600, iat: Math.floor(Date.now() / 1000) });

describe('references resolved at start', () => {
  it('keeps the references in the built module and the API document, not the values', async () => {
    const { readFile } = await import('node:fs/promises');
    const module = await readFile(path.join(ROOT, 'generated/env/index.ts'), 'utf8');
    expect(module).toContain("iss: '${OIDC_ISSUER}'");
    expect(module).toContain("url: '${ORDERS_HOOK_URL}'");
    const openapi = (await send(`${server.url}/openapi.json`)).text;
    expect(openapi).toContain('${OIDC_ISSUER}');
    expect(openapi).not.toContain(ISSUER);
  });

  it("takes the issuer's tokens the environment names, and delivers the events to its URL", async () => {
    const answer = await send(`${server.url}/env/v1.0/orders`, { method: 'POST', headers: { authorization: `Bearer ${await token(ISSUER)}` } });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.json()).toMatchObject({ order: [{ placed_by: 'env-alice' }] });
    // A token naming the reference itself is an issuer nobody configured.
    const literal = await send(`${server.url}/env/v1.0/orders`, { method: 'POST', headers: { authorization: `Bearer ${await token('${OIDC_ISSUER}')}` } });
    expect(literal.status).toBe(401);
    for (let waited = 0; receiver.deliveries.length === 0 && waited < 30_000; waited += 100) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(receiver.deliveries.map((delivery) => [delivery.payload?.type, delivery.payload?.data])).toEqual([
      ['order.placed', { order: [{ placed_by: 'env-alice' }] }],
    ]);
  });
});

describe('the commands beside the server', () => {
  const explain = async (env: Record<string, string>) => {
    writeFileSync(path.join(ROOT, 'claims.json'), JSON.stringify({ iss: ISSUER, aud: 'shop-api', sub: 'env-alice' }));
    const { PATH, HOME } = process.env;
    const { stdout } = await promisify(execFile)(process.execPath, ['scripts/xmlrest.mjs', 'explain', '--claims', 'claims.json', 'POST', '/env/v1.0/orders'], {
      cwd: ROOT,
      env: { PATH, HOME, DATABASE_URL: inject('databaseUrl'), ...env },
    }).catch((error: { stdout: string }) => error);
    return stdout;
  };

  it('doctor fetches the keys of the issuer the environment names, and names a variable that is unset', async () => {
    const doctor = async (env: Record<string, string>) => {
      const { PATH, HOME } = process.env;
      const run = promisify(execFile)(process.execPath, ['scripts/xmlrest.mjs', 'doctor'], {
        cwd: ROOT,
        env: { PATH, HOME, DATABASE_URL: inject('databaseUrl'), JWT_SECRET: TEST_SECRET, ...env },
      });
      return run.then(({ stdout }) => ({ code: 0, stdout })).catch((error: { code: number; stdout: string }) => error);
    };
    const set = await doctor(values());
    expect(set.stdout).toContain(`ok   identity provider ${ISSUER} (backend env): 1 keys`);
    const unset = await doctor({ ...values(), OIDC_JWKS_URI: '' });
    expect(unset.code).not.toBe(0);
    expect(unset.stdout).toContain("OIDC_JWKS_URI is not set: backend env's Issuer ${OIDC_ISSUER} jwks_uri is ${OIDC_JWKS_URI}");
    expect(unset.stdout).not.toContain('identity provider');
  });

  it('explain judges a token by the issuer the environment names', async () => {
    expect(await explain(values())).toMatch(/^allowed: /);
    // Unset, the reference is what is accepted, and the answer shows it (no value to show).
    const unset = await explain({});
    expect(unset).toMatch(/^denied: /);
    expect(unset).toContain('${OIDC_ISSUER}');
  });
});

describe('npm start without a value', () => {
  const start = async (env: Record<string, string | undefined>) => {
    const environment = Object.fromEntries(
      Object.entries({
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        DATABASE_URL: inject('databaseUrl'),
        JWT_SECRET: TEST_SECRET,
        PORT: '0',
        ...env,
      }).filter((entry): entry is [string, string] => entry[1] !== undefined),
    );
    try {
      await promisify(execFile)(process.execPath, ['dist/scripts/serve.js'], { cwd: ROOT, env: environment, timeout: 60_000 });
      return { code: 0, output: '' };
    } catch (error) {
      const failed = error as { code: number; stdout: string; stderr: string };
      return { code: failed.code, output: failed.stdout + failed.stderr };
    }
  };

  it('refuses to start with a variable unset or empty, naming each, printing no value', async () => {
    const { code, output } = await start({ ...values(), OIDC_ISSUER: '', ORDERS_HOOK_URL: undefined });
    expect(code).not.toBe(0);
    expect(output).toContain("OIDC_ISSUER is not set: backend env's Issuer iss is ${OIDC_ISSUER}");
    expect(output).toContain("ORDERS_HOOK_URL is not set: backend env's Webhook url is ${ORDERS_HOOK_URL}");
    expect(output).not.toContain(fixture.jwksUri);
    expect(output).not.toContain(SECRET);
  });

  it('refuses a value that breaks the rules a value written out meets, naming the variable, not the value', async () => {
    const { code, output } = await start({
      ...values(),
      OIDC_JWKS_URI: 'http://keys.staging.example/jwks?tenant=jwks-s3cret',
      ORDERS_HOOK_URL: 'https://hook-user:hook-s3cret@hooks.staging.example/in',
    });
    expect(code).not.toBe(0);
    expect(output).toContain('OIDC_JWKS_URI is http to a host that is not loopback: use https');
    expect(output).toContain('ORDERS_HOOK_URL holds credentials');
    expect(output).not.toMatch(/s3cret|staging\.example/);
  });
});
