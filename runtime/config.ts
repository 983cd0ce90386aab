import { existsSync } from 'node:fs';
import { parseLogLevel, type LogLevel } from './log.js';

/** Server settings from the environment (contract §1); a `.env` file may supply them. */
export interface ServerConfig {
  databaseUrl: string;
  jwtSecret: string | undefined;
  port: number;
  host: string;
  basePath: string;
  logLevel: LogLevel;
  /** Browser origins allowed by CORS; empty leaves CORS off. */
  corsOrigins: string[];
  maxParams: number;
  maxHeaderBytes: number;
  statementTimeoutMs: number;
  loginLimits: { perUser: number; perAddress: number; windowSeconds: number };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env, envFile = '.env'): ServerConfig {
  // Values already in the environment win over the file (process.loadEnvFile never overwrites).
  if (env === process.env && existsSync(envFile)) process.loadEnvFile(envFile);
  const databaseUrl = env.DATABASE_URL;
  if (!databaseUrl) throw new Error('DATABASE_URL is not set (mysql://user:pass@host:port/db)');
  const port = Number(env.PORT ?? 3000);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORT is not a port number: ${env.PORT}`);
  return {
    databaseUrl,
    jwtSecret: env.JWT_SECRET || undefined,
    port,
    host: env.HOST || '127.0.0.1',
    basePath: env.BASE_PATH ?? '',
    logLevel: parseLogLevel(env.LOG_LEVEL),
    corsOrigins: (env.CORS_ORIGINS ?? '').split(',').map((origin) => origin.trim()).filter(Boolean),
    maxParams: whole(env.MAX_PARAMS, 100, 'MAX_PARAMS'),
    maxHeaderBytes: whole(env.MAX_HEADER_BYTES, 16 * 1024, 'MAX_HEADER_BYTES'),
    statementTimeoutMs: whole(env.QUERY_TIMEOUT_MS, 10_000, 'QUERY_TIMEOUT_MS'),
    loginLimits: {
      perUser: whole(env.LOGIN_MAX_FAILURES, 10, 'LOGIN_MAX_FAILURES'),
      perAddress: whole(env.LOGIN_MAX_FAILURES_PER_ADDRESS, 50, 'LOGIN_MAX_FAILURES_PER_ADDRESS'),
      windowSeconds: whole(env.LOGIN_WINDOW_SECONDS, 300, 'LOGIN_WINDOW_SECONDS'),
    },
  };
}

function whole(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value === '') return fallback;
  if (!/^[0-9]+$/.test(value)) throw new Error(`${name} is a whole number, not ${value}`);
  return Number(value);
}
