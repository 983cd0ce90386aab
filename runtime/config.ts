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
  };
}
