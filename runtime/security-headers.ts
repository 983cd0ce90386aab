import type Koa from 'koa';
import helmet from 'koa-helmet';

/**
 * The security headers an API's JSON answers need (OWASP's REST Security
 * Cheat Sheet): no MIME sniffing, never framed, no content of any kind
 * loaded on their behalf, HTTPS only once seen over HTTPS. helmet's defaults
 * are written for HTML pages; a JSON body needs none of the rest, and every
 * response carried them (about 600 bytes). Set as one constant object: the
 * values are known before the first request.
 */
export const API_HEADERS: Readonly<Record<string, string>> = {
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
  'Strict-Transport-Security': 'max-age=31536000; includeSubDomains',
};

/**
 * Pages a browser renders (the console, the API reference): helmet's full
 * set, on top of the API's; each page then sets its own Content-Security-Policy.
 */
export const pageHeaders = helmet() as Koa.Middleware;
