import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimAt, providerRoles, rolesOf } from '../../runtime/auth/issuer/claims.js';
import { maxAgeOf } from '../../runtime/auth/issuer/fetch.js';
import { discoveredKeyUrlProblem, IssuerKeys } from '../../runtime/auth/issuer/keys.js';
import type { IssuerSettings } from '../../runtime/contract.js';
import { HttpError } from '../../runtime/errors.js';
import { publicJwk, signingKey } from '../support/identity-provider.js';

/**
 * An outside issuer's keys (runtime/auth/issuer/keys.ts) against a loopback
 * server that answers as a test says: the bounds of docs/internals/contract.md §9 on
 * what is fetched (time, size, number of keys, redirects, private keys), how
 * long a set is kept, and one fetch per interval however many ask.
 */
type Handler = (request: IncomingMessage, response: ServerResponse) => void;
let handler: Handler;
let server: Server;
let base: string;
const paths: string[] = [];
let publicKey: object;

beforeAll(async () => {
  publicKey = publicJwk(await signingKey('ES256', 'k1'));
  server = createServer((request, response) => {
    paths.push(request.url ?? '');
    handler(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const settings = (keys: IssuerSettings['keys']): IssuerSettings => ({
  iss: 'https://issuer.example',
  audience: ['api'],
  keys,
  algorithms: ['ES256'],
  clockSkew: 30,
  roles: { path: ['roles'], format: 'array' },
  roleMap: [],
  mapOnly: false,
  user: ['sub'],
  userQuery: null,
});

function keysAt(path: string, timings: { refetchSeconds?: number; fetchTimeoutMs?: number } = {}) {
  const outcomes: string[] = [];
  const problems: string[] = [];
  const keys = new IssuerKeys(
    settings({ jwksUri: `${base}${path}` }),
    { staleSeconds: 3600, refetchSeconds: timings.refetchSeconds ?? 30, fetchTimeoutMs: timings.fetchTimeoutMs },
    { fetched: (_iss, outcome) => outcomes.push(outcome), failed: (_iss, problem) => problems.push(problem) },
  );
  return { keys, outcomes, problems };
}

const json =
  (body: unknown, headers: Record<string, string> = {}): Handler =>
  (_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json', ...headers });
    response.end(JSON.stringify(body));
  };

describe('fetching a key set', () => {
  it('keeps a set for its max-age, bounded to 1 minute .. 1 day, 10 minutes when it says nothing', async () => {
    for (const [header, seconds] of [
      [undefined, 600],
      ['max-age=5', 60],
      ['public, max-age=3600', 3600],
      ['max-age=9999999', 86_400],
      ['no-store', 60],
    ] as const) {
      handler = json({ keys: [publicKey] }, header ? { 'cache-control': header } : {});
      const { keys, outcomes } = keysAt('/keys');
      const before = Date.now();
      await keys.load();
      expect(outcomes, header).toEqual(['ok']);
      expect(keys.freshUntil! - before, header).toBeGreaterThanOrEqual(seconds * 1000 - 50);
      expect(keys.freshUntil! - Date.now(), header).toBeLessThanOrEqual(seconds * 1000);
    }
  });

  it('refuses an answer over 256 KB, with or without a Content-Length', async () => {
    const big = JSON.stringify({ keys: [publicKey], padding: 'x'.repeat(300 * 1024) });
    for (const chunked of [false, true]) {
      handler = (_request, response) => {
        response.writeHead(200, chunked ? { 'content-type': 'application/json' } : { 'content-length': String(big.length) });
        if (chunked) for (let i = 0; i < big.length; i += 16_384) response.write(big.slice(i, i + 16_384));
        response.end(chunked ? undefined : big);
      };
      const { keys, outcomes } = keysAt('/big');
      await keys.load();
      expect(outcomes).toEqual(['too_large']);
      expect(keys.lastProblem).toMatch(/more than 262144 bytes/);
    }
  });

  it('never follows a redirect', async () => {
    handler = (request, response) => {
      if (request.url === '/moved') return json({ keys: [publicKey] })(request, response);
      response.writeHead(302, { location: `${base}/moved` });
      response.end();
    };
    paths.length = 0;
    const { keys, outcomes } = keysAt('/redirecting');
    await keys.load();
    expect(outcomes).toEqual(['redirect']);
    expect(paths).toEqual(['/redirecting']);
  });

  it('gives up on a provider that does not answer in time', async () => {
    handler = () => {};
    const { keys, outcomes } = keysAt('/silent', { fetchTimeoutMs: 200 });
    const started = Date.now();
    await keys.load();
    expect(Date.now() - started).toBeLessThan(2000);
    expect(outcomes).toEqual(['timeout']);
  });

  it('refuses a set of more than 100 keys, a set holding a private key, and what is not a key set', async () => {
    const key = (i: number) => ({ ...publicKey, kid: `k${i}` });
    for (const [body, outcome] of [
      [{ keys: Array.from({ length: 101 }, (_, i) => key(i)) }, 'too_large'],
      [{ keys: [{ ...publicKey, d: 'c2VjcmV0' }] }, 'malformed'],
      [{ keys: [{ kty: 'oct', k: 'c2VjcmV0' }] }, 'malformed'],
      [{ keys: 'none' }, 'malformed'],
      [[1, 2, 3], 'malformed'],
    ] as const) {
      handler = json(body);
      const { keys, outcomes } = keysAt('/odd');
      await keys.load();
      expect(outcomes, JSON.stringify(body).slice(0, 60)).toEqual([outcome]);
    }
    handler = json({ keys: Array.from({ length: 100 }, (_, i) => key(i)) });
    const { keys, outcomes } = keysAt('/hundred');
    await keys.load();
    expect(outcomes).toEqual(['ok']);
  });

  it('fetches once per refetch interval however many tokens name unknown keys', async () => {
    handler = json({ keys: [publicKey] });
    paths.length = 0;
    const { keys } = keysAt('/counted', { refetchSeconds: 30 });
    await keys.load();
    const refetched = await Promise.all(Array.from({ length: 50 }, () => keys.refetch()));
    expect(refetched.every((fetched) => fetched === false)).toBe(true);
    expect(paths).toEqual(['/counted']);
  });

  it('answers 503 with Retry-After, never 401, when no keys were ever had', async () => {
    handler = (_request, response) => {
      response.writeHead(500);
      response.end();
    };
    const { keys, outcomes } = keysAt('/failing', { refetchSeconds: 30 });
    await keys.load();
    expect(outcomes).toEqual(['status']);
    const error = await keys.current().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(HttpError);
    expect(error).toMatchObject({ status: 503, reason: 'idp_unavailable' });
    expect(Number((error as HttpError).headers['Retry-After'])).toBeGreaterThanOrEqual(29);
    // What the fetch met is for the log and doctor; the public /readyz names the issuer only.
    expect(keys.lastProblem).toBe(`${base}/failing answered 500`);
    expect(keys.unavailable()).toBe('identity provider https://issuer.example: its keys cannot be used (the log and xmlrest doctor say why)');
  });

  it('reads a discovery document, and refuses one that names another issuer', async () => {
    handler = (request, response) => {
      if (request.url === '/.well-known/openid-configuration') return json({ issuer: 'https://other.example', jwks_uri: `${base}/keys` })(request, response);
      return json({ keys: [publicKey] })(request, response);
    };
    const keys = new IssuerKeys(
      settings({ discovery: `${base}/.well-known/openid-configuration` }),
      { staleSeconds: 1, refetchSeconds: 1 },
      { fetched() {}, failed() {} },
    );
    await keys.load();
    expect(keys.misconfigured).toBe(
      `the discovery document ${base}/.well-known/openid-configuration names the issuer "https://other.example", not "https://issuer.example"`,
    );
    expect(keys.freshUntil).toBeUndefined();
  });

  it('takes from a discovery document an https key set, and a loopback http one only from a loopback http document', () => {
    expect(discoveredKeyUrlProblem('https://sso.example.com/keys', 'https://sso.example.com/.well-known/openid-configuration')).toBeUndefined();
    expect(discoveredKeyUrlProblem('https://127.0.0.1:8443/keys', 'https://sso.example.com/.well-known/openid-configuration')).toBeUndefined();
    expect(discoveredKeyUrlProblem('http://127.0.0.1:4455/jwks', 'http://127.0.0.1:4455/.well-known/openid-configuration')).toBeUndefined();
    for (const steered of ['http://127.0.0.1:6379/', 'http://localhost:9200/keys', 'http://[::1]:2375/keys']) {
      expect(discoveredKeyUrlProblem(steered, 'https://sso.example.com/.well-known/openid-configuration')).toMatch(/^is http, which only/);
    }
    expect(discoveredKeyUrlProblem('http://10.0.0.5/keys', 'http://127.0.0.1:4455/.well-known/openid-configuration')).toMatch(/not loopback/);
    expect(discoveredKeyUrlProblem('file:///etc/passwd', 'http://127.0.0.1:4455/.well-known/openid-configuration')).toMatch(/not file/);
  });

  it('reads max-age as Cache-Control says it', () => {
    expect(maxAgeOf(null)).toBeUndefined();
    expect(maxAgeOf('max-age=120')).toBe(120);
    expect(maxAgeOf('public, MAX-AGE=300, must-revalidate')).toBe(300);
    expect(maxAgeOf('no-cache')).toBe(0);
    expect(maxAgeOf('max-age=abc')).toBeUndefined();
  });
});

describe('claims', () => {
  const issuer = (overrides: Partial<IssuerSettings>): IssuerSettings => ({ ...settings({ jwksUri: 'https://x' }), ...overrides });

  it('follows a claim path, quoted URI names included, and reads only the payload’s own members', () => {
    const payload = JSON.parse('{"realm_access":{"roles":["a"]},"https://example.com/claims":{"roles":["b"]},"__proto__":{"polluted":1}}');
    expect(claimAt(payload, ['realm_access', 'roles'])).toEqual(['a']);
    expect(claimAt(payload, ['https://example.com/claims', 'roles'])).toEqual(['b']);
    expect(claimAt(payload, ['toString'])).toBeUndefined();
    expect(claimAt(payload, ['realm_access', 'roles', '0'])).toBeUndefined();
  });

  it('reads each role format, and a claim of another shape as no role', () => {
    expect(providerRoles({ r: ['a', 'b', 3, ''] }, { path: ['r'], format: 'array' })).toEqual(['a', 'b']);
    expect(providerRoles({ r: ' a  b ' }, { path: ['r'], format: 'space' })).toEqual(['a', 'b']);
    expect(providerRoles({ r: 'a, b,,c' }, { path: ['r'], format: 'comma' })).toEqual(['a', 'b', 'c']);
    expect(providerRoles({ r: '["a","b"]' }, { path: ['r'], format: 'json' })).toEqual(['a', 'b']);
    expect(providerRoles({ r: '["a"' }, { path: ['r'], format: 'json' })).toEqual([]);
    expect(providerRoles({ r: 'a' }, { path: ['r'], format: 'array' })).toEqual([]);
    expect(providerRoles({ r: ['a'] }, { path: ['r'], format: 'space' })).toEqual([]);
    expect(providerRoles({}, { path: ['r'], format: 'array' })).toEqual([]);
  });

  it('maps roles, passes the others through unless map_only, and maps one name to several', () => {
    const roleMap = [
      { from: 'Shop.Admin', to: 'admin' },
      { from: 'Shop.Admin', to: 'staff' },
    ];
    expect(rolesOf({ roles: ['Shop.Admin', 'customer'] }, issuer({ roleMap }), 'operator')).toEqual(['admin', 'staff', 'customer']);
    expect(rolesOf({ roles: ['Shop.Admin', 'customer'] }, issuer({ roleMap, mapOnly: true }), 'operator')).toEqual(['admin', 'staff']);
  });

  it('never passes the console role through: only a Role that maps to it gives it', () => {
    expect(rolesOf({ roles: ['operator', 'customer'] }, issuer({}), 'operator')).toEqual(['customer']);
    expect(rolesOf({ roles: ['IT.Ops'] }, issuer({ roleMap: [{ from: 'IT.Ops', to: 'operator' }] }), 'operator')).toEqual(['operator']);
  });
});
