import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import type { AsymmetricSigningAlgorithm } from 'oidc-provider';
import { DEMO_USERS } from './schema.js';

/**
 * A test OpenID Provider (oidc-provider, certified) on loopback, issuing JWT
 * access tokens by the client credentials grant: what the tests of outside
 * issuers (docs/internals/contract.md §9) sign in with, and, run as a command, what the
 * docs/guides/identity-providers.md tries against the demo:
 *
 *   npx tsx scripts/identity-provider.ts      (Ctrl-C stops it)
 *
 * Each demo user is a client of its own (`alice`, secret `alice-secret`), whose tokens carry its name as `sub`
 * (and `preferred_username`) and its roles as `roles`. Development only: keys in memory, nothing stored.
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

export const clientSecret = (client: string) => `${client}-secret`;

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

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', () => resolve()));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** The port the command listens on: docs/guides/identity-providers.md's commands name it. */
export const DEMO_PROVIDER_PORT = 4455;

/** The Issuer element for the demo's shop backend, and the commands that try it, as the command prints them. */
export function demoInstructions(issuer: string, demoUrl = 'http://127.0.0.1:3000'): string {
  return `A test OpenID Provider for the demo users is running at ${issuer} (Ctrl-C stops it).

Add this inside <Backend> in resources/shop/backend.xml, then run npm run demo again:

  <Issuer iss="${issuer}" audience="shop-api" discovery="${issuer}/.well-known/openid-configuration">
    <UserQuery>select user_id from usr where user_name = $claim.sub</UserQuery>
  </Issuer>

Then sign in as alice at the provider, and call the demo with its token:

  TOKEN=$(curl -s -u alice:alice-secret -d grant_type=client_credentials ${issuer}/token | sed 's/.*"access_token":"\\([^"]*\\)".*/\\1/')
  curl -H "Authorization: Bearer $TOKEN" ${demoUrl}/shop/v1.0/orders
`;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const keys = [await signingKey('RS256', 'demo-rsa'), await signingKey('ES256', 'demo-ec')];
  const clients = Object.fromEntries(DEMO_USERS.map((user) => [user.name, { preferred_username: user.name, roles: [...user.roles] }]));
  let provider: TestProvider;
  try {
    provider = await startTestProvider({ keys, clients, port: DEMO_PROVIDER_PORT });
  } catch (error) {
    process.stderr.write(`identity-provider: cannot listen on 127.0.0.1:${DEMO_PROVIDER_PORT}: ${(error as Error).message}\n`);
    process.exit(1);
  }
  process.stdout.write(demoInstructions(provider.issuer));
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void provider.stop().then(() => process.exit(0)));
}
