import { readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectTo } from '../../scripts/connection.js';
import { addUser } from '../../scripts/schema.js';
import { type BuiltServer, startBuiltServer } from '../support/built-server.js';
import { operationsFor, restCall } from '../support/callers.js';
import { send } from '../support/http.js';
import { signingKey, startTestProvider, type TestProvider } from '../support/identity-provider.js';
import { callTool, listedTo, mcpClient } from '../support/mcp-client.js';
import { buildScratchProject } from '../support/scratch-project.js';

/**
 * Issue 45's "Done when" for an outside issuer's users (docs/internals/contract.md §9 and §16): the demo's
 * resources built with an `Issuer` in the shop backend (a real OpenID Provider, oidc-provider, on loopback, as
 * docs/guides/identity-providers.md tries it), each provider user's `tools/list` equal to what `?for=me` gives
 * the same token, their roles mapped (`Role from to`); and, shop being now a Bearer backend with Issuers, a
 * caller without credentials refused (401) with the challenge that names the protected resource metadata.
 */
const ROOT = path.resolve('test/.tmp/mcp-issuer');
const OUTSIDER = 'mcp-outsider';
let connection: mysql.Connection;
let provider: TestProvider;
let server: BuiltServer;

beforeAll(async () => {
  connection = await connectTo(inject('databaseUrl'));
  // Known to the shop by name alone (its UserQuery), holding no role of ours: its roles are the provider's.
  await addUser(connection, OUTSIDER, 'mcp-outsider-pass', []);
  provider = await startTestProvider({
    keys: [await signingKey('RS256', 'mcp-rsa')],
    clients: { alice: { roles: ['customer'] }, bob: { roles: ['customer', 'admin'] }, [OUTSIDER]: { roles: ['shop-administrator'] } },
  });
  const files: Record<string, string> = {};
  for (const file of readdirSync('resources', { recursive: true }).map(String)) {
    if (file.endsWith('.xml')) files[`resources/${file}`] = readFileSync(`resources/${file}`, 'utf8');
  }
  const issuer = `  <Issuer iss="${provider.issuer}" audience="shop-api" discovery="${provider.issuer}/.well-known/openid-configuration">
    <Role from="shop-administrator" to="admin"/>
    <UserQuery>select user_id from usr where user_name = $claim.sub</UserQuery>
  </Issuer>`;
  files['resources/shop/backend.xml'] = files['resources/shop/backend.xml']!.replace('</Backend>', `${issuer}\n</Backend>`);
  await buildScratchProject(ROOT, { files, databaseUrl: inject('databaseUrl') });
  server = await startBuiltServer({ root: ROOT });
}, 240_000);

afterAll(async () => {
  await server?.stop();
  await provider?.stop();
  await connection?.end();
  rmSync(ROOT, { recursive: true, force: true });
});

describe("an outside issuer's users", () => {
  it('are listed exactly the operations ?for=me gives their token, by the roles the provider gives them, mapped', async () => {
    const listed: Record<string, string[]> = {};
    for (const client of ['alice', 'bob', OUTSIDER]) {
      const headers = { authorization: `Bearer ${await provider.token(client)}` };
      const [tools, operations] = await Promise.all([listedTo(server.url, 'shop', headers), operationsFor(server.url, 'shop', headers)]);
      expect({ client, tools }).toEqual({ client, tools: operations });
      listed[client] = operations;
    }
    expect(listed.alice).toContain('shop_orders_v1_0_post');
    expect(listed.alice).not.toContain('shop_report_v1_0_get');
    // The provider's admin is shop's console role, which an outside token holds only through a Role that maps it
    // (docs/internals/contract.md §9): bob's token is a customer's.
    expect(listed.bob).toEqual(listed.alice);
    // shop-administrator is admin here: the report and the reviews' DELETE, not a customer's orders.
    expect(listed[OUTSIDER]).toEqual(expect.arrayContaining(['shop_report_v1_0_get', 'shop_reviews_v1_0_delete']));
    expect(listed[OUTSIDER]).not.toContain('shop_orders_v1_0_post');
  });

  it("call tools as the route answers their token: alice's orders, the outsider's report", async () => {
    for (const [client, tool, route] of [
      ['alice', 'shop_orders_v1_0_get', '/shop/v1.0/orders'],
      [OUTSIDER, 'shop_report_v1_0_get', '/shop/v1.0/report'],
    ] as const) {
      const headers = { authorization: `Bearer ${await provider.token(client)}` };
      const agent = await mcpClient(server.url, 'shop', headers);
      try {
        const rest = await restCall(server.url, 'GET', route, {}, headers);
        expect(rest.status).toBe(200);
        expect(await callTool(agent, tool, {})).toMatchObject({ isError: false, body: rest.body });
      } finally {
        await agent.close();
      }
    }
  });
});

describe('a Bearer backend with Issuers, without credentials', () => {
  it('refuses the MCP client (401) with WWW-Authenticate naming its protected resource metadata, which names the issuer', async () => {
    expect(await listedTo(server.url, 'shop', {})).toEqual({ refused: 401 });
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    };
    const answer = await send(`${server.url}/shop/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(initialize),
    });
    expect(answer.status).toBe(401);
    const challenge = String(answer.headers['www-authenticate']);
    const metadata = /resource_metadata="([^"]+)"/.exec(challenge)?.[1];
    expect(metadata).toBe(`${server.url}/.well-known/oauth-protected-resource/shop/mcp`);
    const document = await send(metadata!);
    expect(document.status).toBe(200);
    expect(document.json()).toMatchObject({ resource: `${server.url}/shop/mcp`, authorization_servers: [provider.issuer] });
  });
});
