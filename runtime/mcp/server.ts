import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ErrorCode, ListToolsRequestSchema, type ListToolsResult, McpError } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type Koa from 'koa';
import { admits } from '../auth/reach.js';
import { XMLREST_VERSION } from '../version.js';
import { callTool, type McpRequest, type Responder, type ToolAnswer } from './call.js';
import type { McpTool } from './tools.js';
import { ExchangeTransport } from './transport.js';

export interface McpServerOptions {
  backend: string;
  tools: readonly McpTool[];
  basePath: string;
  /** Each tool's route, as mounted for REST, by `METHOD path` (with the base path). */
  routes: ReadonlyMap<string, Koa.Middleware>;
  respond: Responder;
}

/**
 * The server's JSON Schema validator: the SDK's `Server` makes an Ajv of its own unless handed one, which cost a
 * quarter of the CPU of a request when a server was made per request; this endpoint uses none (it elicits
 * nothing) and makes one server per backend, but one validator serves them all.
 */
let validator: AjvJsonSchemaValidator | undefined;

/** Most role sets whose tool lists are kept made (a list is a few KB to a few hundred per role set). */
const KEPT_LISTS = 256;

/**
 * A backend's MCP server (docs/internals/contract.md §16): the SDK's `Server`, made once when the routes are
 * mounted, on the one transport that every HTTP request's messages go through. It offers tools (and the SDK's
 * ping), nothing else. `tools/list` is the tools whose routes the caller may call now; `tools/call` runs a tool's
 * route, whoever the caller is, and the route's own guard refuses what it would refuse over REST.
 */
export function mcpServer({ backend, tools, basePath, routes, respond }: McpServerOptions): ExchangeTransport {
  validator ??= new AjvJsonSchemaValidator();
  const server = new Server(
    { name: `xmlrest-${backend}`, version: XMLREST_VERSION },
    { capabilities: { tools: { listChanged: false } }, jsonSchemaValidator: validator },
  );
  const transport = new ExchangeTransport();
  const byName = new Map(tools.map((tool) => [tool.tool.name, tool]));
  /** The tools a role set sees, by the set (never shared between two different ones). */
  const lists = new Map<string, ListToolsResult>();
  const requestOf = (id: string | number): McpRequest => {
    const exchange = transport.exchangeOf(id);
    if (exchange === undefined) throw new McpError(ErrorCode.ConnectionClosed, 'Connection closed');
    return exchange as McpRequest;
  };

  server.setRequestHandler(ListToolsRequestSchema, (_request, extra) => {
    const { principal } = requestOf(extra.requestId);
    // The role set as JSON: a role's name may hold any character (an outside issuer's claims say what it is), so that
    // no joined text of two roles ever equals one role's name (`admin,staff`: the roles admin and staff are another set).
    const key = principal === undefined ? '' : JSON.stringify([...principal.roles].sort());
    let list = lists.get(key);
    if (list === undefined) {
      list = { tools: tools.filter((tool) => admits(tool.access, principal)).map((tool) => tool.tool) };
      if (lists.size >= KEPT_LISTS) lists.clear();
      lists.set(key, list);
    }
    return list;
  });

  // tools/call, the endpoint's every call: the transport hands it to this handler directly (transport.ts), never to
  // the server. Its params are checked here rather than by the SDK's schemas (which checked a call, and our own
  // answer, three times over).
  const call = async (params: unknown, exchange: object): Promise<ToolAnswer> => {
    const { name, arguments: args } = (params ?? {}) as { name?: unknown; arguments?: unknown };
    if (typeof name !== 'string') throw new McpError(ErrorCode.InvalidParams, 'Invalid tools/call request: name is a string');
    if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args))) {
      throw new McpError(ErrorCode.InvalidParams, 'Invalid tools/call request: arguments is an object');
    }
    const tool = byName.get(name);
    // A name that is no tool of this backend is the request's fault (MCP's tools/call: Invalid params).
    if (tool === undefined) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
    const route = routes.get(`${tool.method} ${basePath}${tool.path}`)!;
    return callTool(exchange as McpRequest, tool, basePath, route, (args ?? {}) as Record<string, unknown>, respond);
  };
  transport.handleDirectly('tools/call', call);

  void server.connect(transport);
  return transport;
}
