import { createHmac, randomUUID } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { revokeToken } from '../../runtime/auth/tokens/revocations.js';
import { connectTo } from '../../scripts/connection.js';
import { addUser } from '../../scripts/schema.js';
import { type BuiltServer, startBuiltServer } from '../support/built-server.js';
import { formBody, send } from '../support/http.js';
import { buildScratchProject } from '../support/scratch-project.js';
import { decodeJwt, TEST_SECRET } from '../support/server.js';

/**
 * Colliding issuers (issue 27, hole 5), at the door, against the built
 * server: two Bearer backends of one issuer took each other's tokens, and a
 * revocation on one did not follow the token to the other. The generator now
 * refuses two backends of one issuer (test/golden/error-duplicate-issuer);
 * here the modules are edited after generation to share one, as modules
 * written before that check would, to show that a token is bound to the
 * backend that signed it on its own: every token names its backend, and no
 * other backend, nor any token without the claim, gets in.
 */
const ROOT = path.resolve('test/.tmp/token-backends');
const USER = 'tb-user';
const PASSWORD = 'tb-pass-1';

const backend = (name: string) => `<Backend xmlns="urn:xmlrest:resource:1.0" auth_scheme="Bearer" issuer="${name}-issuer"/>\n`;
const ME = `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0" auth="*">
  <Request method="GET"><Sql id="me">select user_name from usr where user_id = $uid</Sql></Request>
</Resource>
`;

let connection: mysql.Connection;
let server: BuiltServer;

beforeAll(async () => {
  connection = await connectTo(inject('databaseUrl'));
  await addUser(connection, USER, PASSWORD, ['member']);
  await buildScratchProject(ROOT, {
    files: {
      'resources/north/backend.xml': backend('north'),
      'resources/north/me.xml': ME,
      'resources/south/backend.xml': backend('south'),
      'resources/south/me.xml': ME,
    },
    databaseUrl: inject('databaseUrl'),
    edit: (root) => {
      const index = path.join(root, 'generated/south/index.ts');
      const text = readFileSync(index, 'utf8');
      expect(text).toContain("issuer: 'south-issuer',");
      writeFileSync(index, text.replace("issuer: 'south-issuer',", "issuer: 'north-issuer',"));
    },
  });
  server = await startBuiltServer({ root: ROOT });
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await connection?.end();
  rmSync(ROOT, { recursive: true, force: true });
});

async function token(backend: 'north' | 'south'): Promise<string> {
  const response = await send(`${server.url}/${backend}/`, { method: 'POST', ...formBody({ auth: 'bearer', userid: USER, password: PASSWORD }) });
  expect(response.status).toBe(200);
  return (response.json() as { token: string }).token;
}

async function me(backend: 'north' | 'south', token: string): Promise<{ status: number; description: string | undefined }> {
  const response = await send(`${server.url}/${backend}/v1.0/me`, { headers: { authorization: `Bearer ${token}` } });
  const challenge = String(response.headers['www-authenticate'] ?? '');
  return { status: response.status, description: /error_description="([^"]*)"/.exec(challenge)?.[1] };
}

describe('two Bearer backends of one issuer', () => {
  it('each names itself in the tokens it signs, and takes its own', async () => {
    for (const name of ['north', 'south'] as const) {
      const issued = await token(name);
      expect(decodeJwt(issued).payload).toMatchObject({ iss: 'north-issuer', backend: name });
      expect(await me(name, issued)).toEqual({ status: 200, description: undefined });
    }
  });

  it("refuses the other's tokens with 401, and logs why", async () => {
    expect(await me('south', await token('north'))).toEqual({ status: 401, description: 'token was issued for another backend' });
    expect(await me('north', await token('south'))).toEqual({ status: 401, description: 'token was issued for another backend' });
    // The access log line reaches the test through the server's stdout, a moment after the answer.
    const logged = () => server.logs.filter((line) => line.reason === 'wrong_backend' && line.status === 401).length;
    for (let waited = 0; logged() < 2 && waited < 10_000; waited += 100) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(logged()).toBeGreaterThanOrEqual(2);
  });

  it('refuses a token without the claim, signed with the right key and issuer', async () => {
    const now = Math.floor(Date.now() / 1000);
    const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const payload = { sub: '1', aud: 'member', iss: 'north-issuer', iat: now, exp: now + 600, jti: randomUUID() };
    const input = `${part({ alg: 'HS256', typ: 'JWT' })}.${part(payload)}`;
    const bare = `${input}.${createHmac('sha256', TEST_SECRET).update(input).digest('base64url')}`;
    expect(await me('north', bare)).toEqual({ status: 401, description: 'token names no backend' });
  });

  it('a token revoked on its backend is refused there, and was never taken by the other', async () => {
    const issued = await token('north');
    expect((await me('north', issued)).status).toBe(200);
    const { jti, exp } = decodeJwt(issued).payload as { jti: string; exp: number };
    await revokeToken({ write: (sql, values) => connection.execute(sql, values as string[]) }, 'north', jti, exp);
    // The server reads revocations every 5 s.
    let answer = await me('north', issued);
    for (let waited = 0; answer.status === 200 && waited < 30_000; waited += 250) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      answer = await me('north', issued);
    }
    expect(answer).toEqual({ status: 401, description: 'token revoked' });
    expect(await me('south', issued)).toEqual({ status: 401, description: 'token was issued for another backend' });
  }, 60_000);
});
