import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type Koa from 'koa';
import type { Principal } from '../auth/scheme.js';
import { badRequest, HttpError } from '../errors.js';
import { callerFound, toolContext } from './context.js';
import type { McpTool } from './tools.js';

/** One HTTP request to the endpoint: its context, and who its credentials are on this backend (none: undefined). */
export interface McpRequest {
  ctx: Koa.Context;
  principal: Principal | undefined;
}

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
): Promise<ToolAnswer> {
  const path = `${basePath}${tool.path}`;
  const write = tool.method !== 'GET' && tool.method !== 'DELETE';
  const request = argumentsOf(tool, args, write);
  // Arguments no request could carry are refused on a context of the route's path, as the route would refuse them.
  const { fields, headers, querystring } = request instanceof HttpError ? NO_ARGUMENTS : request;
  const sub = toolContext(ctx, { method: tool.method, path, querystring, headers, body: write ? fields : undefined, principal });
  try {
    if (request instanceof HttpError) throw request;
    await route(sub, LAST);
  } catch (error) {
    respond(sub, error);
  }
  callerFound(ctx, sub);
  const status = Number(sub.status);
  const text = typeof sub.body === 'string' ? sub.body : JSON.stringify(sub.body ?? null);
  return new ToolAnswer(text, !(status >= 200 && status < 300));
}

/**
 * A tool call's result, kept as the route's answer text rather than as objects (docs/internals/contract.md §16):
 * the endpoint writes it into the JSON-RPC answer as it is, its text content the text escaped once and its
 * structured content the text itself, so that a call's answer is never parsed back and made JSON again (measured:
 * that round trip was some 8 µs of a call's CPU; docs/performance.md). The text is JSON the route made with
 * JSON.stringify (routes.ts, or the idempotency record of such), or an error body the front door made the same
 * way: an object's text begins with `{`, and only an object is structured content, as MCP asks.
 */
export class ToolAnswer {
  constructor(
    readonly text: string,
    readonly isError: boolean,
  ) {}

  /** The result's JSON, as the endpoint writes it in its answer. */
  json(): string {
    const content = `{"content":[{"type":"text","text":${JSON.stringify(this.text)}}]`;
    if (this.isError) return `${content},"isError":true}`;
    return this.text.charCodeAt(0) === OPENING_BRACE ? `${content},"structuredContent":${this.text}}` : `${content}}`;
  }

  /** The result as objects, should anything make it JSON whole (JSON.stringify calls this): the JSON `json()` writes. */
  toJSON(): CallToolResult {
    return JSON.parse(this.json()) as CallToolResult;
  }
}

const OPENING_BRACE = 0x7b;

/** What follows a route's middleware: nothing (it answers). */
const LAST = async () => {};

interface ToolArguments {
  /** A write's JSON body, or a read's query parameters. */
  fields: Record<string, unknown>;
  headers: Record<string, string>;
  querystring: string;
}

const NO_ARGUMENTS: ToolArguments = { fields: {}, headers: {}, querystring: '' };

/**
 * The arguments as the route's request: the header-named ones as headers, the rest a write's body or a read's
 * query string, each query parameter as a form sends it (a text as it is, a number or a boolean as its text, a
 * list as the key repeated, which a route refuses as it would over REST; `null` leaves it out). What no header
 * and no query string can carry (an object, a list within a list, however deep) is the route's own 400 in its
 * words (params.ts), never text made of it: an object's text would pass where a route takes text, and a deep one
 * overflows the stack that would write it.
 */
function argumentsOf(tool: McpTool, args: Record<string, unknown>, write: boolean): ToolArguments | HttpError {
  const fields: Record<string, unknown> = { ...args };
  const headers: Record<string, string> = {};
  for (const name of tool.headers) {
    const value = fields[name];
    delete fields[name];
    if (value === undefined || value === null) continue;
    if (!isScalar(value)) return notSingle(name);
    headers[name.toLowerCase()] = String(value);
  }
  if (write) return { fields, headers, querystring: '' };
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) {
    for (const item of Array.isArray(value) ? value : [value]) {
      if (item === undefined || item === null) continue;
      if (!isScalar(item)) return notSingle(name);
      query.append(name, String(item));
    }
  }
  return { fields, headers, querystring: query.toString() };
}

function isScalar(value: unknown): value is string | number | boolean {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
}

/** The route's own words for what is not one value (runtime/params.ts). */
const notSingle = (name: string) => badRequest(`Parameter '${name}' must be a single string, number, boolean or null`);
