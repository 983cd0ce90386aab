import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { MODULE_FORMAT, OLDEST_MODULE_FORMAT } from '../../runtime/contract.js';
import { startBuiltServer } from '../support/built-server.js';
import { send } from '../support/http.js';
import { buildScratchProject } from '../support/scratch-project.js';
import { TEST_SECRET } from '../support/server.js';

/** What the runtime says it serves: one format, or a range (runtime/module-format.ts). */
const SERVED = (OLDEST_MODULE_FORMAT as number) === MODULE_FORMAT ? `format ${MODULE_FORMAT}` : `formats ${OLDEST_MODULE_FORMAT} to ${MODULE_FORMAT}`;

/**
 * Versions (issue 41 point 5), as a team meets them: `npm start` (scripts/start.mjs, the built server) on modules
 * whose project index says another xmlrest made them. Modules of a format it cannot serve stop it before anything
 * else, naming the modules' version, its own and `npx xmlrest generate`, with exit 1 and no stack; modules of a
 * format it serves, made by another (older) version, serve. The built index is edited in place, as the modules
 * of another install would read once compiled.
 */
const ROOT = path.resolve('test/.tmp/module-format');
const INDEX = path.join(ROOT, 'dist/generated/index.js');
const VERSION = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;

let built = '';

beforeAll(async () => {
  await buildScratchProject(ROOT, {
    files: {
      'resources/ping/backend.xml': '<Backend xmlns="urn:xmlrest:resource:1.0" auth_scheme="Basic"/>\n',
      'resources/ping/pong.xml': `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0">
  <Request method="GET"><Sql id="pong">select 1 as one</Sql></Request>
</Resource>
`,
    },
    databaseUrl: inject('databaseUrl'),
  });
  // The scratch build makes the server half only, not the console's page: without the page's sources, and with
  // CONSOLE=off, npm start finds nothing stale to refuse before it reaches the modules.
  rmSync(path.join(ROOT, 'console/ui'), { recursive: true, force: true });
  built = readFileSync(INDEX, 'utf8');
}, 180_000);

afterAll(() => {
  rmSync(ROOT, { recursive: true, force: true });
});

/** The built project index with its stamp replaced (and anything else `change` does to its text). */
function stamp(version: string, format: number, change: (text: string) => string = (text) => text): void {
  const stamped = `{ version: '${version}', format: ${format} }`;
  const current = `{ version: '${VERSION}', format: ${MODULE_FORMAT} }`;
  expect(built).toContain(current);
  writeFileSync(INDEX, change(built.replace(current, stamped).replace(`xmlrest ${VERSION} from`, `xmlrest ${version} from`)));
}

/** `npm start` (or another script of the project) run to its end: its exit code and what it wrote to stderr. */
function startToEnd(args: string[] = ['scripts/start.mjs']): Promise<{ code: number | null; stderr: string }> {
  const child: ChildProcess = spawn(process.execPath, args, {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      DATABASE_URL: inject('databaseUrl'),
      JWT_SECRET: TEST_SECRET,
      PORT: '0',
      CONSOLE: 'off',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdout!.resume();
  // A server that started anyway is stopped, so that the test fails on its exit code rather than hanging.
  const timer = setTimeout(() => child.kill('SIGTERM'), 60_000);
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    }),
  );
}

async function servesPong(): Promise<void> {
  const server = await startBuiltServer({ root: ROOT, entry: 'scripts/start.mjs', env: { CONSOLE: 'off' } });
  try {
    const response = await send(`${server.url}/ping/v1.0/pong`);
    expect(response.status).toBe(200);
    expect(response.json()).toEqual({ pong: [{ one: 1 }] });
  } finally {
    await server.stop();
  }
}

describe('npm start and the version of the modules it serves', () => {
  it('serves modules of its own version', async () => {
    writeFileSync(INDEX, built);
    await servesPong();
  }, 60_000);

  it('serves modules an older xmlrest made in a format it still serves', async () => {
    stamp('0.0.9', MODULE_FORMAT);
    await servesPong();
  }, 60_000);

  it('refuses modules of a future format, naming both versions and the command that fixes it', async () => {
    stamp('9.0.0', MODULE_FORMAT + 1);
    const { code, stderr } = await startToEnd();
    expect(code).toBe(1);
    expect(stderr).toContain('xmlrest: cannot start:');
    expect(stderr).toContain(`made by xmlrest 9.0.0 (module format ${MODULE_FORMAT + 1})`);
    expect(stderr).toContain(`xmlrest ${VERSION} serves ${SERVED}`);
    expect(stderr).toContain('`npx xmlrest generate`');
    // Said in words, once: no stack.
    expect(stderr).not.toMatch(/^\s+at /m);
    expect(stderr.trim().split('\n')).toHaveLength(1);
  }, 60_000);

  it('refuses them in the commands that read the modules as the server does (explain)', async () => {
    stamp('9.0.0', MODULE_FORMAT + 1);
    const { code, stderr } = await startToEnd(['scripts/xmlrest.mjs', 'explain', 'nobody', 'GET', '/ping/v1.0/pong']);
    expect(code).toBe(1);
    expect(stderr).toContain(`xmlrest: the modules in generated/ were made by xmlrest 9.0.0 (module format ${MODULE_FORMAT + 1})`);
    expect(stderr).toContain('`npx xmlrest generate`');
    expect(stderr).not.toMatch(/^\s+at /m);
  }, 60_000);

  it('refuses modules it cannot even load, naming the version in their header', async () => {
    // A future format may import what this runtime does not export: the import fails before any stamp is read.
    stamp('9.0.0', MODULE_FORMAT + 1, (text) => text.replace('\n', "\nimport { somethingNew } from '../runtime/index.js';\nvoid somethingNew;\n"));
    const { code, stderr } = await startToEnd();
    expect(code).toBe(1);
    expect(stderr).toContain(`xmlrest: cannot start: the modules in generated/, made by xmlrest 9.0.0, cannot be loaded by xmlrest ${VERSION}`);
    expect(stderr).toContain('`npx xmlrest generate`');
    expect(stderr).not.toMatch(/^\s+at /m);
  }, 60_000);
});
