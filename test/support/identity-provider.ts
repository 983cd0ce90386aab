import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type JWTPayload, SignJWT } from 'jose';

/**
 * Real outside parts for docs/internals/contract.md §9: `oidc-provider` (a certified
 * OpenID Provider) on loopback, issuing real JWT access tokens by the client
 * credentials grant, and a fixture issuer (a loopback key set and tokens
 * signed with jose) for token shapes a provider of our own cannot make
 * (Keycloak's, Entra ID's, expired ones, forged ones).
 */

export {
  clientSecret,
  type PrivateJwk,
  publicJwk,
  signingKey,
  startTestProvider,
  type TestProvider,
  type TestProviderOptions,
} from '../../scripts/identity-provider.js';

import { type PrivateJwk, publicJwk } from '../../scripts/identity-provider.js';

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
