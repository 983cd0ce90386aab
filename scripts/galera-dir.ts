import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';

/**
 * Where a test Galera cluster keeps its nodes' data, and as whom the nodes run. Never under the checkout: a
 * checkout may lie in a folder only its owner can enter (`mktemp -d` makes them mode 700, and so is root's
 * home), and the nodes must reach their data as the user they run as.
 */
export interface NodeUser {
  name: string;
  uid: number;
  gid: number;
  /** Not the user running the tests: its data's every parent folder must let others through. */
  other: boolean;
}

/** A fresh cluster folder's name starts with this; the folder holds the pid of the process that made it. */
const PREFIX = 'xmlrest-galera-';
const RUNNER = 'runner.pid';

/**
 * As root, the `mysql` user: a root mariadbd's rsync SST daemon drops to `nobody`, which can then write none
 * of a root-owned data dir, while one run as mysql keeps mysql. As anyone else, that user itself (its rsync
 * daemon drops nothing). `passwd` is read for the mysql user (a test names another).
 */
export function nodeUser(passwd = '/etc/passwd'): NodeUser {
  const uid = process.getuid?.() ?? 0;
  if (uid !== 0) return { name: userInfo().username, uid, gid: process.getgid?.() ?? uid, other: false };
  const line = readFileSync(passwd, 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('mysql:'));
  if (!line)
    throw new Error(
      'the Galera test cluster needs a mysql user to run its nodes as when the tests run as root (a root node loses its rsync state transfer to nobody): install mariadb-server (apt-get install mariadb-server makes the user), or run npm run test:cluster as a user other than root',
    );
  const [, , userId, groupId] = line.split(':');
  return { name: 'mysql', uid: Number(userId), gid: Number(groupId), other: true };
}

/** Whether a user other than its owner may pass through `dir` and every folder above it. */
export function searchableByOthers(dir: string): boolean {
  for (let at = path.resolve(dir); ; at = path.dirname(at)) {
    if ((statSync(at).mode & 0o001) === 0) return false;
    if (at === path.dirname(at)) return true;
  }
}

/**
 * A new folder for one cluster, owned by `user`, under the system's temporary folder (or, when that one is
 * private and the nodes run as another user, /tmp or /var/tmp). Clusters of runs that were killed are
 * stopped and removed first; those of runs still going (another checkout's, say) are left alone.
 */
export async function makeClusterDir(user: NodeUser): Promise<string> {
  const candidates = [...new Set([tmpdir(), '/tmp', '/var/tmp'])].filter((dir) => existsSync(dir));
  const base = user.other ? candidates.find(searchableByOthers) : candidates[0];
  if (base === undefined)
    throw new Error(
      `the Galera test cluster runs its nodes as ${user.name}, and none of ${candidates.join(', ')} lets other users through: set TMPDIR to a folder that does`,
    );
  await removeLeftovers(base);
  const dir = mkdtempSync(path.join(base, PREFIX));
  writeFileSync(path.join(dir, RUNNER), String(process.pid));
  chownSync(dir, user.uid, user.gid);
  return dir;
}

/** Stops the nodes of clusters whose runner is gone (they hold memory and ports) and removes their folders. */
async function removeLeftovers(base: string): Promise<void> {
  const orphans = readdirSync(base)
    .filter((name) => name.startsWith(PREFIX))
    .map((name) => path.join(base, name))
    .filter((dir) => !runnerAlive(dir));
  if (orphans.length === 0) return;
  for (const dir of orphans) {
    for (const node of safeList(dir)) {
      const pidFile = path.join(dir, node, 'mariadbd.pid');
      try {
        const pid = Number(readFileSync(pidFile, 'utf8').trim());
        if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(dir)) continue;
        process.kill(pid, 'SIGCONT');
        process.kill(pid, 'SIGKILL');
      } catch {
        // No pid file, or the node is gone already.
      }
    }
  }
  await new Promise((resolve) => setTimeout(resolve, 500));
  for (const dir of orphans) rmSync(dir, { recursive: true, force: true });
}

function runnerAlive(dir: string): boolean {
  try {
    process.kill(Number(readFileSync(path.join(dir, RUNNER), 'utf8').trim()), 0);
    return true;
  } catch (error) {
    // EPERM: alive, another user's. No file (a folder being made this moment, or not ours): leave it too.
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'EPERM' || code === 'ENOENT' || code === 'EACCES';
  }
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
