import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

/**
 * An agent as the MCP specification's own client makes it (docs/internals/contract.md §16): the SDK's `Client` over
 * its `StreamableHTTPClientTransport`, at `{server}/<backend>/mcp`, its credentials (and any other header, such as
 * X-Request-Id) on every HTTP request it sends. Nothing here knows how the server answers: the tests compare what
 * this client is told with what REST says.
 */
export async function mcpClient(server: string, backend: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'xmlrest-tests', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server}/${backend}/mcp`), { requestInit: { headers } }));
  return client;
}

/** Every tool name `tools/list` gives, through every page it has, sorted. */
export async function toolNames(client: Client): Promise<string[]> {
  const names: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor });
    names.push(...page.tools.map((tool) => tool.name));
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return names.sort();
}

/**
 * The tools one caller is listed, the client closed after; or the HTTP status the endpoint refused the caller
 * with before any JSON-RPC (401, 403, 429: docs/internals/contract.md §16), as the SDK's transport reports it, at
 * its initialize or at its tools/list (credentials revoked between the two are refused at the second).
 */
export async function listedTo(server: string, backend: string, headers: Record<string, string>): Promise<string[] | { refused: number }> {
  let client: Client | undefined;
  try {
    client = await mcpClient(server, backend, headers);
    return await toolNames(client);
  } catch (error) {
    if (error instanceof StreamableHTTPError && typeof error.code === 'number') return { refused: error.code };
    throw error;
  } finally {
    await client?.close();
  }
}

/** What a tools/call answered, read back as the route's JSON: its structured answer, or its error body and isError. */
export interface ToolAnswer {
  isError: boolean;
  /** `structuredContent` on success; the parsed text content (the route's `{"message","status"}`) on a tool error. */
  body: unknown;
  /** The one text content, parsed: the same JSON as `structuredContent` on success. */
  text: unknown;
}

export async function callTool(client: Client, name: string, args: Record<string, unknown>): Promise<ToolAnswer> {
  const result = await client.callTool({ name, arguments: args });
  const content = result.content as { type: string; text?: string }[];
  const texts = content.filter((part) => part.type === 'text');
  if (texts.length !== 1) throw new Error(`${name} answered ${texts.length} text contents: ${JSON.stringify(result).slice(0, 500)}`);
  const text = JSON.parse(texts[0]!.text ?? 'null') as unknown;
  const isError = result.isError === true;
  return { isError, body: isError ? text : result.structuredContent, text };
}
