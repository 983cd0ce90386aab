import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { inject } from 'vitest';
import { DEMO_WEBHOOK_ENV } from './demo-webhook.js';
import { TEST_SECRET } from './server.js';

/**
 * The server as users run it: `npm start`'s entry, the compiled
 * dist/scripts/serve.js (built once per test run by global-setup.ts), in a
 * process of its own, configured by its environment.
 */
export interface BuiltServer {
  url: string;
  /** The admin listener (ADMIN_PORT), when the server has one. */
  adminUrl: string | undefined;
  pid: number;
  /** Every log line so far, parsed. */
  logs: Record<string, unknown>[];
  /** The process's resident memory now, in bytes (from /proc). */
  rss(): Promise<number>;
  /** Resolves with the exit code when the process ends. */
  exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface BuiltServerOptions {
  /** The project folder it runs in (holding dist/); default this one. */
  root?: string;
  env?: Record<string, string>;
  /** Node's own flags, such as --expose-gc. */
  nodeArgs?: string[];
  /** The script to run, relative to root: dist/scripts/serve.js, or scripts/start.mjs (exactly `npm start`). */
  entry?: string;
  /** Its arguments (`start`, for scripts/xmlrest.mjs). */
  args?: string[];
}

export async function startBuiltServer(options: BuiltServerOptions = {}): Promise<BuiltServer> {
  const root = options.root ?? process.cwd();
  const child: ChildProcess = spawn(
    process.execPath,
    [...(options.nodeArgs ?? []), path.join(root, options.entry ?? 'dist/scripts/serve.js'), ...(options.args ?? [])],
    {
      cwd: root,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        DATABASE_URL: inject('databaseUrl'),
        JWT_SECRET: TEST_SECRET,
        PORT: '0',
        LOG_LEVEL: 'info',
        ...DEMO_WEBHOOK_ENV,
        ...options.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const logs: Record<string, unknown>[] = [];
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let adminUrl: string | undefined;
  const listening = new Promise<string>((resolve, reject) => {
    for (const stream of [child.stdout!, child.stderr!]) {
      createInterface({ input: stream }).on('line', (line) => {
        let entry: Record<string, unknown>;
        try {
          entry = JSON.parse(line) as Record<string, unknown>;
        } catch {
          entry = { text: line };
        }
        logs.push(entry);
        if (logs.length > 20_000) logs.splice(0, 10_000);
        if (entry.msg === 'listening' || entry.message === 'listening') {
          adminUrl = typeof entry.admin === 'string' ? entry.admin : undefined;
          resolve(String(entry.url));
        }
      });
    }
    void exited.then((code) => reject(new Error(`the built server exited with code ${code}: ${JSON.stringify(logs.slice(-5))}`)));
  });
  const url = await listening;
  return {
    url,
    adminUrl,
    pid: child.pid!,
    logs,
    rss: async () => {
      const { readFile } = await import('node:fs/promises');
      const status = await readFile(`/proc/${child.pid}/status`, 'utf8');
      return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
    },
    exited,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null) child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}
