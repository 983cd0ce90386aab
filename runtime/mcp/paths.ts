import type { BackendModule } from '../contract.js';

/**
 * Where a backend's MCP doors are (docs/internals/contract.md §16), known without loading the SDK: routes.ts mounts
 * them at start and loads runtime/mcp/ itself only when some backend has MCP on.
 */
export function mcpPath(basePath: string, backend: string): string {
  return `${basePath}/${backend}/mcp`;
}

/**
 * Where the endpoint's protected resource metadata is (RFC 9728: the well-known name put between the host and the
 * endpoint's path), on a Bearer backend that takes outside issuers' tokens; undefined on any other, which has no
 * authorization server to name.
 */
export function metadataPath(backend: BackendModule, endpointPath: string): string | undefined {
  if (backend.authScheme !== 'Bearer' || backend.issuers.length === 0) return undefined;
  return `/.well-known/oauth-protected-resource${endpointPath}`;
}
