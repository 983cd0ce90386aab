// What `xmlrest explain` says of a route's MCP tool (docs/internals/contract.md §16): on a backend with mcp="on",
// the tool that is the route, whether it only reads, and the endpoint tools/list and tools/call are sent to. A tool
// is its route: tools/list lists it to exactly the callers the route admits, so the answer above it holds for it.
// Apart from the command, which only prints it.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { BackendModule } from '../../runtime/index.js';
import { toolsOf } from '../../runtime/mcp/tools.js';

export interface RouteTool {
  /** The backend's MCP endpoint, the served path without BASE_PATH (`/shop/mcp`). */
  endpoint: string;
  /** The tool's name, the route's `operationId`; null when the route is no tool (or not generated yet: `why`). */
  tool: string | null;
  /** Marked `readOnlyHint` (a GET): an agent's host may call it without asking. */
  readOnly: boolean;
  /** Why the route is no tool, when it is none. */
  why?: string;
}

/**
 * The route's tool, made as the server makes its tools (runtime/mcp/tools.ts `toolsOf`) from the OpenAPI document it
 * serves (the project's generated/openapi.json, or its build's); undefined on a backend without MCP.
 */
export function routeTool(backend: BackendModule, method: string, served: string, root = '.'): RouteTool | undefined {
  if (!backend.mcp) return undefined;
  const endpoint = `/${backend.name}/mcp`;
  const verb = method.toUpperCase();
  const wanted = served.replace(/\/+$/, '');
  const file = ['generated/openapi.json', 'dist/generated/openapi.json'].map((name) => path.join(root, name)).find((name) => existsSync(name));
  if (file === undefined)
    return { endpoint, tool: null, readOnly: verb === 'GET', why: 'there is no generated/openapi.json to make the tools from: run xmlrest generate' };
  const found = toolsOf(JSON.parse(readFileSync(file, 'utf8')) as object, backend).find((tool) => tool.method === verb && tool.path === wanted);
  if (found === undefined) {
    return {
      endpoint,
      tool: null,
      readOnly: verb === 'GET',
      why: "the route is no tool: it takes a secret (a password), which has no place in an agent's arguments",
    };
  }
  return { endpoint, tool: found.tool.name, readOnly: found.tool.annotations?.readOnlyHint === true };
}

/** The line the command prints under its answer. */
export function toolLine(user: string, tool: RouteTool): string {
  if (tool.tool === null) return `  MCP tool: none at POST ${tool.endpoint}, because ${tool.why}`;
  return `  MCP tool: ${tool.tool} (${tool.readOnly ? 'read-only' : 'not read-only'}) at POST ${tool.endpoint}; tools/list shows it to ${user} exactly when the route admits them`;
}
