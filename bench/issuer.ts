import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { exportJWK, generateKeyPair, importJWK, type JWK, SignJWT } from 'jose';

/**
 * The benchmark's identity provider (docs/contract.md §9): a loopback key
 * set (RS256 and ES256 keys) at a fixed port, which bench/resources/api/backend.xml
 * names in its Issuer, and tokens signed with its keys. It counts the
 * requests for its keys: under a flood of unknown kids the server may ask at
 * most once per 30 s.
 */
export const BENCH_IDP_PORT = 47_811;
export const BENCH_IDP_ISSUER = 'https://idp.bench.example';

export interface BenchIssuer {
  readonly keyRequests: number;
  /** A provider token for user `sub`, holding the role `member`, signed with RS256 or ES256. */
  token(alg: 'RS256' | 'ES256', sub: string): Promise<string>;
  /**
   * Distinct forged tokens, more than a backend remembers as refused (10,000): half name a kid of the set with
   * a signature of random bytes, half name kids the set does not hold. Each is checked afresh.
   */
  floodTokens(count: number, sub: string): string[];
  close(): Promise<void>;
}

export async function startBenchIssuer(): Promise<BenchIssuer> {
  const keys = new Map<string, { alg: 'RS256' | 'ES256'; private: JWK; public: JWK }>();
  for (const [alg, kid] of [
    ['RS256', 'bench-rsa'],
    ['ES256', 'bench-ec'],
  ] as const) {
    const pair = await generateKeyPair(alg, { extractable: true });
    keys.set(alg, { alg, private: await exportJWK(pair.privateKey), public: { ...(await exportJWK(pair.publicKey)), kid, use: 'sig' } });
  }
  let keyRequests = 0;
  const server: Server = createServer((request, response) => {
    if (request.url !== '/keys') {
      response.writeHead(404);
      response.end();
      return;
    }
    keyRequests++;
    response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=600' });
    response.end(JSON.stringify({ keys: [...keys.values()].map((key) => key.public) }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) => reject(new Error(`the bench's identity provider cannot listen on 127.0.0.1:${BENCH_IDP_PORT}: ${error.message}`)));
    server.listen(BENCH_IDP_PORT, '127.0.0.1', () => resolve());
  });
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return {
    get keyRequests() {
      return keyRequests;
    },
    async token(alg, sub) {
      const key = keys.get(alg)!;
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({ sub, roles: ['member'], iat: now, exp: now + 3600 })
        .setProtectedHeader({ alg, kid: key.public.kid!, typ: 'at+jwt' })
        .setIssuer(BENCH_IDP_ISSUER)
        .setAudience('bench-api')
        .sign(await importJWK(key.private, alg));
    },
    floodTokens(count, sub) {
      const now = Math.floor(Date.now() / 1000);
      return Array.from({ length: count }, (_, i) => {
        const kid = i % 2 === 0 ? 'bench-rsa' : `unknown-${randomUUID()}`;
        const claims = { iss: BENCH_IDP_ISSUER, aud: 'bench-api', sub, roles: ['member'], iat: now, exp: now + 3600, jti: randomUUID() };
        return `${part({ alg: 'RS256', kid, typ: 'at+jwt' })}.${part(claims)}.${randomBytes(256).toString('base64url')}`;
      });
    },
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
