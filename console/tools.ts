// The MCP tools a user's agent sees on a backend (docs/internals/contract.md §16), for the console's Effective access:
// the tools the server's endpoint was made with, filtered by the very rule its tools/list applies, for the principal
// the user's own credentials would be. Never a second rule: a change to either shows here as it does to agents.
import type { Principal } from '../runtime/auth/scheme.js';
import type { BackendModule } from '../runtime/index.js';
import { admits } from '../runtime/mcp/server.js';
import type { McpTool } from '../runtime/mcp/tools.js';
import type { UserRow } from './user-rows.js';

export interface UserTools {
  /** The endpoint, the served path with BASE_PATH (`/shop/mcp`). */
  endpoint: string;
  tools: { name: string; title?: string; readOnly: boolean; method: string; path: string }[];
}

/**
 * The tools `user` sees on `backend`; null when the backend has no MCP endpoint being served (off, or the server not
 * started yet). The principal is the one the default tables' AuthQuery gives for the user's password: their roles,
 * or none at all for a disabled user or one holding no role (the query finds no row: 401, and only the public tools,
 * as to a caller without credentials).
 */
export function userTools(basePath: string, backend: BackendModule, served: readonly McpTool[] | undefined, user: UserRow): UserTools | null {
  if (!backend.mcp || served === undefined) return null;
  const principal: Principal | undefined = user.disabled || user.roles.length === 0 ? undefined : { userId: String(user.user_id), roles: user.roles };
  return {
    endpoint: `${basePath}/${backend.name}/mcp`,
    tools: served
      .filter((tool) => admits(tool.access, principal))
      .map(({ tool, method, path }) => ({
        name: tool.name,
        ...(tool.title === undefined ? {} : { title: tool.title }),
        readOnly: tool.annotations?.readOnlyHint === true,
        method,
        path: `${basePath}${path}`,
      })),
  };
}
