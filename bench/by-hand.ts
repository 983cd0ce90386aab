/**
 * What the servers written by hand share (handwritten.ts, raw-http.ts, koa-hello.ts): their pool on the bench's
 * database, and the duties the contract gives every GET as they write them, copied from the runtime rather than
 * imported, so that none of them runs the runtime's code.
 */
import mysql from 'mysql2/promise';

/** A pool of ten on DATABASE_URL, decimals and BIGINTs as strings, as the generated server reads them. */
export function poolFromEnv(options: mysql.PoolOptions = {}): mysql.Pool {
  const url = new URL(process.env.DATABASE_URL ?? '');
  return mysql.createPool({
    host: url.hostname,
    port: Number(url.port),
    user: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    database: url.pathname.slice(1),
    connectionLimit: 10,
    supportBigNumbers: true,
    bigNumberStrings: true,
    ...options,
  });
}

/** An incoming X-Request-Id kept, as runtime/request-log.ts keeps one. */
export const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** runtime/security-headers.ts's API headers. */
export const SECURITY_HEADERS = {
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
} as const;
