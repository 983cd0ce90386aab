// What `xmlrest explain` says of a route's MCP tool (docs/internals/contract.md §16): on a backend with mcp="on",
// the tool that is the route, whether it only reads, and the endpoint tools/list and tools/call are sent to. A tool
// is its route: tools/list lists it to exactly the callers the route admits, so the answer above it holds for it.
// Apart from the command, which only prints it.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { BackendModule } from '../../runtime/index.js';

export interface RouteTool {
  /** The backend's MCP endpoint, the served path without BASE_PATH (`POST /shop/mcp`). */
  endpoint: string;
  /** The tool's name, the route's `operationId`; null when the OpenAPI document names none (not generated yet). */
  tool: string | null;
  /** Marked `readOnlyHint` (a GET): an agent may call it without asking. */
  readOnly: boolean;
}

/**
 * The route's tool, from the OpenAPI document the server makes its tools from (the project's
 * generated/openapi.json, or its build's); undefined on a backend without MCP.
 */
export function routeTool(backend: BackendModule, method: string, served: string, root = '.'): RouteTool | undefined {
  if (!backend.mcp) return undefined;
  const verb = method.toUpperCase();
  const wanted = served.replace(/\/+$/, '');
  const file = ['generated/openapi.json', 'dist/generated/openapi.json'].map((name) => path.join(root, name)).find((name) => existsSync(name));
  let tool: string | null = null;
  if (file !== undefined) {
    const document = JSON.parse(readFileSync(file, 'utf8')) as { paths?: Record<string, Record<string, { operationId?: unknown }>> };
    const id = document.paths?.[wanted]?.[verb.toLowerCase()]?.operationId;
    tool = typeof id === 'string' ? id : null;
  }
  return { endpoint: `/${backend.name}/mcp`, tool, readOnly: verb === 'GET' };
}

/** The line the command prints under its answer. */
export function toolLine(user: string, tool: RouteTool): string {
  const name = tool.tool ?? '(unnamed: generated/openapi.json has no operation for it; run xmlrest generate)';
  return `  MCP tool: ${name} (${tool.readOnly ? 'read-only' : 'not read-only'}) at POST ${tool.endpoint}; tools/list shows it to ${user} exactly when the route admits them`;
}
