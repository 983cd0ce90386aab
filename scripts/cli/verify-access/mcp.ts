// A backend's MCP endpoint proved against access.lock (docs/internals/contract.md §16): tools/list, called as each
// caller with the SDK's own client, lists exactly the tools of the lock's routes that caller may call. A tool is its
// route, so the lock has no line of its own for it; apart from the REST calls, which call.ts proves.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { Backend } from '../../../generator/ir.js';
import type { BackendModule } from '../../../runtime/index.js';
import { toolsOf as serverTools } from '../../../runtime/mcp/tools.js';
import { XMLREST_VERSION } from '../../../runtime/version.js';
import { type Caller, type Check, REQUEST_TIMEOUT_MS } from './call.js';
import type { LockLine } from './lock.js';

/** The fetch the client sends with: the run's, which counts each request and stops with the run. */
export type McpFetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** What tools/list answered one caller: the names of every page, or the HTTP status and text it was refused with. */
type Listed = { names: Set<string> } | { status: number | null; message: string };

/**
 * The checks of one backend's tools/list: for each caller (the one with no credentials first), one check per tool
 * of the lock's routes (`expected` admitted: the lock admits the caller, so the tool is to be listed; `got`
 * admitted: it was), one per tool listed that is no route of the lock, or one error when tools/list itself failed.
 * `tools` gives each route's tool by `METHOD path`, as the server names it from the OpenAPI document.
 */
export async function toolChecks(
  backend: Backend,
  lines: readonly LockLine[],
  tools: ReadonlyMap<string, string>,
  callers: readonly Caller[],
  base: string,
  fetch: McpFetch,
  signal?: AbortSignal,
): Promise<Check[]> {
  const endpoint = `/${backend.name}/mcp`;
  const routes = lines.flatMap((line) => {
    const tool = tools.get(`${line.method} ${line.path}`);
    return tool === undefined ? [] : [{ line, tool }];
  });
  const checks: Check[] = [];
  const anonymous: Caller = { role: '(anonymous)', credentials: 'none', headers: {} };
  // Without credentials a Bearer backend with Issuers answers 401 and its challenge, as the MCP authorization rules
  // have it: it lists no tool at all, which is a refusal, not an error; any other backend lists its public tools.
  const challenges = backend.authScheme === 'Bearer' && backend.issuers.length > 0;
  for (const caller of [anonymous, ...callers]) {
    const credentials = caller.credentials === 'none' ? 'MCP, no credentials' : `MCP, ${caller.credentials}`;
    const check = (
      line: { method: string; path: string },
      tool: string,
      expected: Check['expected'],
      got: Check['got'],
      status: number | null,
      note?: string,
    ) =>
      checks.push({
        backend: backend.name,
        method: line.method,
        path: line.path,
        role: caller.role,
        credentials,
        expected,
        got,
        status,
        tool,
        ...(note === undefined ? {} : { note }),
      });
    const listed = await listTools(base + endpoint, caller.headers, fetch, signal);
    if (!('names' in listed)) {
      const challenged = challenges && caller.credentials === 'none';
      const got = challenged && listed.status === 401 ? 'refused' : 'error';
      check({ method: 'POST', path: endpoint }, 'tools/list', challenged ? 'refused' : 'admitted', got, listed.status, listed.message);
      continue;
    }
    for (const { line, tool } of routes) {
      const admitted = line.rule === 'public' || (caller.credentials !== 'none' && (line.rule === '*' || line.rule.includes(caller.role)));
      check(line, tool, admitted ? 'admitted' : 'refused', listed.names.has(tool) ? 'admitted' : 'refused', 200);
    }
    const known = new Set(routes.map((route) => route.tool));
    for (const name of [...listed.names].filter((name) => !known.has(name)).sort()) {
      check({ method: 'POST', path: endpoint }, name, 'refused', 'admitted', 200, 'listed, but it is the tool of no route of access.lock');
    }
  }
  return checks;
}

/** One validator for every client of a run: the SDK's `Client` makes an Ajv of its own unless handed one. */
let validator: AjvJsonSchemaValidator | undefined;

/** tools/list at `url` with these headers, every page of it, through the SDK's client over Streamable HTTP. */
async function listTools(url: string, headers: Record<string, string>, fetch: McpFetch, signal?: AbortSignal): Promise<Listed> {
  validator ??= new AjvJsonSchemaValidator();
  const client = new Client({ name: 'xmlrest verify-access', version: XMLREST_VERSION }, { jsonSchemaValidator: validator });
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers }, fetch });
  try {
    await client.connect(transport, { timeout: REQUEST_TIMEOUT_MS });
    const names = new Set<string>();
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout: REQUEST_TIMEOUT_MS });
      for (const tool of page.tools) names.add(tool.name);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return { names };
  } catch (error) {
    // The run's own stop (SIGINT) and a server gone away end the run, as a REST call's would.
    signal?.throwIfAborted();
    if (error instanceof TypeError && error.message === 'fetch failed') throw error;
    const status = error instanceof StreamableHTTPError && error.code !== undefined && error.code > 0 ? error.code : null;
    return { status, message: messageOf(error) };
  } finally {
    await client.close().catch(() => {});
  }
}

/** What a failure says, without the SDK's prefix, and the JSON error body's message when the server sent one. */
function messageOf(error: unknown): string {
  const text = (error as Error).message ?? String(error);
  const body = /\{.*\}/s.exec(text)?.[0];
  if (body !== undefined) {
    try {
      const parsed = JSON.parse(body) as { message?: unknown };
      if (typeof parsed.message === 'string') return parsed.message;
    } catch {
      // Not the error body: the text says it.
    }
  }
  return text;
}

/**
 * Each route's tool of a backend, by `METHOD path`, made from the server's own OpenAPI document as the server makes
 * its tools (runtime/mcp/tools.ts `toolsOf`: a route that takes a password is none); compareWithServer has proved
 * that document's operations and parameters are the resources'. The resources are the generator's, given the
 * module's shape that function reads (each method's access and status).
 */
export function toolsOf(document: object, backend: Backend): Map<string, string> {
  const module = {
    ...backend,
    resources: backend.resources.map((resource) => ({
      ...resource,
      operations: Object.fromEntries(resource.operations.map((operation) => [operation.method, operation])),
    })),
  } as unknown as BackendModule;
  return new Map(serverTools(document, module).map((tool) => [`${tool.method} ${tool.path}`, tool.tool.name]));
}
