import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type CallToolResult, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PrivateMariadb, startPrivateMariadb } from '../../scripts/mariadb.js';
import { createDemoDatabase } from '../../scripts/schema.js';
import { type BuiltServer, startBuiltServer } from '../support/built-server.js';
import { basicHeader, formBody, type RawResponse, send } from '../support/http.js';

/**
 * A backend's MCP endpoint (docs/internals/contract.md §16, issue 45) over HTTP against the built server, with the
 * SDK's own client: the tools a caller lists are the routes its roles admit, a call runs the route (its guard, its
 * parameters' 400, its paging, its writes), refusals are the route's words, and the HTTP rules of the transport
 * hold. The file has a MariaDB of its own, which one test stops (SIGSTOP) under the server.
 */
const QUERY_TIMEOUT_MS = 2000;
let db: PrivateMariadb;
let server: BuiltServer;
const tokens: Record<string, string> = {};
const clients: Client[] = [];

beforeAll(async () => {
  db = await startPrivateMariadb({ dir: 'test/.tmp/mcp-db', fresh: true, database: 'mcp' });
  await createDemoDatabase(db.url);
  server = await startBuiltServer({ env: { DATABASE_URL: db.url, QUERY_TIMEOUT_MS: String(QUERY_TIMEOUT_MS), DB_ACQUIRE_TIMEOUT_MS: '500' } });
  for (const user of ['alice', 'bob']) {
    const response = await send(`${server.url}/shop/v1.0/token`, { method: 'POST', ...formBody({ user, pass: `${user}-pass` }) });
    tokens[user] = `Bearer ${(response.json() as { token: string }).token}`;
  }
}, 120_000);

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
  await server?.stop();
  await db?.kill('SIGCONT').catch(() => undefined);
  await db?.stop();
});

/** The SDK's client, connected (initialize, then initialized) to a backend's endpoint with these credentials. */
async function connect(authorization?: string, backend = 'shop'): Promise<Client> {
  const client = new Client({ name: 'mcp-test', version: '1.0.0' });
  const headers: Record<string, string> = authorization === undefined ? {} : { Authorization: authorization };
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/${backend}/mcp`), { requestInit: { headers } }));
  clients.push(client);
  return client;
}

/** One JSON-RPC message posted as an agent would, answered as it is. */
function post(message: unknown, headers: Record<string, string> = {}, backend = 'shop'): Promise<RawResponse> {
  return send(`${server.url}/${backend}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(message),
  });
}

const textOf = (result: CallToolResult) => JSON.parse((result.content[0] as { text: string }).text) as Record<string, unknown>;

