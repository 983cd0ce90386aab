import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type BuiltServer, startBuiltServer } from '../support/built-server.js';
import { docsSection } from '../support/docs-section.js';
import { formBody, send } from '../support/http.js';
import { buildScratchProject } from '../support/scratch-project.js';

/**
 * docs/guides/identity-providers.md's "Try it against a test provider", tried as printed: the test
 * provider's command prints what the guide shows, its Issuer goes into the demo's
 * shop backend, and its two commands, pasted into a shell, give alice's own
 * orders through a token of the provider.
 */
const ROOT = path.resolve('test/.tmp/identity-provider-demo');
let provider: ChildProcess;
let printed = '';
let server: BuiltServer;

beforeAll(async () => {
  provider = spawn(process.execPath, ['--import', 'tsx', 'scripts/identity-provider.ts'], { stdio: ['ignore', 'pipe', 'pipe'] });
  provider.stdout!.on('data', (chunk: Buffer) => (printed += chunk.toString()));
  for (let waited = 0; !printed.includes('/shop/v1.0/orders') && waited < 30_000; waited += 100) await new Promise((resolve) => setTimeout(resolve, 100));
  const issuer = /^ {2}<Issuer[\s\S]*?<\/Issuer>$/m.exec(printed)?.[0];
  if (!issuer) throw new Error(`the test provider printed no Issuer: ${printed}`);
  // The demo's resources, with the printed Issuer inside the shop backend's <Backend>.
  const files: Record<string, string> = {};
  for (const file of readdirSync('resources', { recursive: true }).map(String)) {
    if (file.endsWith('.xml')) files[`resources/${file}`] = readFileSync(`resources/${file}`, 'utf8');
  }
  files['resources/shop/backend.xml'] = files['resources/shop/backend.xml']!.replace('</Backend>', `${issuer}\n</Backend>`);
  await buildScratchProject(ROOT, { files, databaseUrl: inject('databaseUrl') });
  server = await startBuiltServer({ root: ROOT });
}, 180_000);

afterAll(async () => {
  await server?.stop();
  provider?.kill('SIGTERM');
  rmSync(ROOT, { recursive: true, force: true });
});

describe('signing in to the demo with a test identity provider', () => {
  it('prints what the guide shows', () => {
    const section = docsSection('docs/guides/identity-providers.md', '## Try it against a test provider');
    const shown = /```text\n([\s\S]*?)```/.exec(section)?.[1];
    expect(shown).toBe(printed);
  });

  it("gives alice her own orders through the provider's token, as her own password does", async () => {
    const commands = printed
      .split('\n')
      .filter((line) => line.startsWith('  TOKEN=') || line.startsWith('  curl '))
      .map((line) => line.trim().replace('http://127.0.0.1:3000', server.url));
    expect(commands).toHaveLength(2);
    const answer = execFileSync('bash', ['-c', commands.join('\n')], { encoding: 'utf8' });
    const own = await send(`${server.url}/shop/`, { method: 'POST', ...formBody({ auth: 'bearer', userid: 'alice', password: 'alice-pass' }) });
    const token = (own.json() as { token: string }).token;
    const expected = await send(`${server.url}/shop/v1.0/orders`, { headers: { authorization: `Bearer ${token}` } });
    expect(expected.status).toBe(200);
    expect(JSON.parse(answer)).toEqual(expected.json());
    expect(JSON.parse(answer)).toHaveProperty('orders');
  });
});
