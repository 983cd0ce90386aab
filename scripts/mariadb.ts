import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, openSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { userInfo } from 'node:os';
import path from 'node:path';
import mysql from 'mysql2/promise';
import { ensurePackages, installedBinary, MARIADB } from './system-packages.js';

/**
 * A private MariaDB for the demo and the tests: its own data dir, socket and
 * free port under a git-ignored folder, never the machine's own server. When
 * mariadbd is missing it is installed with apt-get (Debian's mariadb-server).
 */
export interface PrivateMariadb {
  /** `mysql://xmlrest:<password>@127.0.0.1:<port>/<database>`; the password is new on every start. */
  url: string;
  port: number;
  socket: string;
  password: string;
  pid: number;
  stop(): Promise<void>;
  /** Sends a signal (SIGKILL, SIGSTOP, SIGCONT, ...); SIGKILL and SIGTERM wait for the process to end. */
  kill(signal: NodeJS.Signals): Promise<void>;
  /** A connection as the server's superuser, over its socket (to make users, set global variables). */
  admin(): Promise<mysql.Connection>;
}

export interface StartOptions {
  /** Folder for data dir, socket and logs; created when missing. */
  dir: string;
  database?: string;
  /** Start from an empty data dir. */
  fresh?: boolean;
  log?: (line: string) => void;
  /** Listen on this port (a restart keeps its URL); a free one by default. */
  port?: number;
  /** The xmlrest user's password (a restart keeps its URL); a new one by default. */
  password?: string;
  /** More mariadbd options, such as `--innodb-lock-wait-timeout=1`. */
  serverArgs?: string[];
  /** PEM files: the server offers TLS with this certificate, and verifies client certificates against `ca`. */
  tls?: { ca: string; cert: string; key: string };
}

/** The server binary, installed with apt-get (Debian's mariadb-server) when missing. */
export function ensureMariadbInstalled(log: (line: string) => void = () => {}): string {
  if (installedBinary(MARIADB) === undefined && process.getuid?.() !== 0) {
    throw new Error('MariaDB is not installed: run `sudo apt-get install -y mariadb-server`, or set DATABASE_URL');
  }
  ensurePackages([MARIADB], log);
  return installedBinary(MARIADB)!;
}

export async function startPrivateMariadb(options: StartOptions): Promise<PrivateMariadb> {
  const log = options.log ?? (() => {});
  const mariadbd = ensureMariadbInstalled(log);
  const dir = path.resolve(options.dir);
  const dataDir = path.join(dir, 'data');
  // Unix socket paths are limited to about 100 bytes; the folder path may be long.
  const socket = path.join(dir, 'mysqld.sock');
  // A server left by a killed run holds the data dir: stop it before removing or reusing the folder.
  await stopLeftover(dir);
  if (options.fresh) rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });

  const asRoot = process.getuid?.() === 0 ? ['--user=root'] : [];
  if (!existsSync(path.join(dataDir, 'mysql'))) {
    execFileSync('mariadb-install-db', ['--no-defaults', `--datadir=${dataDir}`, '--auth-root-authentication-method=socket', '--skip-test-db', ...asRoot], {
      stdio: ['ignore', openSync(path.join(dir, 'install.log'), 'w'), openSync(path.join(dir, 'install.log'), 'a')],
    });
  }
  const port = options.port ?? (await freePort());
  const child = spawn(
    mariadbd,
    [
      '--no-defaults',
      `--datadir=${dataDir}`,
      `--socket=${socket}`,
      `--port=${port}`,
      '--bind-address=127.0.0.1',
      '--skip-name-resolve',
      `--pid-file=${path.join(dir, 'mariadbd.pid')}`,
      `--log-error=${path.join(dir, 'error.log')}`,
      '--innodb-buffer-pool-size=64M',
      '--innodb-log-file-size=16M',
      // Durability is not what a throwaway dev and test instance is for.
      '--innodb-flush-log-at-trx-commit=2',
      '--max-connections=500',
      ...(options.tls
        ? [`--ssl-ca=${path.resolve(options.tls.ca)}`, `--ssl-cert=${path.resolve(options.tls.cert)}`, `--ssl-key=${path.resolve(options.tls.key)}`]
        : []),
      ...(options.serverArgs ?? []),
      ...asRoot,
    ],
    { stdio: 'ignore', detached: false },
  );
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await waitForSocket(socket, child, dir);

  const database = options.database ?? 'xmlrest';
  const password = options.password ?? randomBytes(18).toString('base64url');
  const connectAdmin = () => mysql.createConnection({ socketPath: socket, user: socketUser() });
  const admin = await connectAdmin();
  try {
    await admin.query(`create database if not exists \`${database}\` character set utf8mb4 collate utf8mb4_unicode_ci`);
    await admin.query('create user if not exists xmlrest@127.0.0.1 identified by ?', [password]);
    await admin.query('alter user xmlrest@127.0.0.1 identified by ?', [password]);
    await admin.query(`grant all privileges on \`${database}\`.* to xmlrest@127.0.0.1`);
  } finally {
    await admin.end();
  }
  return {
    url: `mysql://xmlrest:${password}@127.0.0.1:${port}/${database}`,
    port,
    socket,
    password,
    pid: child.pid!,
    stop: () => stopChild(child, exited),
    kill: async (signal: NodeJS.Signals) => {
      child.kill(signal);
      if (signal === 'SIGKILL' || signal === 'SIGTERM') await exited;
    },
    admin: connectAdmin,
  };
}

async function stopChild(child: ChildProcess, exited: Promise<number | null>): Promise<void> {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  const timeout = setTimeout(() => child.kill('SIGKILL'), 20_000);
  await exited;
  clearTimeout(timeout);
}

/** A server left running by a killed run holds the data dir's lock; stop it first. */
async function stopLeftover(dir: string): Promise<void> {
  const pidFile = path.join(dir, 'mariadbd.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  if (!Number.isInteger(pid) || pid <= 0) return;
  // The pid may have been reused since: only a mariadbd serving this folder is ours to stop.
  let commandLine = '';
  try {
    commandLine = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return;
  }
  if (!commandLine.includes('mariadbd') && !commandLine.includes('mysqld')) return;
  if (!commandLine.includes(path.join(dir, 'data'))) return;
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  for (let i = 0; i < 200; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await sleep(100);
  }
}

async function waitForSocket(socket: string, child: ChildProcess, dir: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) {
      throw new Error(`mariadbd exited with code ${child.exitCode}; see ${path.join(dir, 'error.log')}`);
    }
    try {
      const connection = await mysql.createConnection({ socketPath: socket, user: socketUser() });
      await connection.end();
      return;
    } catch {
      await sleep(50);
    }
  }
  throw new Error(`mariadbd did not start within 15 s; see ${path.join(dir, 'error.log')}`);
}

/** mariadb-install-db gives root and the installing OS user passwordless socket access. */
export function socketUser(): string {
  return process.getuid?.() === 0 ? 'root' : userInfo().username;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
