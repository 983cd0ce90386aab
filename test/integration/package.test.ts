import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownDatabase } from '../support/own-database.js';
import { copyProject } from '../support/project-copy.js';

/**
 * The package as a team installs it (issue 41): `npm pack` on a copy of this checkout, the tarball installed
 * into an empty folder under the system's temporary folder (outside the checkout: no node_modules above it
 * lends a package, no path leads back), `npx xmlrest init`, resources of the team's own, and then every
 * command a team runs, as it runs them: db init, user add, generate, build, npm start, npm test, npm run dev,
 * explain, verify-access; then an upgrade to a newer tarball whose module format changed.
 */
const CHECKOUT = process.cwd();
let work: string;
let project: string;
let tarball: string;
let databaseUrl: string;

const exec = promisify(execFile);
/** A command in the project, as a person types it: npm and npx from PATH, the environment given, nothing from here. */
async function run(
  command: string,
  args: string[],
  env: Record<string, string> = {},
  input?: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const environment = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', npm_config_cache: process.env.npm_config_cache ?? '', ...env };
  if (environment.npm_config_cache === '') delete (environment as Record<string, string | undefined>).npm_config_cache;
  const child = exec(command, args, { cwd: project, env: environment, timeout: 300_000, maxBuffer: 1 << 24 });
  if (input !== undefined) child.child.stdin!.end(input);
  try {
    const { stdout, stderr } = await child;
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof failed.code === 'number' ? failed.code : 1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}
const npmQuiet = ['--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'];

/** A long-running command (npm start, npm run dev) in its own process group, its output kept; stopped with the group. */
function serve(args: string[], env: Record<string, string>): { child: ChildProcess; output: string[]; url: Promise<string>; stop(): Promise<void> } {
  const child = spawn('npm', args, {
    cwd: project,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const output: string[] = [];
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = new Promise<string>((resolve, reject) => {
    for (const stream of [child.stdout!, child.stderr!]) {
      createInterface({ input: stream }).on('line', (line) => {
        output.push(line);
        const listening = /"msg":"listening"/.test(line) ? (JSON.parse(line) as { url: string }).url : /serving (http:\/\/[^ ;]+)/.exec(line)?.[1];
        if (listening) resolve(listening);
      });
    }
    void exited.then(() => reject(new Error(`npm ${args.join(' ')} exited: ${output.slice(-10).join('\n')}`)));
  });
  return {
    child,
    output,
    url,
    stop: async () => {
      if (child.exitCode === null) process.kill(-child.pid!, 'SIGTERM');
      await exited;
    },
  };
}

const basic = (user: string, password: string) => ({ authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` });

beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'xmlrest-package-'));
  // A copy, so that prepack's fresh build of dist/ never touches the build the other tests run.
  const copy = path.join(work, 'checkout');
  copyProject(copy);
  symlinkSync(path.join(CHECKOUT, 'node_modules'), path.join(copy, 'node_modules'), 'dir');
  const packed = await exec('npm', ['pack', '--pack-destination', work, '--loglevel=error'], { cwd: copy, maxBuffer: 1 << 24, timeout: 300_000 });
  tarball = path.join(work, packed.stdout.trim().split('\n').pop()!);
  project = path.join(work, 'shop-api');
  mkdirSync(project);
  databaseUrl = await ownDatabase('package');
}, 600_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('the xmlrest package', () => {
  it('is a tarball of the package alone: no tests, bench, demo resources or demo data, under 3 MB', async () => {
    const { stdout } = await exec('tar', ['-tzf', tarball], { maxBuffer: 1 << 24 });
    const files = stdout.split('\n').filter(Boolean);
    expect(files).toContain('package/dist/runtime/index.js');
    expect(files).toContain('package/dist/runtime/index.d.ts');
    expect(files).toContain('package/dist/console-ui/index.html');
    expect(files.filter((file) => /^package\/(test|bench|resources|generated|dist\/generated)\/|demo\.sql$|\.ts$(?<!\.d\.ts$)/.test(file))).toEqual([]);
    expect(readFileSync(tarball).length).toBeLessThan(3 * 1024 * 1024);
  });

  it('installs into an empty folder, and `npx xmlrest init` writes a project that installs', async () => {
    expect((await run('npm', ['install', tarball, ...npmQuiet])).code).toBe(0);
    const version = JSON.parse(readFileSync(path.join(project, 'node_modules/xmlrest/package.json'), 'utf8')).version as string;
    expect((await run('npx', ['xmlrest', '--version'])).stdout.trim()).toBe(version);
    const init = await run('npx', ['xmlrest', 'init', '--scheme', 'Basic', '--backend', 'api']);
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toContain('npm run dev');
    const manifest = JSON.parse(readFileSync(path.join(project, 'package.json'), 'utf8'));
    expect(manifest.type).toBe('module');
    expect(Object.keys(manifest.scripts)).toEqual(expect.arrayContaining(['generate', 'dev', 'build', 'start', 'test']));
    expect(manifest.dependencies.xmlrest).toMatch(/xmlrest-.*\.tgz$/);
    for (const file of ['tsconfig.json', '.gitignore', '.env.example', 'README.md', 'resources/api/backend.xml'])
      expect(existsSync(path.join(project, file)), file).toBe(true);
    // Its devDependencies (TypeScript, for npm test), as the printed next command has it.
    expect((await run('npm', ['install', ...npmQuiet])).code).toBe(0);
    // The team makes the README its own; init again refuses to overwrite it, naming it, and writes nothing.
    writeFileSync(path.join(project, 'README.md'), '# The shop API\n');
    const again = await run('npx', ['xmlrest', 'init']);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('README.md');
    expect(readFileSync(path.join(project, 'README.md'), 'utf8')).toBe('# The shop API\n');
  }, 300_000);

  it('serves a Basic and a Bearer resource of the team’s own from the built project: npm start, the console, /openapi.json', async () => {
    // A Bearer backend beside init's Basic one: a token resource and a resource behind a role.
    mkdirSync(path.join(project, 'resources/app'));
    writeFileSync(
      path.join(project, 'resources/app/backend.xml'),
      '<?xml version="1.0" encoding="UTF-8"?>\n<Backend xmlns="urn:xmlrest:resource:1.0" auth_scheme="Bearer">\n  <Desc>The app.</Desc>\n</Backend>\n',
    );
    writeFileSync(
      path.join(project, 'resources/app/token.xml'),
      `<?xml version="1.0" encoding="UTF-8"?>
<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0">
  <Request method="POST" status="201">
    <Sql id="authQuery" output="false">
      select cast(u.user_id as char) as sub, r.role_name as aud, u.pass_word
      from usr_role r inner join usr u on r.user_id = u.user_id
      where u.user_name = $user
    </Sql>
    <Execute id="token" output="true" classname="xmlrest.auth.TokenGenerator">
      <Arg name="aud" value="$[authQuery][0].aud"/>
      <Arg name="sub" value="$[authQuery][0].sub"/>
      <Arg name="password" value="$pass"/>
      <Arg name="hash" value="$[authQuery][0].pass_word"/>
      <Arg name="user" value="$user"/>
    </Execute>
  </Request>
</Resource>
`,
    );
    writeFileSync(
      path.join(project, 'resources/app/account.xml'),
      `<?xml version="1.0" encoding="UTF-8"?>
<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0" auth="member">
  <Request method="GET">
    <Sql id="account" output="true">select user_id, user_name from usr where user_id = $uid</Sql>
  </Request>
</Resource>
`,
    );
    writeFileSync(
      path.join(project, 'resources/api/whoami.xml'),
      `<?xml version="1.0" encoding="UTF-8"?>
<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0" auth="member">
  <Request method="GET">
    <Sql id="whoami" output="true">select user_id, user_name from usr where user_id = $uid</Sql>
  </Request>
</Resource>
`,
    );
    const env = { DATABASE_URL: databaseUrl };
    for (const args of [['db', 'init'], ['user', 'add', 'pkg-mia', '--password', 'pkg-pass-1', '--role', 'member'], ['generate']]) {
      const step = await run('npx', ['xmlrest', ...args], env);
      expect(step.code, `${args.join(' ')}: ${step.stderr}`).toBe(0);
    }
    // The modules import the package by its name, and TypeScript --strict is content (npm test: generate --check, tsc).
    expect(readFileSync(path.join(project, 'generated/app/account.ts'), 'utf8')).toContain("from 'xmlrest/runtime'");
    const tested = await run('npm', ['test'], env);
    expect(tested.code, tested.stdout + tested.stderr).toBe(0);
    const built = await run('npm', ['run', 'build'], env);
    expect(built.code, built.stderr).toBe(0);

    const server = serve(['start'], { ...env, PORT: '0', JWT_SECRET: 'a-package-test-secret-of-32-bytes-at-least' });
    try {
      const url = await server.url;
      expect((await fetch(`${url}/api/v1.0/whoami`)).status).toBe(403);
      expect((await fetch(`${url}/api/v1.0/whoami`, { headers: basic('pkg-mia', 'wrong-pass') })).status).toBe(401);
      const own = await fetch(`${url}/api/v1.0/whoami`, { headers: basic('pkg-mia', 'pkg-pass-1') });
      expect(own.status).toBe(200);
      expect(((await own.json()) as { whoami: { user_name: string }[] }).whoami).toEqual([expect.objectContaining({ user_name: 'pkg-mia' })]);
      const token = await fetch(`${url}/app/v1.0/token`, { method: 'POST', body: new URLSearchParams({ user: 'pkg-mia', pass: 'pkg-pass-1' }) });
      expect(token.status).toBe(201);
      const { token: jwt } = (await token.json()) as { token: string };
      expect((await fetch(`${url}/app/v1.0/account`)).status).toBe(403);
      const account = await fetch(`${url}/app/v1.0/account`, { headers: { authorization: `Bearer ${jwt}` } });
      expect(account.status).toBe(200);
      expect((await fetch(`${url}/_console/`)).status).toBe(200);
      const openapi = (await (await fetch(`${url}/openapi.json`)).json()) as { paths: Record<string, unknown> };
      expect(Object.keys(openapi.paths)).toEqual(expect.arrayContaining(['/api/v1.0/whoami', '/app/v1.0/account']));

      const explained = await run('npx', ['xmlrest', 'explain', 'pkg-mia', 'GET', '/api/v1.0/whoami'], env);
      expect(explained.code, explained.stderr).toBe(0);
      const verified = await run('npx', ['xmlrest', 'verify-access', url], env);
      expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    } finally {
      await server.stop();
    }
  }, 300_000);

  it('`npm run dev` with DATABASE_URL unset starts a private MariaDB under .xmlrest/ and serves the example resource', async () => {
    const example = readdirSync(path.join(project, 'resources/api')).find((file) => file !== 'backend.xml' && file !== 'whoami.xml')!;
    const server = serve(['run', 'dev'], { PORT: '0' });
    try {
      const url = await server.url;
      const printed = server.output.join('\n');
      const privateUrl = /DATABASE_URL=(mysql:\/\/\S+)/.exec(printed)?.[1];
      expect(privateUrl).toBeDefined();
      expect(printed).toMatch(/mariadb --socket=\S+\.xmlrest\/dev-db\//);
      const route = `${url}/api/v1.0/${example.replace(/\.xml$/, '')}`;
      expect((await fetch(route)).status).toBe(403);
      expect(
        (
          await run('npx', ['xmlrest', 'user', 'add', 'dev-ada', '--password', 'dev-pass-1', '--role', 'user', '--role', 'member'], {
            DATABASE_URL: privateUrl!,
          })
        ).code,
      ).toBe(0);
      expect((await fetch(route, { headers: basic('dev-ada', 'dev-pass-1') })).status).toBe(200);
    } finally {
      await server.stop();
    }
    expect(existsSync(path.join(project, '.xmlrest/dev-db'))).toBe(true);
  }, 300_000);

  it('refuses to start, naming each, when a ${NAME} setting of an XML file is unset in this environment; writes nothing', async () => {
    mkdirSync(path.join(project, 'resources/partner'));
    writeFileSync(
      path.join(project, 'resources/partner/backend.xml'),
      '<?xml version="1.0" encoding="UTF-8"?>\n<Backend xmlns="urn:xmlrest:resource:1.0" auth_scheme="Bearer">\n  <Issuer iss="${PARTNER_ISS}" audience="partner-api" jwks_uri="${PARTNER_JWKS_URI}"/>\n</Backend>\n',
    );
    writeFileSync(
      path.join(project, 'resources/partner/ping.xml'),
      '<?xml version="1.0" encoding="UTF-8"?>\n<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0" auth="member">\n  <Request method="GET">\n    <Sql id="ping" output="true">select 1 as one</Sql>\n  </Request>\n</Resource>\n',
    );
    const env = { DATABASE_URL: databaseUrl };
    try {
      expect((await run('npx', ['xmlrest', 'generate'], env)).code).toBe(0);
      expect((await run('npm', ['run', 'build'], env)).code).toBe(0);
      const refused = await run('npm', ['start'], { ...env, PORT: '0', JWT_SECRET: 'a-package-test-secret-of-32-bytes-at-least', PARTNER_ISS: '' });
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain('PARTNER_ISS');
      expect(refused.stderr).toContain('PARTNER_JWKS_URI');
    } finally {
      rmSync(path.join(project, 'resources/partner'), { recursive: true, force: true });
      expect((await run('npx', ['xmlrest', 'generate'], env)).code).toBe(0);
      expect((await run('npm', ['run', 'build'], env)).code).toBe(0);
    }
  }, 300_000);

  it('upgrades: a newer xmlrest lists what regenerating changes, and refuses to start modules of a format it no longer serves', async () => {
    // The same package as a later release with a new module format: version and format moved on, nothing else.
    const unpacked = path.join(work, 'next');
    mkdirSync(unpacked);
    await exec('tar', ['-xzf', tarball, '-C', unpacked]);
    const manifestFile = path.join(unpacked, 'package/package.json');
    const manifest = JSON.parse(readFileSync(manifestFile, 'utf8'));
    const old = manifest.version as string;
    manifest.version = '99.0.0';
    writeFileSync(manifestFile, JSON.stringify(manifest, null, 2));
    const formatFile = path.join(unpacked, 'package/dist/runtime/contract/module.js');
    const format = readFileSync(formatFile, 'utf8');
    // The next format, and the oldest it serves that one too: the project's modules (today's format) are refused.
    const nextFormat = Number(/\bMODULE_FORMAT = (\d+)/.exec(format)![1]) + 1;
    const bumped = format
      .replace(/\bMODULE_FORMAT = \d+/, `MODULE_FORMAT = ${nextFormat}`)
      .replace(/\bOLDEST_MODULE_FORMAT = \d+/, `OLDEST_MODULE_FORMAT = ${nextFormat}`);
    expect(bumped).not.toBe(format);
    writeFileSync(formatFile, bumped);
    const next = path.join(work, 'xmlrest-99.0.0.tgz');
    await exec('tar', ['-czf', next, '-C', unpacked, 'package']);
    expect((await run('npm', ['install', next, ...npmQuiet])).code).toBe(0);

    const env = { DATABASE_URL: databaseUrl };
    const check = await run('npx', ['xmlrest', 'generate', '--check'], env);
    expect(check.code).toBe(1);
    expect(check.stdout + check.stderr).toContain('generated/index.ts');
    const refused = await run('npm', ['start'], { ...env, PORT: '0', JWT_SECRET: 'a-package-test-secret-of-32-bytes-at-least' });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(old);
    expect(refused.stderr).toContain('99.0.0');
    expect(refused.stderr).toContain('npx xmlrest generate');
    // The upgrade done as README says: regenerate, rebuild, start.
    expect((await run('npx', ['xmlrest', 'generate'], env)).code).toBe(0);
    expect((await run('npm', ['run', 'build'], env)).code).toBe(0);
    const server = serve(['start'], { ...env, PORT: '0', JWT_SECRET: 'a-package-test-secret-of-32-bytes-at-least' });
    try {
      const url = await server.url;
      expect((await fetch(`${url}/api/v1.0/whoami`, { headers: basic('pkg-mia', 'pkg-pass-1') })).status).toBe(200);
    } finally {
      await server.stop();
    }
  }, 300_000);
});
