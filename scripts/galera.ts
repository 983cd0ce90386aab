import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import mysql from 'mysql2/promise';
import { makeClusterDir, type NodeUser, nodeUser } from './galera-dir.js';
import { freePort } from './mariadb.js';
import { ensurePackages, GALERA, LSOF, MARIADB, RSYNC } from './system-packages.js';

/**
 * A private MariaDB Galera cluster on loopback, for `npm run test:cluster`:
 * Debian's mariadb-server and galera-4 (installed with apt-get when
 * missing), each node with its own data dir, socket and ports, in a fresh
 * folder under the system's temporary folder that stop() removes
 * (scripts/galera-dir.ts: never under the checkout, whose folder may be
 * private), run as the `mysql` user when the tests run as root (rsync SST
 * drops to `nobody` and must read the files), else as the user running them. Node 1
 * bootstraps; the others join by SST. A node that was killed rejoins by IST:
 * it is started at the position `--wsrep-recover` finds.
 */
export interface GaleraNode {
  index: number;
  port: number;
  /** Whether its process is running. */
  running(): boolean;
  /** Sends a signal; SIGKILL and SIGTERM wait for the process to end. */
  kill(signal: NodeJS.Signals): Promise<void>;
  /** Starts it again (after a kill), joining the others at its recovered position. */
  restart(): Promise<void>;
  /** Its wsrep state (`Synced`, `Joining`, ...), read over its socket; undefined when it does not answer. */
  state(): Promise<string | undefined>;
}

export interface GaleraCluster {
  nodes: GaleraNode[];
  /** `mysql://xmlrest:<password>@127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3/<database>` */
  url: string;
  /** The same, one node only. */
  urlOf(index: number): string;
  /** Where the nodes keep their data (removed by stop()). */
  dir: string;
  /** A connection to a node as its superuser, over its socket (to set global variables). */
  admin(index: number): Promise<mysql.Connection>;
  stop(): Promise<void>;
}

const PROVIDER = '/usr/lib/galera/libgalera_smm.so';

interface NodePorts {
  port: number;
  gcomm: number;
  ist: number;
  sst: number;
}

