import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type Koa from 'koa';
import { callerFound, toolContext } from './context.js';
import type { McpRequest } from './server.js';
import type { McpTool } from './tools.js';

/** Classifies and logs what a route threw, as the front door does for a lone request (errors.ts, errorResponder). */
export type Responder = (ctx: Koa.Context, error: unknown) => void;

/**
 * A tool call run through its route (docs/internals/contract.md §16): the route's middleware as mounted for REST
 * (its guard, parameters, steps, rate limits, audit, If-Match, Idempotency-Key), on a context of its own over the
 * MCP request's (its credentials, address and request id: context.ts), with the arguments as the query string of a GET or DELETE and as the parsed JSON body of a write, the
 * header-named ones as headers. A 2xx is the route's JSON answer as structured content and as text; anything else
 * a tool error whose text is the route's error body, classified and logged as the front door would (a 500 says no
 * more than a route's 500, and its details are logged as one's are).
 */
export async function callTool(
  { ctx, principal }: McpRequest,
  tool: McpTool,
  basePath: string,
  route: Koa.Middleware,
  args: Record<string, unknown>,
  respond: Responder,
): Promise<CallToolResult> {
  const fields: Record<string, unknown> = { ...args };
  const headers: Record<string, string> = {};
  for (const name of tool.headers) {
    const value = fields[name];
    delete fields[name];
    if (value !== undefined && value !== null) headers[name.toLowerCase()] = String(value);
  }
  const path = `${basePath}${tool.path}`;
  const write = tool.method !== 'GET' && tool.method !== 'DELETE';
  const querystring = write ? '' : queryOf(fields);
  const sub = toolContext(ctx, { method: tool.method, path, querystring, headers, body: write ? fields : undefined, principal });
  try {
    await route(sub, async () => {});
  } catch (error) {
    respond(sub, error);
  }
  callerFound(ctx, sub);
  const status = Number(sub.status);
  const text = typeof sub.body === 'string' ? sub.body : JSON.stringify(sub.body ?? null);
  if (status >= 200 && status < 300) {
    const answer: unknown = JSON.parse(text);
    const structured = typeof answer === 'object' && answer !== null && !Array.isArray(answer);
    return { content: [{ type: 'text', text }], ...(structured ? { structuredContent: answer as Record<string, unknown> } : {}) };
  }
  return { content: [{ type: 'text', text }], isError: true };
}

/**
 * The arguments of a read as its query string, each as a form would send it: a text as it is, a number or a
 * boolean as its text, a list as the key repeated (which a route refuses, as it would over REST); `null` leaves
 * the parameter out.
 */
function queryOf(fields: Record<string, unknown>): string {
  const query = new URLSearchParams();
  const add = (name: string, value: unknown) => {
    if (value === undefined || value === null) return;
    query.append(name, typeof value === 'object' ? JSON.stringify(value) : String(value));
  };
  for (const [name, value] of Object.entries(fields)) {
    if (Array.isArray(value)) for (const item of value) add(name, item);
    else add(name, value);
  }
  return query.toString();
}
