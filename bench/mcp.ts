import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { MCP_BEARER_SCENARIO, MCP_CALL_SCENARIO, MCP_LIST_SCENARIO, type ServerName } from './report.js';

/**
 * Issue 45's Speed in the bench (docs/internals/contract.md §16): a tools/call of a one-row GET against the same GET
 * over REST, on the same generated server in the same slices (bench/resources/mcp: public, and the caller's own row
 * with a Bearer token); and tools/list for a member of a backend of 100 routes (bench/resources/tools, written here
 * before each generation), its latency on one connection.
 */

/** The backend of 100 routes, written before each generation (git-ignored): its resources are made, not kept. */
export const TOOLS_DIR = 'bench/resources/tools';
export const TOOL_ROUTES = 100;
/** Every tenth resource is for admins: a member is listed the GET and the POST of the other 90. */
export const TOOLS_SEEN = 180;

/**
 * The 100 resources, each a GET and a POST of a member's items: every other GET a list in pages (it takes `limit`
 * and `after`), the others a filter by price, so that the tools' input and output schemas are of both kinds.
 */
function toolResource(i: number): string {
  const get =
    i % 2 === 0
      ? `<Sql id="items">select item_id, title, price, created_on from bench_items where user_id = $uid</Sql>
    <Page key="item_id" size="20" max="100"/>`
      : '<Sql id="items">select item_id, title, price from bench_items where user_id = $uid and price &lt;= $max_price order by item_id limit 10</Sql>';
  return `<?xml version="1.0" encoding="UTF-8"?>
<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0" auth="${i % 10 === 9 ? 'admin' : 'member'}">
  <Desc>Synthetic resource ${i}: the caller's items, and one added.</Desc>
  <Request method="GET">
    ${get}
  </Request>
  <Request method="POST" status="201">
    <Sql id="added">insert into bench_items (user_id, title, price) values ($uid, $title, $price)</Sql>
    <Sql id="item">select item_id, title, price from bench_items where item_id = $[added][0].insertId</Sql>
  </Request>
</Resource>
`;
}

export function writeToolResources(): void {
  rmSync(TOOLS_DIR, { recursive: true, force: true });
  mkdirSync(TOOLS_DIR, { recursive: true });
  writeFileSync(
    path.join(TOOLS_DIR, 'backend.xml'),
    `<?xml version="1.0" encoding="UTF-8"?>
<!-- Written by bench/mcp.ts before each generation: a backend of ${TOOL_ROUTES} routes with MCP on. -->
<Backend xmlns="urn:xmlrest:resource:1.0" auth_scheme="Bearer" mcp="on"/>
`,
  );
  for (let i = 0; i < TOOL_ROUTES; i++) writeFileSync(path.join(TOOLS_DIR, `r${String(i).padStart(3, '0')}.xml`), toolResource(i));
}

/** bench-1's tokens from the two MCP backends (token shape A), filled in once the servers answer. */
const state = { token: '', toolsToken: '' };

export async function prepareMcp(token: (path: string) => Promise<string>): Promise<void> {
  state.token = await token('/mcp/');
  state.toolsToken = await token('/tools/');
}

/** A POST of one JSON-RPC request, as an MCP client sends it over Streamable HTTP (no session: the endpoint keeps none). */
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };
const rpc = (method: string, params?: object) => JSON.stringify({ jsonrpc: '2.0', id: 1, method, ...(params ? { params } : {}) });
const CALL_PUBLIC = rpc('tools/call', { name: 'mcp_catalog_v1_0_get', arguments: { id: 42 } });
const CALL_BEARER = rpc('tools/call', { name: 'mcp_myItem_v1_0_get', arguments: {} });
const LIST = rpc('tools/list');

/** The servers' names of these scenarios, each the generated server. */
export const MCP_SERVERS = ['rest-get', 'mcp-get', 'rest-bearer', 'mcp-bearer', 'tools-list'] as const satisfies readonly ServerName[];

/** The one row of a GET, over REST or as a tool's structured content, which is the route's JSON answer. */
const row = (status: number, body: any, server: ServerName) => {
  const answer = server.startsWith('mcp') ? (status === 200 && body?.result?.isError !== true ? body.result?.structuredContent : undefined) : body;
  const rows = server.endsWith('bearer') ? answer?.item : answer?.catalog;
  return status === 200 && Array.isArray(rows) && rows.length === 1 && (server.endsWith('bearer') || rows[0].item_id === 42);
};

/** The tools/list request the latency of MCP_LIST_SCENARIO is measured with (bench/latency.mjs). */
export const toolsListRequest = () => ({
  method: 'POST' as const,
  path: '/tools/mcp',
  headers: { ...MCP_HEADERS, authorization: `Bearer ${state.toolsToken}` },
  body: LIST,
});

/** The one-row GET over REST, or as a tools/call of the MCP endpoint; a Bearer token on the Bearer pair's. */
function oneRow(server: ServerName) {
  const bearer: Record<string, string> = server.endsWith('bearer') ? { authorization: `Bearer ${state.token}` } : {};
  if (server.startsWith('rest'))
    return { method: 'GET' as const, path: server === 'rest-get' ? '/mcp/v1.0/catalog?id=42' : '/mcp/v1.0/my-item', headers: bearer };
  return { method: 'POST' as const, path: '/mcp/mcp', headers: { ...MCP_HEADERS, ...bearer }, body: server === 'mcp-get' ? CALL_PUBLIC : CALL_BEARER };
}

export const mcpScenarios = [
  // The same one-row GET, the same server and slices: over REST first, then as a tools/call of the MCP endpoint.
  { name: MCP_CALL_SCENARIO, servers: ['rest-get', 'mcp-get'] as ServerName[], cpu: true, request: oneRow, check: row },
  { name: MCP_BEARER_SCENARIO, servers: ['rest-bearer', 'mcp-bearer'] as ServerName[], cpu: true, request: oneRow, check: row },
  {
    // One connection, one tools/list after another: its req/s are the inverse of its latency.
    name: MCP_LIST_SCENARIO,
    servers: ['tools-list'] as ServerName[],
    connections: () => 1,
    request: toolsListRequest,
    check: (status: number, body: any) => status === 200 && body?.result?.tools?.length === TOOLS_SEEN,
  },
];
