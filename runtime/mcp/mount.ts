import type Koa from 'koa';
import type { Logger } from '../log.js';
import type { McpDoorOptions, McpDoors } from './index.js';
import { mcpPath, metadataPath } from './paths.js';
import type { McpTool } from './tools.js';

/** A door routes.ts mounts: its method, its path and its middleware. */
export interface McpMount {
  method: 'POST' | 'GET';
  path: string;
  handle: Koa.Middleware;
}

let loaded: Promise<typeof import('./index.js')> | undefined;

/**
 * A backend's MCP doors (docs/internals/contract.md §16), mounted at start and made as soon as runtime/mcp/index.ts
 * (and with it the SDK, some 150 ms to load) is loaded, which only a project with MCP on a backend does. A failure
 * to make them is logged at once, and every request to them is its 500. The tools the doors are made with are
 * answered beside them.
 */
export function mcpMounts(options: McpDoorOptions, logger: Logger | undefined): { mounts: McpMount[]; tools: Promise<readonly McpTool[]> } {
  const doors: Promise<McpDoors> = (loaded ??= import('./index.js')).then((module) => module.mcpDoors(options));
  doors.catch((error: unknown) => logger?.error({ backend: options.backend.name, error: String(error) }, 'MCP endpoint not made'));
  const path = mcpPath(options.basePath, options.backend.name);
  // Once made, the endpoint is called as it is: an await of the made doors on every request was one more tick.
  let endpoint: Koa.Middleware | undefined;
  doors.then((made) => (endpoint = made.endpoint)).catch(() => {});
  const mounts: McpMount[] = [
    { method: 'POST', path, handle: (ctx, next) => (endpoint !== undefined ? endpoint(ctx, next) : doors.then((made) => made.endpoint(ctx, next))) },
  ];
  const metadata = metadataPath(options.backend, path);
  if (metadata !== undefined) mounts.push({ method: 'GET', path: metadata, handle: async (ctx, next) => (await doors).metadata!.serve(ctx, next) });
  // The tools the endpoint is made with, for the console (console/tools.ts); a failure to make them is logged above.
  const tools = doors.then((made) => made.tools);
  tools.catch(() => {});
  return { mounts, tools };
}
