import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { analyse } from '../../generator/analyse/index.js';
import { Diagnostics } from '../../generator/diagnostics.js';
import { SETTINGS } from '../../runtime/config/settings.js';
import { backendNameProblem, init } from '../../scripts/cli/init/index.js';

/**
 * `xmlrest init` (scripts/cli/init/): the files of a new project and their contents, a merge into a team's
 * package.json, and refusals that write nothing; then the list of settings its .env.example is made from, held
 * to the sources that read the environment.
 */
const own = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string; devDependencies: Record<string, string>; engines: { node: string } };
const folders: string[] = [];

function folder(): string {
  const made = mkdtempSync(path.join(tmpdir(), 'xmlrest-init-'));
  folders.push(made);
  return made;
}

afterEach(() => {
  for (const made of folders.splice(0)) rmSync(made, { recursive: true, force: true });
});

/** Every file under a folder, by relative path, with its text: what a refusal must leave as it was. */
function snapshot(root: string): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (at: string) => {
    for (const name of readdirSync(at)) {
      const file = path.join(at, name);
      if (statSync(file).isDirectory()) walk(file);
      else files[path.relative(root, file)] = readFileSync(file, 'utf8');
    }
  };
  walk(root);
  return files;
}

const read = (root: string, file: string) => readFileSync(path.join(root, file), 'utf8');
const json = (root: string, file: string) => JSON.parse(read(root, file)) as Record<string, unknown>;

