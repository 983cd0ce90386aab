import type Koa from 'koa';
import helmet from 'koa-helmet';

/**
 * The security headers an API's JSON answers need (OWASP's REST Security
 * Cheat Sheet): stored by no cache, browser's or shared (an answer holds a
 * user's rows or a token: RFC 6749 §5.1 asks no-store of every answer with a
 * token), no MIME sniffing, never framed, no content of any kind loaded on
 * their behalf. helmet's defaults are written for HTML pages; a JSON body
 * needs none of the rest, and every response carried them (about 600 bytes).
 * Set as one constant object: the values are known before the first request.
 * What may be cached says so itself (the API reference's assets, docs.ts).
 */
export const API_HEADERS: Readonly<Record<string, string>> = {
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
};

/**
 * HTTPS only, from now on: sent on answers that went over HTTPS (the
 * server's own TLS, or a trusted proxy's `X-Forwarded-Proto: https`), and
 * never over plain HTTP, where RFC 6797 §7.2 forbids it (a browser ignores it
 * there, and anyone on the path could have added or removed it).
 */
export const HSTS = { name: 'Strict-Transport-Security', value: 'max-age=31536000; includeSubDomains' } as const;

/**
 * Pages a browser renders (the console, the API reference): helmet's full
 * set, on top of the API's; each page then sets its own Content-Security-Policy.
 * HSTS is the front door's, on every answer alike.
 */
export const pageHeaders = helmet({ strictTransportSecurity: false }) as Koa.Middleware;
