import type Koa from 'koa';
import { HttpError } from '../../errors.js';

/**
 * Whether a request comes from a page of another site, which the browser
 * filled with credentials of its own accord (Basic credentials it
 * remembers) or with the user's (a login form posted for them): told by
 * `Sec-Fetch-Site` (which no page can set), else by `Origin` against the
 * server's own origin as the request's scheme and Host give it. Origins
 * allowed by CORS_ORIGINS are trusted; a client that sends neither header
 * (curl, a server) is no browser and unaffected.
 */
export function isCrossSite(ctx: Koa.Context, allowedOrigins: ReadonlySet<string>): boolean {
  const origin = ctx.get('Origin');
  if (origin !== '' && allowedOrigins.has(origin)) return false;
  const site = ctx.get('Sec-Fetch-Site');
  // same-origin, same-site, none (typed by the user): the browser vouches for it.
  if (site !== '') return site === 'cross-site';
  if (origin === '') return false;
  return !sameOrigin(origin, ctx);
}

/** 403 for a request from another site's page (reason `cross_site`), before anything runs for it. */
export function refuseCrossSite(ctx: Koa.Context, allowedOrigins: ReadonlySet<string>): void {
  if (isCrossSite(ctx, allowedOrigins)) throw new HttpError(403, 'Cross-site request refused', {}, 'cross_site');
}

/** `Origin` against the request's own scheme and host (behind a proxy, as PROXY_HOPS lets it say), default ports elided. */
function sameOrigin(origin: string, ctx: Koa.Context): boolean {
  try {
    // `null` (a sandboxed page, a file) is no URL, and no origin of this server.
    return new URL(origin).origin === new URL(`${ctx.protocol}://${ctx.host}`).origin;
  } catch {
    return false;
  }
}
