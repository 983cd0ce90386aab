import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import type Koa from 'koa';
import { isCrossSite } from '../auth/transport/cross-site.js';
import { HttpError } from '../errors.js';

/**
 * What the MCP specification asks of a server over HTTP before anything else (docs/internals/contract.md §16): a
 * request from another site's page is 403, whatever it carries (the browser rule of every door, cross-site.ts); and
 * a request reaching the server on a loopback address with a `Host` that is not a loopback name is 403 too: a
 * page of a site whose name was made to resolve to 127.0.0.1 (DNS rebinding) sends its own name there, which a
 * local agent never does. Behind proxies the server trusts (PROXY_HOPS), the host is the proxy's to say, and the
 * proxy connects over loopback: the second rule is left to it.
 */
export function refuseForeign(ctx: Koa.Context, allowedOrigins: ReadonlySet<string>): void {
  if (isCrossSite(ctx, allowedOrigins)) throw new HttpError(403, 'Cross-site request refused', {}, 'cross_site');
  if (ctx.app.proxy || !isLoopbackAddress(ctx.req.socket.localAddress)) return;
  if (!isLoopbackName(hostOf(ctx.req))) throw new HttpError(403, 'Host refused: this server answers loopback names only', {}, 'foreign_host');
}

function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return v4.startsWith('127.') || address === '::1';
}

/**
 * The name the request's `Host` (`:authority` over HTTP/2) gives, without its port or an IPv6 address's brackets:
 * read as it is rather than through Koa's `ctx.hostname`, which costs some µs of every call (a CPU profile of the
 * bench's tools/call) and is no proxy's here (refuseForeign asks this only with no proxy trusted).
 */
function hostOf(req: IncomingMessage): string {
  const host = (req.httpVersionMajor >= 2 ? req.headers[':authority'] : undefined) ?? req.headers.host ?? '';
  if (typeof host !== 'string') return '';
  if (host.startsWith('[')) return host.slice(1, host.indexOf(']'));
  return host.split(':', 1)[0]!;
}

/** `localhost` (and a name under it, RFC 6761), or a loopback address written as the host. */
function isLoopbackName(hostname: string): boolean {
  const name = hostname.toLowerCase();
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  return isIP(name) !== 0 && isLoopbackAddress(name);
}
