import type Koa from 'koa';
import type { Guard } from '../auth/guard.js';
import type { CredentialRules } from '../auth/transport/transport.js';
import type { BackendModule } from '../contract.js';
import type { Responder } from './call.js';
import { mcpEndpoint } from './endpoint.js';
import { resourceMetadata } from './metadata.js';
import { mcpPath } from './paths.js';
import { mcpServer } from './server.js';
import { type McpTool, toolsOf } from './tools.js';

export interface McpDoorOptions {
  backend: BackendModule;
  guard: Guard;
  basePath: string;
  /** The generated OpenAPI document: the tools are its operations. */
  openapi: object;
  /** The backend's resource routes as mounted for REST, by `METHOD path` (with the base path). */
  routes: ReadonlyMap<string, Koa.Middleware>;
  credentials: CredentialRules;
  respond: Responder;
}

/** A backend's MCP doors: the endpoint, and where its protected resource metadata is when it has any. */
export interface McpDoors {
  path: string;
  /** The tools the endpoint serves, as made (the console shows a user's from these: console/tools.ts). */
  tools: readonly McpTool[];
  endpoint: Koa.Middleware;
  metadata: { path: string; serve: Koa.Middleware } | undefined;
}

/**
 * The MCP endpoint of a backend with `mcp="on"` (docs/internals/contract.md §16), made once when its routes are
 * mounted: its tools from the OpenAPI document, its server on its one transport, and the endpoint's HTTP rules.
 */
export function mcpDoors({ backend, guard, basePath, openapi, routes, credentials, respond }: McpDoorOptions): McpDoors {
  const path = mcpPath(basePath, backend.name);
  const tools = toolsOf(openapi, backend);
  const transport = mcpServer({ backend: backend.name, tools, basePath, routes, respond });
  const metadata = resourceMetadata(backend, path);
  const endpoint = mcpEndpoint({ backend, guard, transport, allowedOrigins: credentials.allowedOrigins, challenge: metadata?.challenge });
  return { path, tools, endpoint, metadata };
}
