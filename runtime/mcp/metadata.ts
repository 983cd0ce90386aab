import type Koa from 'koa';
import type { BackendModule } from '../contract.js';
import { metadataPath } from './paths.js';

/**
 * The protected resource metadata of a Bearer backend's MCP endpoint that takes outside issuers' tokens (RFC 9728;
 * MCP's authorization for HTTP transports, docs/internals/contract.md §16): where it is served, its body, and the
 * 401's challenge pointing at it, so that an MCP client without a token learns from the 401 which authorization
 * servers issue the tokens this endpoint takes. At the RFC's place (paths.ts).
 */
export interface ResourceMetadata {
  path: string;
  serve: Koa.Middleware;
  challenge: (ctx: Koa.Context) => string;
}

/** Undefined for a backend that takes no outside issuer's tokens: it has no authorization server to name. */
export function resourceMetadata(backend: BackendModule, endpointPath: string): ResourceMetadata | undefined {
  const path = metadataPath(backend, endpointPath);
  if (path === undefined) return undefined;
  const servers = [...new Set(backend.issuers.map((issuer) => issuer.iss))];
  // The origin as the client reached it: the request's scheme and host, behind proxies as PROXY_HOPS lets them say.
  // Never `ctx.origin`: Koa 3's is the request's Origin header, which a page sends for its own site (or none: "null").
  const url = (ctx: Koa.Context, at: string) => `${ctx.protocol}://${ctx.host}${at}`;
  return {
    path,
    serve: (ctx) => {
      ctx.set('Content-Type', 'application/json');
      // Made from the request's Host: no shared cache keeps it for another host's clients.
      ctx.set('Cache-Control', 'private, max-age=3600');
      ctx.body = JSON.stringify({
        resource: url(ctx as unknown as Koa.Context, endpointPath),
        authorization_servers: servers,
        bearer_methods_supported: ['header'],
        resource_name: `${backend.name} (xmlrest MCP)`,
      });
    },
    challenge: (ctx) => `Bearer resource_metadata="${url(ctx, path)}"`,
  };
}
