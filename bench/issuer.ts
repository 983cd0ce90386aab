import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, importJWK, type JWK, SignJWT } from 'jose';
import { freePort } from '../scripts/mariadb.js';

/**
 * The benchmark's identity provider (docs/internals/contract.md §9): a loopback key
 * set (RS256 and ES256 keys) at a port free when it starts (`jwksUri`, which
 * bench/resources/api/backend.xml's Issuer names as ${BENCH_JWKS_URI}), and tokens signed with its keys. It counts the
 * requests for its keys: under a flood of unknown kids the server may ask at
 * most once per 30 s.
 */
export const BENCH_IDP_ISSUER = 'https://idp.bench.example';

export interface BenchIssuer {
  /** Where its key set is served. */
  jwksUri: string;
  /** The requests for the keys so far, and when each came (ms since the epoch). */
  keyRequests(): Promise<number[]>;
  /** A provider token for user `sub`, holding the role `member`, signed with RS256 or ES256. */
  token(alg: 'RS256' | 'ES256', sub: string): Promise<string>;
  /**
   * Distinct forged tokens, more than a backend remembers as refused (10,000): half name a kid of the set with
   * a signature of random bytes, half name kids the set does not hold. Each is checked afresh.
   */
  floodTokens(count: number, sub: string): string[];
  close(): Promise<void>;
}

/**
 * The key set is served by a process of its own: the bench's own process blocks while a load generator runs
 * (execFileSync), and a provider that cannot answer would look like an outage to the server.
 */
const SERVE_KEYS = `
const { createServer } = require('node:http');
const body = process.env.JWKS;
const times = [];
createServer((request, response) => {
  if (request.url === '/keys') {
    times.push(Date.now());
    response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=600' });
    response.end(body);
  } else if (request.url === '/requests') {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(times));
  } else {
    response.writeHead(404);
    response.end();
  }
}).listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write('ready\\n'));
`;

export async function startBenchIssuer(): Promise<BenchIssuer> {
  const keys = new Map<string, { alg: 'RS256' | 'ES256'; private: JWK; public: JWK }>();
  for (const [alg, kid] of [
    ['RS256', 'bench-rsa'],
    ['ES256', 'bench-ec'],
  ] as const) {
    const pair = await generateKeyPair(alg, { extractable: true });
    keys.set(alg, { alg, private: await exportJWK(pair.privateKey), public: { ...(await exportJWK(pair.publicKey)), kid, use: 'sig' } });
  }
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, ['-e', SERVE_KEYS], {
    env: { ...process.env, PORT: String(port), JWKS: JSON.stringify({ keys: [...keys.values()].map((key) => key.public) }) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve());
    child.once('exit', (code) => reject(new Error(`the bench's identity provider could not serve on 127.0.0.1:${port} (exit ${code})`)));
  });
  const base = `http://127.0.0.1:${port}`;
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return {
    jwksUri: `${base}/keys`,
    keyRequests: async () => (await (await fetch(`${base}/requests`)).json()) as number[],
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
    close: async () => {
      if (child.exitCode !== null) return;
      const gone = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await gone;
    },
  };
}
