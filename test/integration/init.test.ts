import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { generateProject } from '../../generator/index.js';
import type { BackendModule } from '../../runtime/index.js';
import { init } from '../../scripts/cli/init/index.js';
import { connectTo } from '../../scripts/connection.js';
import { addUser, createDefaultTables } from '../../scripts/schema.js';
import { startServer } from '../support/server.js';

/**
 * What `xmlrest init` writes generates cleanly, and its example resources answer as its README says: a Basic and a
 * Bearer project, each in a folder of its own outside this checkout, generated (strict: warnings are errors)
 * against the test database once it has the default tables `xmlrest db init` makes, then served with a user added
 * as `xmlrest user add` adds one. The generated modules are pointed at this checkout's runtime (runtimeDir): how a
 * project finds an installed xmlrest is the package's concern, not init's.
 */
const parent = mkdtempSync(path.join(tmpdir(), 'xmlrest-init-'));
/** The user the README's calls use, a name of this run's own on the shared database. */
const user = `init-${randomBytes(4).toString('hex')}`;
const password = 'changeme';

beforeAll(async () => {
  const connection = await connectTo(inject('databaseUrl'), { multipleStatements: true });
  try {
    await createDefaultTables(connection);
    await addUser(connection, user, password, ['user']);
  } finally {
    await connection.end();
  }
});

afterAll(() => rmSync(parent, { recursive: true, force: true }));

async function generated(root: string): Promise<{ code: number; check: number; log: string[] }> {
  const log: string[] = [];
  const run = (check: boolean) =>
    generateProject({
      root,
      check,
      strict: true,
      runtimeDir: path.relative(root, path.resolve('runtime')),
      databaseUrl: inject('databaseUrl'),
      log: (line) => log.push(line),
    });
  const code = await run(false);
  // What `npm test` asks first (xmlrest generate --check): nothing left to regenerate.
  return { code, check: await run(true), log };
}

async function served(root: string): Promise<Awaited<ReturnType<typeof startServer>>> {
  const { backends } = (await import(/* @vite-ignore */ pathToFileURL(path.join(root, 'generated/index.ts')).href)) as { backends: BackendModule[] };
  return startServer(backends);
}

describe('a project xmlrest init wrote', () => {
  it('Basic: generates with no error or warning, and GET /api/v1.0/me answers the caller their own row', async () => {
    const root = path.join(parent, 'basic');
    expect(init({ dir: root }).code).toBe(0);
    const { code, check, log } = await generated(root);
    expect({ code, check }, log.join('\n')).toEqual({ code: 0, check: 0 });
    expect(readFileSync(path.join(root, 'access.lock'), 'utf8')).toContain('/api/v1.0/me');
    const server = await served(root);
    try {
      const me = `${server.url}/api/v1.0/me`;
      const basic = (pass: string) => ({ authorization: `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}` });
      // As docs/internals/contract.md has it: no credentials 403, wrong ones 401.
      expect((await fetch(me)).status).toBe(403);
      expect((await fetch(me, { headers: basic('wrong') })).status).toBe(401);
      const answer = await fetch(me, { headers: basic(password) });
      expect(answer.status).toBe(200);
      expect(((await answer.json()) as { me: { user_name: string }[] }).me.map((row) => row.user_name)).toEqual([user]);
    } finally {
      await server.close();
    }
  });

  it('Bearer: generates with no error or warning, issues a token at /team/v1.0/token, and /team/v1.0/me takes it', async () => {
    const root = path.join(parent, 'bearer');
    expect(init({ dir: root, scheme: 'Bearer', backend: 'team' }).code).toBe(0);
    const { code, check, log } = await generated(root);
    expect({ code, check }, log.join('\n')).toEqual({ code: 0, check: 0 });
    for (const resource of ['me', 'token']) expect(existsSync(path.join(root, `generated/team/${resource}.ts`)), resource).toBe(true);
    const server = await served(root);
    try {
      const token = (pass: string) => fetch(`${server.url}/team/v1.0/token`, { method: 'POST', body: new URLSearchParams({ user, pass }) });
      expect((await token('wrong')).status).toBe(401);
      const issued = await token(password);
      expect(issued.status).toBe(201);
      const { token: jwt } = (await issued.json()) as { token: string };
      const me = await fetch(`${server.url}/team/v1.0/me`, { headers: { authorization: `Bearer ${jwt}` } });
      expect(me.status).toBe(200);
      expect(((await me.json()) as { me: { user_name: string }[] }).me.map((row) => row.user_name)).toEqual([user]);
      expect((await fetch(`${server.url}/team/v1.0/me`)).status).toBe(403);
    } finally {
      await server.close();
    }
  });
});
