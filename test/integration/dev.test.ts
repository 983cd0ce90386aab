import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { MODULE_FORMAT, OLDEST_MODULE_FORMAT } from '../../runtime/contract.js';
import { XMLREST_VERSION } from '../../runtime/version.js';

/** What the runtime says it serves: one format, or a range (runtime/module-format.ts). */
const SERVED = (OLDEST_MODULE_FORMAT as number) === MODULE_FORMAT ? `format ${MODULE_FORMAT}` : `formats ${OLDEST_MODULE_FORMAT} to ${MODULE_FORMAT}`;

/** `npm run dev` as a process: a changed resource is served without a restart, and no request is dropped. */
const ROOT = 'test/.tmp/dev';
let dev: ChildProcess;
let url = '';
let stdout = '';
let stderr = '';

const hello = (word: string) => `<Resource v="1.0"><Request method="GET"><Sql id="hello">select '${word}' as word</Sql></Request></Resource>\n`;

async function until<T>(probe: () => Promise<T | undefined>, what: string, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`timed out waiting for ${what}\nstdout: ${stdout}\nstderr: ${stderr}`);
}

const word = async () => {
  const response = await fetch(`${url}/devb/v1.0/hello`);
  return ((await response.json()) as { hello: { word: string }[] }).hello[0]?.word;
};

beforeAll(async () => {
  rmSync(ROOT, { recursive: true, force: true });
  mkdirSync(`${ROOT}/resources/devb`, { recursive: true });
  writeFileSync(`${ROOT}/resources/devb/hello.xml`, hello('one'));
  dev = spawn(process.execPath, ['--import', 'tsx', 'scripts/dev.ts', '--root', ROOT], {
    env: { ...process.env, DATABASE_URL: inject('databaseUrl'), PORT: '0' },
  });
  dev.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  dev.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  url = await until(async () => /serving (http:\/\/[^ ;]+)/.exec(stdout)?.[1], 'the dev server');
}, 60_000);
afterAll(() => {
  dev?.kill('SIGTERM');
  rmSync(ROOT, { recursive: true, force: true });
});

describe('npm run dev', () => {
  it('serves what it generated', async () => {
    expect(await word()).toBe('one');
  });

  it('serves a changed resource within a second, without dropping a request meanwhile', async () => {
    const statuses: number[] = [];
    let stop = false;
    const load = (async () => {
      while (!stop) statuses.push((await fetch(`${url}/devb/v1.0/hello`)).status);
    })();
    const changed = Date.now();
    writeFileSync(`${ROOT}/resources/devb/hello.xml`, hello('two'));
    await until(async () => ((await word()) === 'two' ? true : undefined), 'the change');
    const elapsed = Date.now() - changed;
    // The load goes on across the swap and past it, however quick the swap was.
    const seen = statuses.length;
    await until(async () => (statuses.length >= seen + 10 ? true : undefined), 'requests after the change');
    stop = true;
    await load;
    expect(elapsed).toBeLessThan(5_000);
    expect(statuses.length).toBeGreaterThan(10);
    expect(statuses.every((status) => status === 200)).toBe(true);
    expect(stdout).toMatch(/dev: reloaded in \d+ ms/);
  });

  it('prints an error with file:line:col, keeps serving the last good version, and recovers', async () => {
    writeFileSync(`${ROOT}/resources/devb/hello.xml`, '<Resource v="1.0">\n  <Request method="GET">\n    <Sql id="hello">select 1 as word</Sq>\n');
    await until(async () => (stdout.includes('kept the running version') ? true : undefined), 'the error');
    expect(stderr).toContain('resources/devb/hello.xml:3:37: malformed XML');
    expect(await word()).toBe('two');
    writeFileSync(`${ROOT}/resources/devb/hello.xml`, hello('three'));
    await until(async () => ((await word()) === 'three' ? true : undefined), 'the recovery');
  });

  it('serves a new resource file and forgets a removed one', async () => {
    writeFileSync(`${ROOT}/resources/devb/extra.xml`, hello('extra').replace('hello', 'extra'));
    await until(async () => ((await fetch(`${url}/devb/v1.0/extra`)).status === 200 ? true : undefined), 'the new resource');
    rmSync(`${ROOT}/resources/devb/extra.xml`);
    await until(async () => ((await fetch(`${url}/devb/v1.0/extra`)).status === 404 ? true : undefined), 'the removal');
  });
});

describe('npm run dev on modules of a format its runtime does not serve', () => {
  it('refuses to start on them when resources/ does not generate, naming both versions and the command that fixes it', async () => {
    // The first run fails, so dev falls back to what generated/ holds: here, modules a future xmlrest made.
    const root = 'test/.tmp/dev-format';
    rmSync(root, { recursive: true, force: true });
    mkdirSync(`${root}/resources/devb`, { recursive: true });
    mkdirSync(`${root}/generated`, { recursive: true });
    writeFileSync(`${root}/resources/devb/broken.xml`, '<Resource v="1.0"><Request method="GET">\n');
    writeFileSync(
      `${root}/generated/index.ts`,
      `// Code generated by xmlrest 9.0.0 from resources/. DO NOT EDIT.\nexport const generator = { version: '9.0.0', format: ${MODULE_FORMAT + 1} };\nexport const backends = [];\n`,
    );
    const refused = spawn(process.execPath, ['--import', 'tsx', 'scripts/dev.ts', '--root', root], {
      env: { ...process.env, DATABASE_URL: inject('databaseUrl'), PORT: '0', CONSOLE: 'off' },
    });
    let output = '';
    refused.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    refused.stdout!.resume();
    // A dev that served them anyway is stopped, so that the test fails on its exit code rather than hanging.
    const timer = setTimeout(() => refused.kill('SIGTERM'), 30_000);
    const code = await new Promise<number | null>((resolve) => refused.once('close', resolve));
    clearTimeout(timer);
    rmSync(root, { recursive: true, force: true });
    expect(code).toBe(1);
    expect(output).toContain(`dev: cannot start: the modules in generated/ were made by xmlrest 9.0.0 (module format ${MODULE_FORMAT + 1})`);
    expect(output).toContain(`and xmlrest ${XMLREST_VERSION} serves ${SERVED}`);
    expect(output).toContain('`npx xmlrest generate`');
    expect(output).not.toMatch(/^\s+at /m);
  }, 60_000);
});