async function cli(cwd: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const bin = path.resolve('scripts/xmlrest.mjs');
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [bin, ...args], {
      cwd,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe('xmlrest init', () => {
  it('writes a Basic project in a new folder: package.json, tsconfig, .gitignore, .env.example, README, backend and example', () => {
    const root = path.join(folder(), 'My Team API');
    const outcome = init({ dir: root });
    expect(outcome).toMatchObject({ code: 0, err: [] });
    expect(Object.keys(snapshot(root)).sort()).toEqual(
      ['.env.example', '.gitignore', 'README.md', 'package.json', 'resources/api/backend.xml', 'resources/api/me.xml', 'tsconfig.json'].sort(),
    );
    expect(json(root, 'package.json')).toEqual({
      name: 'my-team-api',
      private: true,
      type: 'module',
      scripts: {
        generate: 'xmlrest generate',
        dev: 'xmlrest dev',
        build: 'xmlrest build',
        start: 'xmlrest start',
        test: 'xmlrest generate --check && tsc -p tsconfig.json',
      },
      dependencies: { xmlrest: `^${own.version}` },
      devDependencies: { typescript: own.devDependencies.typescript, '@types/node': own.devDependencies['@types/node'] },
      engines: { node: own.engines.node },
    });
    expect(json(root, 'tsconfig.json')).toEqual({
      compilerOptions: {
        target: 'es2022',
        module: 'nodenext',
        moduleResolution: 'nodenext',
        strict: true,
        skipLibCheck: true,
        verbatimModuleSyntax: true,
        types: ['node'],
        noEmit: true,
      },
      include: ['generated', 'plugins'],
    });
    expect(read(root, '.gitignore').split('\n')).toEqual(expect.arrayContaining(['node_modules/', '.xmlrest/', 'dist/', '.env']));
    expect(read(root, 'resources/api/backend.xml')).toContain('auth_scheme="Basic"');
    expect(read(root, 'resources/api/me.xml')).toMatch(/auth="user"[\s\S]*where user_id = \$uid/);
    const readme = read(root, 'README.md');
    for (const command of [
      'npm run dev',
      'npm run generate',
      'npm run build',
      'npm start',
      'npm test',
      'npx xmlrest user add alice --password changeme --role user',
    ])
      expect(readme).toContain(command);
    expect(readme).toContain('curl -u alice:changeme http://127.0.0.1:3000/api/v1.0/me');
  });

  it('prints the next commands: cd to the folder, npm install, npm run dev, a user added, the example called', () => {
    const parent = folder();
    const outcome = init({ dir: path.join(parent, 'shop') });
    const next = outcome.out.slice(outcome.out.indexOf('Next:'));
    expect(next.map((line) => line.trim().replace(/ +#.*/, ''))).toEqual([
      'Next:',
      `cd ${path.join(parent, 'shop')}`,
      'npm install',
      'npm run dev',
      'Then, in another terminal of this folder (npx xmlrest takes npm run dev’s database when DATABASE_URL is unset):',
      'npx xmlrest user add alice --password changeme --role user',
      'curl -u alice:changeme http://127.0.0.1:3000/api/v1.0/me',
    ]);
    // In the current folder there is nothing to cd to.
    const here = process.cwd();
    process.chdir(parent);
    try {
      expect(init({ dir: '.' }).out.some((line) => line.trim().startsWith('cd '))).toBe(false);
    } finally {
      process.chdir(here);
    }
  });

  it('writes a Bearer project with the token resource, under the backend named, and tells how to get a token', () => {
    const root = folder();
    const outcome = init({ dir: root, scheme: 'bearer', backend: 'team_api' });
    expect(outcome.code).toBe(0);
    expect(read(root, 'resources/team_api/backend.xml')).toContain('auth_scheme="Bearer" token_lifetime="3600"');
    expect(read(root, 'resources/team_api/token.xml')).toContain('classname="xmlrest.auth.TokenGenerator"');
    expect(outcome.out.join('\n')).toContain('curl -s -d user=alice -d pass=changeme http://127.0.0.1:3000/team_api/v1.0/token');
    expect(outcome.out.join('\n')).toContain('curl -H "Authorization: Bearer $TOKEN" http://127.0.0.1:3000/team_api/v1.0/me');
    expect(read(root, 'README.md')).toContain('JWT_SECRET');
  });

  it("merges into a team's package.json: its name, fields, order and spec of xmlrest kept", () => {
    const root = folder();
    const theirs = {
      name: 'acme-orders',
      version: '2.0.0',
      description: 'orders',
      dependencies: { xmlrest: 'file:../xmlrest-0.1.0.tgz', lodash: '^4.0.0' },
      scripts: { lint: 'biome check', dev: 'xmlrest dev' },
    };
    writeFileSync(path.join(root, 'package.json'), JSON.stringify(theirs, null, 2));
    mkdirSync(path.join(root, 'node_modules'));
    expect(init({ dir: root }).code).toBe(0);
    const merged = json(root, 'package.json');
    expect(Object.keys(merged).slice(0, 5)).toEqual(['name', 'version', 'description', 'dependencies', 'scripts']);
    expect(merged).toMatchObject({
      name: 'acme-orders',
      version: '2.0.0',
      private: true,
      type: 'module',
      dependencies: { xmlrest: 'file:../xmlrest-0.1.0.tgz', lodash: '^4.0.0' },
      scripts: { lint: 'biome check', dev: 'xmlrest dev', generate: 'xmlrest generate', start: 'xmlrest start' },
    });
  });

  it('refuses (exit 2) to overwrite what exists, naming each, and writes nothing; --force overwrites', async () => {
    const root = folder();
    writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name: 'web', scripts: { dev: 'vite', test: 'vitest' } }));
    writeFileSync(path.join(root, 'README.md'), '# Ours\n');
    mkdirSync(path.join(root, 'resources/api'), { recursive: true });
    writeFileSync(path.join(root, 'resources/api/me.xml'), '<Resource/>\n');
    const before = snapshot(root);
    const refused = await cli(root, 'init');
    expect(refused.code).toBe(2);
    expect(refused.stdout).toBe('');
    expect(refused.stderr.split('\n').slice(1, -1)).toEqual([
      '  package.json: script "dev"',
      '  package.json: script "test"',
      '  README.md',
      '  resources/api/me.xml',
    ]);
    expect(snapshot(root)).toEqual(before);

    expect(init({ dir: root, force: true }).code).toBe(0);
    expect(json(root, 'package.json')).toMatchObject({
      name: 'web',
      scripts: { dev: 'xmlrest dev', test: 'xmlrest generate --check && tsc -p tsconfig.json' },
    });
    expect(read(root, 'README.md')).toContain('# An xmlrest project');
    // Run again as it was: nothing differs, nothing is refused.
    expect(init({ dir: root })).toMatchObject({ code: 0, err: [] });
    // A folder where a file goes is refused even with --force: its rename would fail halfway through the writing.
    rmSync(path.join(root, '.gitignore'));
    mkdirSync(path.join(root, '.gitignore'));
    writeFileSync(path.join(root, 'tsconfig.json'), '{}\n');
    const blocked = init({ dir: root, force: true });
    expect(blocked).toMatchObject({ code: 2, out: [] });
    expect(blocked.err.slice(1)).toEqual(['  .gitignore (not a file)']);
    expect(read(root, 'tsconfig.json')).toBe('{}\n');
  });

  it('refuses (exit 2) a folder holding a project already, naming what it holds, and writes nothing; --force writes beside it', async () => {
    const root = folder();
    writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name: 'web' }));
    mkdirSync(path.join(root, 'node_modules/xmlrest'), { recursive: true });
    mkdirSync(path.join(root, 'src'));
    writeFileSync(path.join(root, 'src/index.ts'), 'export {};\n');
    writeFileSync(path.join(root, 'notes.txt'), 'ours\n');
    const before = snapshot(root);
    const refused = await cli(root, 'init');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('is not empty');
    expect(refused.stderr.split('\n').slice(1, -1)).toEqual(['  notes.txt', '  src/index.ts']);
    expect(snapshot(root)).toEqual(before);
    // What npm install xmlrest leaves (package.json, package-lock.json, node_modules/) is no project yet.
    rmSync(path.join(root, 'src'), { recursive: true });
    rmSync(path.join(root, 'notes.txt'));
    writeFileSync(path.join(root, 'package-lock.json'), '{}\n');
    expect(init({ dir: root }).code).toBe(0);
    const beside = folder();
    writeFileSync(path.join(beside, 'notes.txt'), 'ours\n');
    expect(init({ dir: beside, force: true }).code).toBe(0);
    expect(read(beside, 'notes.txt')).toBe('ours\n');
  });

  it('refuses an unknown --scheme and a --backend the generator would refuse (exit 2), creating nothing', async () => {
    const parent = folder();
    const scheme = await cli(parent, 'init', 'new', '--scheme', 'Digest');
    expect(scheme).toMatchObject({ code: 2, stdout: '' });
    expect(scheme.stderr).toContain('--scheme is Basic or Bearer, not "Digest"; nothing written');
    for (const [backend, message] of [
      ['Api', '--backend is a lower-case name'],
      ['../etc', '--backend is a lower-case name'],
      ['healthz', 'reserved'],
    ] as const) {
      const refused = init({ dir: path.join(parent, 'new'), backend });
      expect(refused.code, backend).toBe(2);
      expect(refused.err.join('\n'), backend).toContain(message);
    }
    expect(readdirSync(parent)).toEqual([]);
  });

  it('takes the backend names the generator takes, and no other', () => {
    for (const name of ['api', 'a', 'team-api', 'team_api2', 'Api', '1api', '-api', 'a.b', 'a b', 'healthz', 'readyz', 'metrics', 'é']) {
      const diagnostics = new Diagnostics();
      const files = [{ path: `resources/${name}/backend.xml`, text: '<Backend xmlns="urn:xmlrest:resource:1.0" auth_scheme="Basic"/>' }];
      analyse(files, diagnostics, { exists: () => false, leavesProject: () => false });
      expect(backendNameProblem(name) === undefined, name).toBe(diagnostics.count === 0);
    }
  });
});

