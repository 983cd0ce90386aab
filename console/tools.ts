// The MCP tools a user's agent sees on a backend (docs/internals/contract.md §16), for the console's Effective access:
// the tools the server's endpoint was made with, filtered by the very rule its tools/list applies, for the principal
// the user's own credentials would be. Never a second rule: a change to either shows here as it does to agents.
import { admits } from '../runtime/auth/reach.js';
import type { Principal } from '../runtime/auth/scheme.js';
import type { BackendModule } from '../runtime/index.js';
import { mcpPath } from '../runtime/mcp/paths.js';
import type { McpTool } from '../runtime/mcp/tools.js';
import type { UserRow } from './user-rows.js';

export interface UserTools {
  /** The endpoint, the served path with BASE_PATH (`/shop/mcp`). */
  endpoint: string;
  tools: { name: string; title?: string; readOnly: boolean; method: string; path: string }[];
}

/**
 * The tools `user` sees on `backend`; null when the backend has no MCP endpoint being served (off, not started yet,
 * or its doors could not be made). The principal is the one the default tables' AuthQuery gives for the user's password: their roles,
 * or none at all for a disabled user or one holding no role (the query finds no row: 401, and only the public tools,
 * as to a caller without credentials).
 */
export async function userTools(
  basePath: string,
  backend: BackendModule,
  serving: Promise<readonly McpTool[]> | undefined,
  user: UserRow,
): Promise<UserTools | null> {
  if (!backend.mcp || serving === undefined) return null;
  // Doors that could not be made serve no tool.
  const served = await serving.catch(() => undefined);
  if (served === undefined) return null;
  // A tenant backend's guard finds no caller in a user of no tenant (runtime/auth/reach.ts): public tools alone.
  // (Absent, the tenant is read otherwise than from usr, and is not known here.)
  const tenantless = backend.tenant !== undefined && user.tenant === null;
  const principal: Principal | undefined =
    user.disabled || user.roles.length === 0 || tenantless ? undefined : { userId: String(user.user_id), roles: user.roles };
  return {
    endpoint: mcpPath(basePath, backend.name),
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
