import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from 'jose';
import type { AsymmetricSigningAlgorithm } from 'oidc-provider';

/**
 * Real outside parts for docs/contract.md §9: `oidc-provider` (a certified
 * OpenID Provider) on loopback, issuing real JWT access tokens by the client
 * credentials grant, and a fixture issuer (a loopback key set and tokens
 * signed with jose) for token shapes a provider of our own cannot make
 * (Keycloak's, Entra ID's, expired ones, forged ones).
 */

/** A private signing key as a JWK, with its kid. */
export type PrivateJwk = JWK & { kid: string };

export async function signingKey(alg: 'RS256' | 'ES256' | 'ES384' | 'EdDSA', kid: string): Promise<PrivateJwk> {
  const { privateKey } = await generateKeyPair(alg, { extractable: true, ...(alg === 'EdDSA' ? { crv: 'Ed25519' } : {}) });
  return { ...(await exportJWK(privateKey)), kid, use: 'sig' };
}

/** The public half of a private JWK. */
export function publicJwk(key: PrivateJwk): JWK {
  const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...rest } = key;
  return rest;
}

export interface TestProvider {
  /** The issuer: `http://127.0.0.1:<port>`. */
  issuer: string;
  port: number;
  /** Requests for the key set (/jwks) so far. */
  readonly keyRequests: number;
  /** An access token for the client (its sub is the client id), meant for the resource's audience, signed with `alg`. */
  token(client: string, options?: { alg?: 'RS256' | 'PS256' | 'ES256' | 'EdDSA'; audience?: string }): Promise<string>;
  /** Stops answering (the port is closed). */
  stop(): Promise<void>;
  /** Answers again on the same port, with these keys (a rotation) or the ones it had. */
  start(keys?: PrivateJwk[]): Promise<void>;
}

export interface TestProviderOptions {
  keys: PrivateJwk[];
  /** Each client's extra claims, by client id (its secret is `<id>-secret-...`). */
  clients: Record<string, Record<string, unknown>>;
  /** Cache-Control max-age of its key set; none when undefined. */
  jwksMaxAge?: number;
  port?: number;
}

export const clientSecret = (client: string) => `${client}-secret-for-the-test-provider-only`;