export async function startGaleraCluster(options: { database: string; size?: number; log?: (line: string) => void }): Promise<GaleraCluster> {
  const log = options.log ?? (() => {});
  ensurePackages([MARIADB, GALERA, RSYNC, LSOF], log);
  const mariadbd = ['/usr/sbin/mariadbd', '/usr/bin/mariadbd'].find((candidate) => existsSync(candidate))!;
  const size = options.size ?? 3;
  const user = nodeUser();
  const dir = await makeClusterDir(user);
  const ports: NodePorts[] = [];
  for (let i = 0; i < size; i++) ports.push({ port: await freePort(), gcomm: await freePort(), ist: await freePort(), sst: await freePort() });
  const gcomm = `gcomm://${ports.map((node) => `127.0.0.1:${node.gcomm}`).join(',')}`;
  const nodeDir = (i: number) => path.join(dir, `node${i + 1}`);
  for (let i = 0; i < size; i++) {
    mkdirSync(path.join(nodeDir(i), 'data'), { recursive: true });
    chownTree(nodeDir(i), user);
  }
  // As root, the nodes run as mysql (named); as anyone else, as that user (a --user would only be warned about).
  const asUser = user.other ? [`--user=${user.name}`] : [];
  execFileSync(
    'mariadb-install-db',
    ['--no-defaults', `--datadir=${path.join(nodeDir(0), 'data')}`, ...asUser, '--auth-root-authentication-method=socket', '--skip-test-db'],
    {
      stdio: ['ignore', openSync(path.join(nodeDir(0), 'install.log'), 'w'), openSync(path.join(nodeDir(0), 'install.log'), 'a')],
    },
  );

  const children: (ChildProcess | undefined)[] = [];
  const exits: (Promise<number | null> | undefined)[] = [];
  const args = (i: number, extra: string[]) => [
    '--no-defaults',
    `--datadir=${path.join(nodeDir(i), 'data')}`,
    `--socket=${path.join(nodeDir(i), 'mysqld.sock')}`,
    `--port=${ports[i]!.port}`,
    '--bind-address=127.0.0.1',
    '--skip-name-resolve',
    ...asUser,
    `--pid-file=${path.join(nodeDir(i), 'mariadbd.pid')}`,
    `--log-error=${path.join(nodeDir(i), 'error.log')}`,
    '--innodb-buffer-pool-size=64M',
    '--innodb-log-file-size=16M',
    '--innodb-flush-log-at-trx-commit=2',
    '--max-connections=300',
    '--binlog-format=ROW',
    '--default-storage-engine=InnoDB',
    '--innodb-autoinc-lock-mode=2',
    // Galera logs like a binary log: creating triggers (xmlrest db init) needs this, or SUPER.
    '--log-bin-trust-function-creators=1',
    '--wsrep-on=ON',
    `--wsrep-provider=${PROVIDER}`,
    '--wsrep-cluster-name=xmlrest_test',
    `--wsrep-cluster-address=${gcomm}`,
    `--wsrep-node-name=node${i + 1}`,
    `--wsrep-node-address=127.0.0.1:${ports[i]!.gcomm}`,
    // IST needs a port of its own, or it collides with the next node's gcomm port; a dead node is declared
    // dead after 2-3 s rather than 5-6, so that writes on the survivors stall less.
    `--wsrep-provider-options=base_port=${ports[i]!.gcomm};ist.recv_addr=127.0.0.1:${ports[i]!.ist};gmcast.listen_addr=tcp://127.0.0.1:${ports[i]!.gcomm};evs.keepalive_period=PT0.5S;evs.suspect_timeout=PT2S;evs.inactive_timeout=PT3S;gcache.size=64M`,
    '--wsrep-sst-method=rsync',
    `--wsrep-sst-receive-address=127.0.0.1:${ports[i]!.sst}`,
    ...extra,
  ];
  const launch = async (i: number, extra: string[]) => {
    const child = spawn(mariadbd, args(i, extra), { stdio: 'ignore' });
    children[i] = child;
    exits[i] = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    await waitUntilSynced(i, child);
  };
  const socketOf = (i: number) => path.join(nodeDir(i), 'mysqld.sock');
  // mariadb-install-db lets root, and the OS user installing, in over the socket without a password.
  const superuser = user.other ? 'root' : user.name;
  const stateOf = async (i: number): Promise<string | undefined> => {
    try {
      const connection = await mysql.createConnection({ socketPath: socketOf(i), user: superuser, connectTimeout: 1000 });
      try {
        const [rows] = await connection.query("show status like 'wsrep_local_state_comment'");
        return (rows as { Value: string }[])[0]?.Value;
      } finally {
        await connection.end();
      }
    } catch {
      return undefined;
    }
  };
  const waitUntilSynced = async (i: number, child: ChildProcess) => {
    for (let tries = 0; tries < 1200; tries++) {
      if (!alive(child)) throw new Error(`galera node ${i + 1} stopped; see ${path.join(nodeDir(i), 'error.log')}`);
      if ((await stateOf(i)) === 'Synced') return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`galera node ${i + 1} did not sync within 120 s; see ${path.join(nodeDir(i), 'error.log')}`);
  };

  const stopNodes = async () => {
    // The last node to stop is the one with the newest data; order does not matter for a throwaway cluster.
    await Promise.all(
      children.map(async (child, i) => {
        if (!alive(child)) return;
        child.kill('SIGCONT');
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
        await exits[i];
        clearTimeout(timer);
      }),
    );
  };

  const started = Date.now();
  const password = randomBytes(18).toString('base64url');
  try {
    await launch(0, ['--wsrep-new-cluster']);
    const admin = await mysql.createConnection({ socketPath: socketOf(0), user: superuser });
    try {
      await admin.query(`create database if not exists \`${options.database}\` character set utf8mb4 collate utf8mb4_unicode_ci`);
      await admin.query("create user if not exists 'xmlrest'@'127.0.0.1' identified by ?", [password]);
      await admin.query(`grant all privileges on \`${options.database}\`.* to 'xmlrest'@'127.0.0.1'`);
    } finally {
      await admin.end();
    }
    for (let i = 1; i < size; i++) await launch(i, []);
  } catch (error) {
    // No cluster for the caller to stop: its nodes stop here. The folder stays for its logs (the next run removes it).
    await stopNodes();
    throw error;
  }
  log(`galera: ${size} nodes synced in ${Date.now() - started} ms (as ${user.name}, in ${dir})`);

  const url = (list: number[]) => `mysql://xmlrest:${password}@${list.map((i) => `127.0.0.1:${ports[i]!.port}`).join(',')}/${options.database}`;
  const nodes: GaleraNode[] = ports.map((node, i) => ({
    index: i + 1,
    port: node.port,
    running: () => alive(children[i]),
    kill: async (signal) => {
      children[i]?.kill(signal);
      if (signal === 'SIGKILL' || signal === 'SIGTERM') await exits[i];
    },
    restart: async () => {
      if (alive(children[i])) throw new Error(`galera node ${i + 1} is running`);
      // The position its data ends at: with it the node rejoins by IST (a few seconds), not a full SST.
      execFileSync(mariadbd, [...args(i, ['--wsrep-recover']), `--log-error=${path.join(nodeDir(i), 'recover.log')}`], { stdio: 'ignore' });
      const position = /Recovered position:\s*(\S+)/.exec(readFileSync(path.join(nodeDir(i), 'recover.log'), 'utf8'))?.[1];
      await launch(i, position ? [`--wsrep-start-position=${position}`] : []);
    },
    state: () => stateOf(i),
  }));
  return {
    nodes,
    url: url(ports.map((_, i) => i)),
    urlOf: (index) => url([index - 1]),
    dir,
    admin: (index) => mysql.createConnection({ socketPath: socketOf(index - 1), user: superuser }),
    stop: async () => {
      await stopNodes();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function alive(child: ChildProcess | undefined): child is ChildProcess {
  return child !== undefined && child.exitCode === null && child.signalCode === null;
}

function chownTree(target: string, owner: NodeUser): void {
  chownSync(target, owner.uid, owner.gid);
  for (const entry of readdirSync(target, { withFileTypes: true })) {
    const child = path.join(target, entry.name);
    if (entry.isDirectory()) chownTree(child, owner);
    else chownSync(child, owner.uid, owner.gid);
  }
}
