import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeClusterDir, nodeUser, searchableByOthers } from '../../scripts/galera-dir.js';

/**
 * Where the test Galera cluster keeps its data (scripts/galera-dir.ts): reachable by the user its nodes run as
 * whatever folder holds the checkout, here a mode-700 folder (as `mktemp -d` makes) that is also TMPDIR.
 */
const asRoot = process.getuid?.() === 0;
const startedIn = process.cwd();
const startedTmp = process.env.TMPDIR;
let privateDir: string;
const made: string[] = [];

beforeEach(() => {
  privateDir = mkdtempSync(path.join(tmpdir(), 'xmlrest-private-'));
  expect(statSync(privateDir).mode & 0o777).toBe(0o700);
  process.chdir(privateDir);
  process.env.TMPDIR = privateDir;
});

afterEach(() => {
  process.chdir(startedIn);
  if (startedTmp === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = startedTmp;
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
  rmSync(privateDir, { recursive: true, force: true });
});

describe('the cluster folder', () => {
  it('is outside a private checkout and TMPDIR, and every folder above it lets other users through, when the nodes run as another user', async () => {
    const user = nodeUser();
    const dir = await makeClusterDir({ ...user, other: true });
    made.push(dir);
    expect(dir.startsWith(privateDir)).toBe(false);
    expect(searchableByOthers(path.dirname(dir))).toBe(true);
    expect(statSync(dir).uid).toBe(user.uid);
  });

  it.skipIf(!asRoot)('as root: is the mysql user’s, who can write in it (checked as that user)', async () => {
    const user = nodeUser();
    expect(user).toMatchObject({ name: 'mysql', other: true });
    const dir = await makeClusterDir(user);
    made.push(dir);
    const node = path.join(dir, 'node1');
    const asMysql = spawnSync('runuser', ['-u', 'mysql', '--', 'mkdir', node], { encoding: 'utf8' });
    expect(asMysql.stderr).toBe('');
    expect(asMysql.status).toBe(0);
    expect(statSync(node).uid).toBe(user.uid);
  });

  it('as the user running the tests: may stay in a private TMPDIR (no one else needs it)', async () => {
    const dir = await makeClusterDir({ ...nodeUser(), name: 'me', uid: process.getuid!(), gid: process.getgid!(), other: false });
    made.push(dir);
    expect(path.dirname(dir)).toBe(privateDir);
  });

  it('removes the clusters of runs that are gone, and leaves those of runs still going', async () => {
    const base = '/tmp';
    const dead = spawnSync(process.execPath, ['-e', '']).pid!;
    const gone = path.join(base, `xmlrest-galera-gone${process.pid}`);
    const going = path.join(base, `xmlrest-galera-going${process.pid}`);
    for (const [dir, runner] of [
      [gone, dead],
      [going, process.pid],
    ] as const) {
      mkdirSync(path.join(dir, 'node1'), { recursive: true });
      writeFileSync(path.join(dir, 'runner.pid'), String(runner));
      made.push(dir);
    }
    made.push(await makeClusterDir({ ...nodeUser(), other: true }));
    expect(existsSync(gone)).toBe(false);
    expect(readdirSync(going)).toEqual(['node1', 'runner.pid']);
  });
});

describe('the nodes’ user', () => {
  it.skipIf(!asRoot)('as root without a mysql user: says what the cluster needs', () => {
    const passwd = path.join(privateDir, 'passwd');
    writeFileSync(passwd, 'root:x:0:0:root:/root:/bin/bash\n');
    expect(() => nodeUser(passwd)).toThrow(/needs a mysql user .*install mariadb-server.*or run npm run test:cluster as a user other than root/);
  });
});