describe('the settings npm start reads (runtime/config/settings.ts)', () => {
  /**
   * The sources npm start runs: its entry, the whole runtime and the console's server, each scanned for env.NAME;
   * where settings are read by a name given as text (the configuration, tracing), for that text too.
   */
  const SOURCES = ['scripts/serve.ts', 'scripts/start.mjs', 'scripts/build-state.mjs', 'runtime', 'console'];
  const READERS_BY_NAME = /^runtime\/(config|tracing)[/.]/;

  function sourceFiles(at: string): string[] {
    if (!statSync(at).isDirectory()) return /\.(ts|mjs)$/.test(at) ? [at] : [];
    // The console's page runs in a browser, not in npm start.
    if (at === 'console/ui') return [];
    return readdirSync(at).flatMap((name) => sourceFiles(path.posix.join(at, name)));
  }

  /**
   * Text in those sources of a setting's shape that names no setting: a new one fails the test below until it is
   * listed here or in settings.ts, so that a name handed to a reader as text is never taken for something else.
   */
  const NOT_SETTINGS = new Set(['ER_DUP_ENTRY']);

  /** Names read as env.NAME, process.env.NAME or env['NAME'], and names handed to a reader as 'SOME_NAME'. */
  function namesRead(file: string): Set<string> {
    const text = readFileSync(file, 'utf8');
    const names = new Set<string>();
    for (const match of text.matchAll(/\benv(?:\.([A-Z][A-Z0-9_]*)\b|\[\s*['"`]([A-Z][A-Z0-9_]*)['"`]\s*\])/g)) names.add((match[1] ?? match[2])!);
    if (!READERS_BY_NAME.test(file)) return names;
    for (const match of text.matchAll(/['"`]([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)['"`]/g)) if (!NOT_SETTINGS.has(match[1]!)) names.add(match[1]!);
    return names;
  }

  it('names every setting those sources read, and only settings they read or OpenTelemetry documents', () => {
    const listed = new Set(SETTINGS.map((setting) => setting.name));
    expect(listed.size).toBe(SETTINGS.length);
    const read = new Map<string, string>();
    // settings.ts itself holds every name as text: it is the list, not a reader.
    for (const file of SOURCES.flatMap(sourceFiles).filter((file) => !file.endsWith('settings.ts'))) for (const name of namesRead(file)) read.set(name, file);
    const missing = [...read].filter(([name]) => !listed.has(name)).map(([name, file]) => `${name} (${file})`);
    expect(missing, 'settings read but missing from runtime/config/settings.ts').toEqual([]);
    const unread = SETTINGS.filter((setting) => setting.readBy === undefined && !read.has(setting.name)).map((setting) => setting.name);
    expect(unread, 'settings listed that nothing reads').toEqual([]);
    expect(SETTINGS[0]!.name).toBe('DATABASE_URL');
  });

  it("is what a new project's .env.example says, DATABASE_URL first, every line commented", () => {
    const root = folder();
    init({ dir: root, scheme: 'Bearer' });
    const example = read(root, '.env.example');
    for (const setting of SETTINGS) expect(example).toMatch(new RegExp(`^(# )?${setting.name}=`, 'm'));
    const assignments = example.split('\n').filter((line) => /^(# )?[A-Z][A-Z0-9_]*=/.test(line));
    expect(assignments[0]).toMatch(/^# DATABASE_URL=mysql:\/\//);
    expect(assignments.every((line) => line.startsWith('# '))).toBe(true);
    expect(example).toMatch(/^# JWT_SECRET: needed for Bearer backends/m);
  });
});
