import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import type mysql from 'mysql2/promise';
import { databaseUrlFromEnvironment } from '../../generator/environment.js';
import { ConfigError, resolveEnvironment } from '../../runtime/config.js';
import type { BackendModule } from '../../runtime/index.js';
import { connectTo } from '../connection.js';
import { buildToolsInstalled, FROM_BUILD } from '../install.js';
import { generatedBackends as backendsOf } from './generated-backends.js';

/**
 * What every command's file (commands/) is given by the program that registers it (xmlrest.ts), and the errors,
 * the database connection and the checks they share.
 */
export interface CommandKit {
  command(parent: Command, name: string, description: string): Command;
  withConnection<T>(work: (connection: mysql.Connection) => Promise<T>): Promise<T>;
  /** A wrong command line (exit 2). */
  usage(message: string): Error;
  done(code: number): void;
}

/** A wrong command line: exit code 2, as usage errors conventionally are. */
export class UsageError extends Error {
  readonly exitCode = 2;
}

/** A right command line that this install cannot run (a build-time command in a production install): exit code 2, no usage hint. */
class NotHere extends Error {
  readonly exitCode = 2;
}

export const HINT = '(run xmlrest --help, or xmlrest <command> --help, for usage)';

async function connect(): Promise<mysql.Connection> {
  const url = databaseUrlFromEnvironment(process.cwd());
  if (!url)
    throw new UsageError('DATABASE_URL is not set: this command works on the database at mysql://user:password@host:3306/database (environment or .env)');
  return connectTo(url, { multipleStatements: true });
}

export async function withConnection<T>(work: (connection: mysql.Connection) => Promise<T>): Promise<T> {
  const connection = await connect();
  try {
    return await work(connection);
  } finally {
    await connection.end();
  }
}

/**
 * Generating is a build-time step: a production install (`npm ci --omit=dev`) runs the build it was given and
 * has no TypeScript compiler to make another, so what `generate` wrote there would never be served (`npm start`
 * refuses a build older than its sources). The console, which compiles what it regenerates into the build, is
 * the way to change who may call a resource on a running server.
 */
export function requireBuildTools(command: string): void {
  if (!FROM_BUILD || buildToolsInstalled()) return;
  throw new NotHere(
    `${command} is a build-time command, and this is a production install (no TypeScript compiler to rebuild dist/): run it where the dev dependencies are installed, then npm run build, and deploy generated/ and dist/ (xmlrest generate --check works here; on a running server the console changes who may call a resource)`,
  );
}

/**
 * The project's backends, as generated/ serves them: their `${NAME}` settings read from the environment as the
 * server reads them (docs/internals/contract.md §7). With one unset, as written: a command that needs none of them still
 * runs, and explain shows the reference where the value is missing.
 */
export async function generatedBackends(): Promise<BackendModule[]> {
  const backends = await backendsOf(process.cwd());
  // The values as npm start would find them: the environment first, then the project's .env (never overwriting).
  if (existsSync('.env')) process.loadEnvFile('.env');
  try {
    return resolveEnvironment(backends, process.env);
  } catch (error) {
    if (error instanceof ConfigError) return backends;
    throw error;
  }
}