export async function startTestProvider(options: TestProviderOptions): Promise<TestProvider> {
  // Loaded here, not at the top: it warns on import (Node 20 is not its favourite), and unit tests use the key helpers only.
  const { default: Provider } = await import('oidc-provider');
  let keys = options.keys;
  let keyRequests = 0;
  let server: Server | undefined;
  let port = options.port ?? 0;
  const make = (issuer: string) => {
    const provider = new Provider(issuer, {
      clients: Object.keys(options.clients).map((client_id) => ({
        client_id,
        client_secret: clientSecret(client_id),
        grant_types: ['client_credentials'],
        redirect_uris: [],
        response_types: [],
      })),
      jwks: { keys },
      features: {
        devInteractions: { enabled: false },
        clientCredentials: { enabled: true },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => 'urn:test:RS256:shop-api',
          useGrantedResource: () => true,
          // The resource indicator says how to sign and for whom: urn:test:<alg>:<audience>.
          getResourceServerInfo: (_ctx: unknown, resource: string) => {
            const [, , alg = 'RS256', audience = 'shop-api'] = resource.split(':');
            return {
              scope: 'api',
              audience,
              accessTokenFormat: 'jwt' as const,
              accessTokenTTL: 600,
              jwt: { sign: { alg: alg as AsymmetricSigningAlgorithm } },
            };
          },
        },
      },
      ttl: { ClientCredentials: 600 },
      extraTokenClaims: (_ctx: unknown, token: { clientId?: string }) => options.clients[token.clientId ?? ''] ?? {},
    });
    provider.use(async (ctx, next) => {
      if (ctx.path === '/jwks') keyRequests++;
      await next();
      if (ctx.path === '/jwks' && options.jwksMaxAge !== undefined) ctx.set('cache-control', `max-age=${options.jwksMaxAge}`);
    });
    return provider;
  };
  const listen = async () => {
    // The issuer names the port, so the port is found first and kept across restarts.
    if (port === 0) port = await freePort();
    const provider = make(`http://127.0.0.1:${port}`);
    server = createServer(provider.callback());
    await new Promise<void>((resolve, reject) => {
      server!.once('error', reject);
      server!.listen(port, '127.0.0.1', () => resolve());
    });
  };
  await listen();
  const issuer = `http://127.0.0.1:${port}`;
  return {
    issuer,
    port,
    get keyRequests() {
      return keyRequests;
    },
    async token(client, { alg = 'RS256', audience = 'shop-api' } = {}) {
      const response = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(`${client}:${clientSecret(client)}`).toString('base64')}` },
        body: new URLSearchParams({ grant_type: 'client_credentials', resource: `urn:test:${alg}:${audience}`, scope: 'api' }),
      });
      const body = (await response.json()) as { access_token?: string; error_description?: string };
      if (!body.access_token) throw new Error(`the test provider issued no token: ${response.status} ${body.error_description}`);
      return body.access_token;
    },
    async stop() {
      const closing = server;
      server = undefined;
      if (!closing) return;
      closing.closeAllConnections();
      await new Promise<void>((resolve) => closing.close(() => resolve()));
    },
    async start(next) {
      if (next) keys = next;
      if (!server) await listen();
    },
  };
}

/**
 * A fixture issuer: its public keys on a loopback key set (GET /keys, counted),
 * and tokens signed here with any header and claims a test needs.
 */
export interface FixtureIssuer {
  jwksUri: string;
  /** Its discovery document, which names `discoveryIssuer` as the issuer and /keys as the key set. */
  discoveryUrl: string;
  discoveryIssuer: string;
  readonly keyRequests: number;
  /** Requests to any other path: a token's jku or x5u pointing here must never be followed. */
  readonly otherRequests: string[];
  sign(key: PrivateJwk, claims: JWTPayload, header?: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
}

export async function startFixtureIssuer(keys: PrivateJwk[]): Promise<FixtureIssuer> {
  let keyRequests = 0;
  const otherRequests: string[] = [];
  let port = 0;
  const fixture = { discoveryIssuer: 'https://discovered.example' };
  const server = createServer((request, response) => {
    if (request.url === '/.well-known/openid-configuration') {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ issuer: fixture.discoveryIssuer, jwks_uri: `http://127.0.0.1:${port}/keys` }));
      return;
    }
    if (request.url === '/keys') {
      keyRequests++;
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ keys: keys.map(publicJwk) }));
      return;
    }
    otherRequests.push(request.url ?? '');
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ keys: [] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  port = (server.address() as AddressInfo).port;
  return {
    jwksUri: `http://127.0.0.1:${port}/keys`,
    discoveryUrl: `http://127.0.0.1:${port}/.well-known/openid-configuration`,
    get discoveryIssuer() {
      return fixture.discoveryIssuer;
    },
    set discoveryIssuer(value: string) {
      fixture.discoveryIssuer = value;
    },
    get keyRequests() {
      return keyRequests;
    },
    otherRequests,
    async sign(key, claims, header = {}) {
      const alg = key.kty === 'RSA' ? 'RS256' : key.kty === 'OKP' ? 'EdDSA' : key.crv === 'P-384' ? 'ES384' : 'ES256';
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({ iat: now, exp: now + 600, ...claims })
        .setProtectedHeader({ alg, kid: key.kid, typ: 'JWT', ...header })
        .sign(await importPrivate(key, alg));
    },
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function importPrivate(key: PrivateJwk, alg: string) {
  const { importJWK } = await import('jose');
  return importJWK(key, alg);
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', () => resolve()));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
