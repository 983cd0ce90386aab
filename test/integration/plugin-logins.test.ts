import { rmSync } from 'node:fs';
import path from 'node:path';
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectTo } from '../../scripts/connection.js';
import { addUser } from '../../scripts/schema.js';
import { type BuiltServer, startBuiltServer } from '../support/built-server.js';
import { formBody, send } from '../support/http.js';
import { buildScratchProject } from '../support/scratch-project.js';

/**
 * A password a plug-in checks with `verifyPassword` (runtime/contract/module.ts) is a login, and meets the rules
 * every login meets (the review of issue 40): over HTTPS when REQUIRE_TLS_FOR_CREDENTIALS says so, and never a
 * write from another site's page. Before, only `login.begin` and `login.verify` screened the request, so a
 * plug-in that checked passwords with `verifyPassword` took them over plain HTTP, from any site.
 */
const ROOT = path.resolve('test/.tmp/plugin-logins');
const PLUGIN = `import type { Plugin } from '../runtime/index.js';

/** Says whether the password is the user's, as a team's own sign-in plug-in would. */
export const check: Plugin<{ user: unknown; pass: unknown; stored: unknown }, { ok: boolean }[]> = async (args, context) => [
  { ok: await context.verifyPassword(String(args.user), String(args.pass), args.stored) },
];
`;
const FILES = {
  'plugins/check.ts': PLUGIN,
  'resources/gate/backend.xml': `<Backend xmlns="urn:xmlrest:resource:1.0" auth_scheme="Basic">
  <Plugin classname="gate.Check" module="plugins/check.ts" export="check"/>
</Backend>
`,
  'resources/gate/check.xml': `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0">
  <Request method="POST">
    <Sql id="stored" output="false">select pass_word from usr where user_name = $user</Sql>
    <Execute id="verdict" output="true" classname="gate.Check">
      <Arg name="user" value="$user"/>
      <Arg name="pass" value="$pass"/>
      <Arg name="stored" value="$[stored][0].pass_word"/>
    </Execute>
  </Request>
</Resource>
`,
};
const USER = 'plugin-login-ann';
let connection: mysql.Connection;
let server: BuiltServer;

beforeAll(async () => {
  connection = await connectTo(inject('databaseUrl'));
  await connection.query('delete from usr where user_name = ?', [USER]);
  await addUser(connection, USER, `${USER}-pass`, ['member']);
  await buildScratchProject(ROOT, { files: FILES, databaseUrl: inject('databaseUrl') });
  server = await startBuiltServer({ root: ROOT, env: { TRUST_PROXY: 'true', REQUIRE_TLS_FOR_CREDENTIALS: 'true' } });
}, 180_000);

afterAll(async () => {
  await server?.stop();
  await connection?.query('delete from usr where user_name = ?', [USER]);
  await connection?.end();
  rmSync(ROOT, { recursive: true, force: true });
});

const checkFrom = (proto: 'https' | 'http', headers: Record<string, string> = {}) => {
  const form = formBody({ user: USER, pass: `${USER}-pass` });
  return send(`${server.url}/gate/v1.0/check`, {
    method: 'POST',
    body: form.body,
    headers: { ...form.headers, 'x-forwarded-for': '203.0.113.9', 'x-forwarded-proto': proto, ...headers },
  });
};

describe('a password a plug-in checks with verifyPassword', () => {
  it('is checked over HTTPS', async () => {
    const answer = await checkFrom('https');
    expect(answer.status, answer.text).toBe(200);
    expect(answer.json()).toEqual({ verdict: [{ ok: true }] });
  });

  it('is refused over plain HTTP from another host, and from another site’s page', async () => {
    const plain = await checkFrom('http');
    expect(plain.status).toBe(403);
    expect(plain.json()).toEqual({ message: 'Credentials must be sent over HTTPS', status: 403 });
    const crossSite = await checkFrom('https', { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' });
    expect(crossSite.status).toBe(403);
    expect(crossSite.json()).toEqual({ message: 'Cross-site request refused', status: 403 });
  });
});
