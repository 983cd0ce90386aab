import { inject } from 'vitest';
import type { BackendModule } from '../../runtime/contract.js';
import { createLogger, createReloadableApp, type Database, listen, openDatabase, type Revocations, type RunningServer } from '../../runtime/index.js';
import { DEMO_WEBHOOK_ENV } from './demo-webhook.js';

/** A 32-byte secret made for this test run. */
export const TEST_SECRET = 'test-secret-0123456789-abcdefghijklmnop';

export interface TestServer {
  url: string;
  database: Database;
  /** Reads revocations and user changes now rather than at the next poll. */
  revocations: Revocations;
  close(): Promise<void>;
}

/** The real server on a free loopback port, against the run's private MariaDB. */
export interface TestServerOptions {
  basePath?: string;
  openapi?: object;
  corsOrigins?: string[];
  maxParams?: number;
  statementTimeoutMs?: number;
  maxHeaderBytes?: number;
  loginLimits?: { perUser: number; perAddress: number; windowSeconds: number };
  trustProxy?: boolean;
  requireTlsForCredentials?: boolean;
  tls?: { cert: string; key: string };
  revocationPollMs?: number;
  loginCounters?: 'memory' | 'database';
}

export async function startServer(backends: readonly BackendModule[], options: TestServerOptions = {}): Promise<TestServer> {
  const database = openDatabase(inject('databaseUrl'), { statementTimeoutMs: options.statementTimeoutMs });
  const { app, revocations } = createReloadableApp({
    backends,
    database,
    jwtSecret: TEST_SECRET,
    basePath: options.basePath,
    openapi: options.openapi,
    corsOrigins: options.corsOrigins,
    maxParams: options.maxParams,
    loginLimits: options.loginLimits,
    trustProxy: options.trustProxy,
    requireTlsForCredentials: options.requireTlsForCredentials,
    revocationPollMs: options.revocationPollMs,
    loginCounters: options.loginCounters,
    webhookSecrets: DEMO_WEBHOOK_ENV,
    logger: createLogger('silent'),
  });
  const running: RunningServer = await listen(app, 0, '127.0.0.1', { maxHeaderBytes: options.maxHeaderBytes, tls: options.tls });
  return {
    url: running.url,
    database,
    revocations,
    close: async () => {
      await running.close();
      await database.end();
    },
  };
}

export function basic(user: string, pass: string, { padding = true } = {}): string {
  const encoded = Buffer.from(`${user}:${pass}`, 'utf8').toString('base64');
  return `Basic ${padding ? encoded : encoded.replace(/=+$/, '')}`;
}

export function form(fields: Record<string, string>): { body: string; headers: Record<string, string> } {
  return { body: new URLSearchParams(fields).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } };
}

/** Decodes a JWT's header and payload (what a client app may do, docs/internals/seed.md §2.4). */
export function decodeJwt(token: string): { header: Record<string, unknown>; payload: Record<string, unknown> } {
  const [header, payload] = token.split('.');
  const decode = (part: string | undefined) => JSON.parse(Buffer.from(part ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
  return { header: decode(header), payload: decode(payload) };
}
