import type Koa from 'koa';
import { HttpError } from '../../errors.js';
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
 * come in (any header that carries one, a token request).
 */
export function refuseInsecureCredentials(ctx: Koa.Context): void {
  if (!ctx.secure && !LOOPBACK.test(ctx.ip)) throw new HttpError(403, 'Credentials must be sent over HTTPS', {}, 'insecure_transport');
}

/**
 * The headers that carry a credential, each read by some door: `Authorization` (a password, a token, a key as
 * a Bearer credential) and `X-API-Key`. Every door reads credentials through `credentialsOf` and every rule
 * asks `carriesCredentials`, so that a credential in any of them meets the same rules, and a header added here
 * is screened wherever it is read.
 */
const CREDENTIAL_HEADERS = ['authorization', 'x-api-key'] as const;

/** What credentials a request presents, by the header they travel in. */
export interface PresentedCredentials {
  authorization: string | undefined;
  apiKey: string | undefined;
}

export function credentialsOf(ctx: Pick<Koa.Context, 'headers'>): PresentedCredentials {
  const apiKey = ctx.headers['x-api-key'];
  return { authorization: ctx.headers.authorization, apiKey: typeof apiKey === 'string' ? apiKey : apiKey?.join(', ') };
}

/** Whether a request carries a credential in any header that can carry one: what the rules below apply to. */
export function carriesCredentials(ctx: Pick<Koa.Context, 'headers'>): boolean {
  // Read once: on a Koa context each `ctx.headers` is a hop through its delegates, and this runs on every request.
  const headers = ctx.headers;
  for (const header of CREDENTIAL_HEADERS) if (headers[header] !== undefined) return true;
  return false;
}

/**
 * A request carrying a credential (`carriesCredentials`), before any route or console call runs: the transport
 * rule, and a write from another site's page refused (a browser resends Basic credentials it remembers with a
 * form posted from anywhere). Reads pass: the other site cannot see the answer.
 */
export function screenCredentials(ctx: Koa.Context, rules: CredentialRules): void {
  if (!carriesCredentials(ctx)) return;
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
