import { createSecretKey, randomBytes, webcrypto } from 'node:crypto';
import { jwtVerify } from 'jose';
import jwt from 'jsonwebtoken';

/**
 * Why the backend's own HS256 tokens stay on jsonwebtoken while identity providers' tokens use jose
 * (docs/performance.md, ARCHITECTURE.md): one token verified over and over by each, in interleaved rounds
 * so that the machine's drift meets both alike; the ratio is the median of each round's own.
 * `npx tsx bench/jose-hs256.ts [rounds] [verifications per round]`.
 */
const rounds = Number(process.argv[2] ?? 9);
const perRound = Number(process.argv[3] ?? 20_000);
const secret = randomBytes(32);
// Each library gets its key in its fastest form, made once: a KeyObject for jsonwebtoken (as runtime/auth/tokens/jwt.ts
// holds it), a WebCrypto CryptoKey for jose (a KeyObject or bytes it imports again on every call).
const key = createSecretKey(secret);
const cryptoKey = await webcrypto.subtle.importKey('raw', secret, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
const token = jwt.sign({ sub: '1', aud: 'customer', backend: 'shop' }, key, { algorithm: 'HS256', issuer: 'shop', expiresIn: 3600 });

function timeJsonwebtoken(): number {
  const start = process.hrtime.bigint();
  for (let i = 0; i < perRound; i++) jwt.verify(token, key, { algorithms: ['HS256'], issuer: 'shop' });
  return Number(process.hrtime.bigint() - start) / 1e6;
}

async function timeJose(): Promise<number> {
  const start = process.hrtime.bigint();
  for (let i = 0; i < perRound; i++) await jwtVerify(token, cryptoKey, { algorithms: ['HS256'], issuer: 'shop' });
  return Number(process.hrtime.bigint() - start) / 1e6;
}

const ratios: number[] = [];
timeJsonwebtoken();
await timeJose();
for (let round = 0; round < rounds; round++) {
  const a = round % 2 === 0 ? timeJsonwebtoken() : await timeJose();
  const b = round % 2 === 0 ? await timeJose() : timeJsonwebtoken();
  const [jsonwebtokenMs, joseMs] = round % 2 === 0 ? [a, b] : [b, a];
  ratios.push(joseMs / jsonwebtokenMs);
  console.log(
    `round ${round + 1}: jsonwebtoken ${jsonwebtokenMs.toFixed(0)} ms, jose ${joseMs.toFixed(0)} ms, jose / jsonwebtoken ${(joseMs / jsonwebtokenMs).toFixed(2)}`,
  );
}
ratios.sort((x, y) => x - y);
console.log(
  `median jose / jsonwebtoken: ${ratios[Math.floor(ratios.length / 2)]!.toFixed(2)}x the time (min ${ratios[0]!.toFixed(2)}, max ${ratios[ratios.length - 1]!.toFixed(2)}), ${perRound} verifications a round, Node ${process.version}`,
);