/** The shop's resource operations `?for=me` lists for these credentials, as tool names (a token request is no tool). */
async function operationsFor(authorization?: string): Promise<string[]> {
  const response = await send(`${server.url}/openapi.json?for=me`, { headers: authorization === undefined ? {} : { authorization } });
  const paths = (response.json() as { paths: Record<string, Record<string, { operationId: string }>> }).paths;
  return Object.entries(paths)
    .filter(([path]) => /^\/shop\/v[0-9.]+\//.test(path))
    .flatMap(([, item]) => Object.values(item).map((operation) => operation.operationId))
    .filter((name) => name !== 'shop_token_v1_0_post')
    .sort();
}

describe('the MCP endpoint', () => {
  it('initializes statelessly: the server names itself, offers tools and keeps no session', async () => {
    const client = await connect(tokens.alice);
    expect(client.getServerVersion()?.name).toBe('xmlrest-shop');
    expect(client.getServerCapabilities()).toEqual({ tools: { listChanged: false } });
    const response = await post({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    expect(response.status).toBe(200);
    expect(response.headers['mcp-session-id']).toBeUndefined();
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.json()).toMatchObject({ jsonrpc: '2.0', id: 1, result: { protocolVersion: '2025-11-25' } });
  });

  it('lists exactly the tools whose routes the caller may call, as ?for=me does: an admin more than a customer, nobody the public ones', async () => {
    const listed = async (authorization?: string) => ((await (await connect(authorization)).listTools()).tools.map((tool) => tool.name) as string[]).sort();
    const [alice, bob, nobody] = [await listed(tokens.alice), await listed(tokens.bob), await listed()];
    expect(alice).toEqual(await operationsFor(tokens.alice));
    expect(bob).toEqual(await operationsFor(tokens.bob));
    expect(nobody).toEqual(await operationsFor());
    expect(bob).toContain('shop_report_v1_0_get');
    expect(alice).not.toContain('shop_report_v1_0_get');
    expect(alice).toContain('shop_order_v1_0_get');
    expect(nobody).toEqual(['shop_products_v1_0_get', 'shop_products_v2_0_get', 'shop_products_v3_0_get', 'shop_reviews_v1_0_get']);
  });

  it("calls a write and a one-row read through their routes, answering the route's JSON as structured content and text", async () => {
    const alice = await connect(tokens.alice);
    const placed = (await alice.callTool({ name: 'shop_orders_v1_0_post', arguments: { product_id: 1, quantity: 2 } })) as CallToolResult;
    expect(placed.isError).toBeFalsy();
    const order = (placed.structuredContent as { placed: { order_id: number; quantity: number }[] }).placed[0]!;
    expect(order.quantity).toBe(2);
    expect(textOf(placed)).toEqual(placed.structuredContent);
    const read = (await alice.callTool({ name: 'shop_order_v1_0_get', arguments: { order_id: order.order_id } })) as CallToolResult;
    expect(read.isError).toBeFalsy();
    expect(read.structuredContent).toMatchObject({ order: [{ order_id: order.order_id, product_id: 1, quantity: 2 }] });
  });

  it('pages a list as a client does: limit, then after with the next the page before gave', async () => {
    const client = await connect();
    const first = (await client.callTool({ name: 'shop_products_v3_0_get', arguments: { limit: 2, sort: 'name' } })) as CallToolResult;
    const page = first.structuredContent as { products: { product_id: number }[]; next: string | null };
    expect(page.products).toHaveLength(2);
    expect(typeof page.next).toBe('string');
    const second = (await client.callTool({ name: 'shop_products_v3_0_get', arguments: { limit: 2, sort: 'name', after: page.next } })) as CallToolResult;
    const rows = (second.structuredContent as { products: { product_id: number }[] }).products;
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.map((row) => row.product_id)).not.toContain(page.products[0]!.product_id);
  });

  it("answers a parameter's 400 as a tool error in the route's words", async () => {
    const alice = await connect(tokens.alice);
    const result = (await alice.callTool({ name: 'shop_order_v1_0_get', arguments: { order_id: 'first' } })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    const body = textOf(result);
    expect(body.status).toBe(400);
    expect(body.message).toMatch(/order_id/);
  });

  it("refuses a tool the caller does not see by the route's own guard, and one without credentials, as tool errors", async () => {
    const alice = await connect(tokens.alice);
    const report = (await alice.callTool({ name: 'shop_report_v1_0_get', arguments: {} })) as CallToolResult;
    expect(report.isError).toBe(true);
    expect(textOf(report)).toEqual({ message: 'Forbidden access to resource', status: 403 });
    const nobody = await connect();
    const order = (await nobody.callTool({ name: 'shop_order_v1_0_get', arguments: { order_id: 1 } })) as CallToolResult;
    expect(order.isError).toBe(true);
    expect(textOf(order).status).toBe(403);
  });

  it('answers a name that is no tool of the backend with the JSON-RPC error -32602', async () => {
    const client = await connect(tokens.bob);
    const refusal = await client.callTool({ name: 'crm_contacts_v1_0_get', arguments: {} }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(McpError);
    expect((refusal as McpError).code).toBe(ErrorCode.InvalidParams);
  });

  it('refuses credentials the backend refuses as a route does, over HTTP before any JSON-RPC: 401 with its challenge', async () => {
    const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    const wrong = await post(list, { authorization: basicHeader('carol', 'not-her-pass') }, 'staff');
    expect(wrong.status).toBe(401);
    expect(wrong.headers['www-authenticate']).toMatch(/^Basic /);
    expect(wrong.json()).toEqual({ message: expect.any(String), status: 401 });
    const forged = await post(list, { authorization: 'Bearer not.a.token' });
    expect(forged.status).toBe(401);
  });

  it('answers GET and DELETE on the endpoint 405 with Allow, and what is not JSON as the SDK transport does', async () => {
    for (const method of ['GET', 'DELETE']) {
      const response = await send(`${server.url}/shop/mcp`, { method, headers: { accept: 'text/event-stream' } });
      expect(response.status).toBe(405);
      expect(response.headers.allow).toMatch(/^POST\b/);
    }
    const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    expect((await post(list, { 'content-type': 'text/plain' })).status).toBe(415);
    expect((await post(list, { accept: 'text/event-stream' })).status).toBe(406);
    const unparsable = await send(`${server.url}/shop/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: '{"jsonrpc":',
    });
    expect(unparsable.status).toBe(400);
    expect(unparsable.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
    expect((await post(list, { 'mcp-protocol-version': '1999-01-01' })).status).toBe(400);
    expect((await post({ jsonrpc: '2.0', method: 'notifications/initialized' })).status).toBe(202);
  });

  it("refuses a request from another site's page, and a foreign Host on loopback (DNS rebinding), with 403", async () => {
    const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    const foreign = await post(list, { origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    const rebound = await post(list, { host: 'evil.example' });
    expect(rebound.status).toBe(403);
    const own = await post(list, { origin: new URL(server.url).origin });
    expect(own.status).toBe(200);
  });

  it('answers hostile messages with a 4xx or a JSON-RPC error, never a 500, and still answers after', async () => {
    const call = (params: unknown) => ({ jsonrpc: '2.0', id: 7, method: 'tools/call', params });
    const hostile: unknown[] = [
      [],
      [1],
      {},
      'null',
      { jsonrpc: '1.0', id: 1, method: 'ping' },
      { jsonrpc: '2.0', id: {}, method: 'ping' },
      { jsonrpc: '2.0', id: 1, method: 7 },
      { jsonrpc: '2.0', id: 1, method: 'resources/list' },
      call({ name: 5 }),
      call({ name: 'shop_order_v1_0_get', arguments: [1] }),
      call({ name: 'shop_order_v1_0_get', arguments: { order_id: { nested: [1, { deeper: null }] } } }),
      call({ name: 'shop_order_v1_0_get', arguments: JSON.parse('{"__proto__": {"admin": true}, "order_id": 1}') }),
      call({ name: 'shop_orders_v1_0_post', arguments: { product_id: 'x'.repeat(100_000), quantity: -1 } }),
      call({ name: 'shop_order_v1_0_put', arguments: { 'If-Match': '"1"', order_id: 1, quantity: 1, 'Idempotency-Key': 7 } }),
    ];
    for (const message of hostile) {
      const response = await post(message, { authorization: tokens.alice! });
      expect(response.status, JSON.stringify(message).slice(0, 80)).toBeLessThan(500);
      if (response.status === 200) {
        const answer = response.json() as { error?: { code: number }; result?: { isError?: boolean; content: { text: string }[] } };
        if (answer.result?.isError === true) expect(JSON.parse(answer.result.content[0]!.text).status).toBeLessThan(500);
        else if (answer.error !== undefined) expect(answer.error.code).toBeLessThan(-32000);
      }
    }
    const large = await send(`${server.url}/shop/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { _meta: { pad: 'x'.repeat(2 * 1024 * 1024) } } }),
    });
    expect(large.status).toBe(413);
    expect((await post({ jsonrpc: '2.0', id: 1, method: 'ping' })).json()).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
    // Nothing of it reached the server's own faults (the front door's or a tool call's "request failed", a 500).
    expect(server.logs.filter((line) => line.msg === 'request failed' || line.status === 500)).toEqual([]);
  });

  it('answers a batch as its protocol version says: refused from 2025-06-18 on, answered in order before', async () => {
    const batch = [
      { jsonrpc: '2.0', id: 'a', method: 'ping' },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 'b', method: 'tools/list' },
    ];
    const current = await post(batch, { 'mcp-protocol-version': '2025-11-25' });
    expect(current.status).toBe(400);
    expect(current.json()).toMatchObject({ error: { code: -32600 } });
    const older = await post(batch, { 'mcp-protocol-version': '2025-03-26' });
    expect(older.status).toBe(200);
    expect((older.json() as { id: string }[]).map((answer) => answer.id)).toEqual(['a', 'b']);
  });

  it("runs a batch's calls one after another, so that a later call sees what an earlier one wrote", async () => {
    const call = (id: string, name: string, args: object) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
    const batch = [call('place', 'shop_orders_v1_0_post', { product_id: 1, quantity: 3 }), call('list', 'shop_orders_v1_0_get', {})];
    const answered = await post(batch, { 'mcp-protocol-version': '2025-03-26', authorization: tokens.alice! });
    expect(answered.status).toBe(200);
    const [placed, listed] = answered.json() as { id: string; result: { structuredContent: Record<string, { order_id: number }[]> } }[];
    expect([placed!.id, listed!.id]).toEqual(['place', 'list']);
    const orderId = placed!.result.structuredContent.placed![0]!.order_id;
    // Run at once, the read would begin before the write's transaction committed, and miss the new order.
    expect(Object.values(listed!.result.structuredContent)[0]!.map((order) => order.order_id)).toContain(orderId);
  });

  it('gives two agents who send the same JSON-RPC id at once each its own answer', async () => {
    const call = (limit: number) => post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'shop_products_v3_0_get', arguments: { limit } } });
    const answers = await Promise.all([1, 2, 3, 1, 2, 3].map((limit) => call(limit)));
    answers.forEach((response, index) => {
      const answer = response.json() as { id: number; result: { structuredContent: { products: unknown[] } } };
      expect(answer.id).toBe(1);
      expect(answer.result.structuredContent.products).toHaveLength([1, 2, 3, 1, 2, 3][index]!);
    });
  });

  it('answers a call while the database is stopped as a tool error with 503, and calls again once it is back', async () => {
    const alice = await connect(tokens.alice);
    await db.kill('SIGSTOP');
    let result: CallToolResult;
    try {
      result = (await alice.callTool({ name: 'shop_orders_v1_0_get', arguments: {} })) as CallToolResult;
    } finally {
      await db.kill('SIGCONT');
    }
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatchObject({ message: 'Service unavailable', status: 503 });
    const again = (await alice.callTool({ name: 'shop_orders_v1_0_get', arguments: {} })) as CallToolResult;
    expect(again.isError).toBeFalsy();
  }, 30_000);
});
