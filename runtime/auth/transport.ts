import type Koa from 'koa';
import { HttpError } from '../errors.js';
import { refuseCrossSite } from './cross-site.js';

const LOOPBACK = /^(127\.|::1$|::ffff:127\.)/;

/** What every door that takes credentials checks before it reads them. */
export interface CredentialRules {
  /** Refuse credentials over plain HTTP from anywhere but loopback (REQUIRE_TLS_FOR_CREDENTIALS). */
  requireTls: boolean;
  /** Browser origins allowed by CORS: their pages may send credentials (CORS_ORIGINS). */
  allowedOrigins: ReadonlySet<string>;
}

/** Methods that change nothing: a page of another site may cause them with credentials and gains nothing. */
const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Credentials over plain HTTP from another host could be read on the way:
 * with REQUIRE_TLS_FOR_CREDENTIALS they are refused (403), wherever they
 * come in (an Authorization header, a token request).
 */
export function refuseInsecureCredentials(ctx: Koa.Context): void {
  if (!ctx.secure && !LOOPBACK.test(ctx.ip)) throw new HttpError(403, 'Credentials must be sent over HTTPS', {}, 'insecure_transport');
}

/**
 * A request with an Authorization header, before any route or console call
 * runs: the transport rule, and a write from another site's page refused
 * (a browser resends Basic credentials it remembers with a form posted from
 * anywhere). Reads pass: the other site cannot see the answer.
 */
export function screenAuthorization(ctx: Koa.Context, rules: CredentialRules): void {
  if (rules.requireTls) refuseInsecureCredentials(ctx);
  if (!SAFE.has(ctx.method)) refuseCrossSite(ctx, rules.allowedOrigins);
}

/**
 * A token request (shape A, or a plug-in's login such as shape B), before
 * the password is checked: the transport rule, and no login from another
 * site's page, which would spend the login limits of its visitors' addresses.
 */
export function screenLogin(ctx: Koa.Context, rules: CredentialRules): void {
  if (rules.requireTls) refuseInsecureCredentials(ctx);
  refuseCrossSite(ctx, rules.allowedOrigins);
}
