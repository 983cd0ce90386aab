import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { Backend } from '../../generator/ir.js';
import type { LockLine } from '../../scripts/cli/verify-access/lock.js';
import { toolChecks } from '../../scripts/cli/verify-access/mcp.js';

/**
 * verify-access's tools/list checks (docs/internals/contract.md §16) where the demo cannot take them: a Bearer backend
 * with Issuers answers a caller without credentials 401 and its challenge, which is a refusal, not an error; any
 * other backend so answering, or a tools/list refused to credentials the server accepts, is an error named with what
 * the server said. Against servers of this test's own that answer MCP's HTTP as an endpoint refusing would; the
 * checks of the tools listed are proven against the built server in verify-access.test.ts.
 */
const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function serve(answer: (request: IncomingMessage, response: ServerResponse) => void): Promise<string> {
  const server = createServer(answer);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const refusing =
  (status: number, body: string, headers: Record<string, string> = {}) =>
  (_request: IncomingMessage, response: ServerResponse) => {
    response.writeHead(status, { 'content-type': 'application/json', ...headers });
    response.end(body);
  };

const backend = (issuers: number) =>
  ({ name: 'idp', authScheme: 'Bearer', issuers: Array.from({ length: issuers }, (_, at) => ({ iss: `https://issuer-${at}.example` })) }) as unknown as Backend;
const lines: LockLine[] = [{ backend: 'idp', path: '/idp/v1.0/open', method: 'GET', rule: 'public' }];
const tools = new Map([['GET /idp/v1.0/open', 'idp_open_v1_0_get']]);

describe("verify-access's tools/list checks", () => {
  it('take a Bearer backend with Issuers refusing a caller without credentials (401 and its challenge) for a refusal', async () => {
    const base = await serve(
      refusing(401, '{"message":"Missing credentials","status":401}', {
        'www-authenticate': 'Bearer resource_metadata="http://x/.well-known/oauth-protected-resource/idp/mcp"',
      }),
    );
    const checks = await toolChecks(backend(1), lines, tools, [], base, fetch);
    expect(checks).toEqual([
      expect.objectContaining({
        role: '(anonymous)',
        credentials: 'MCP, no credentials',
        tool: 'tools/list',
        expected: 'refused',
        got: 'refused',
        status: 401,
      }),
    ]);
  });

  it('take the same 401 on a backend without Issuers, and any refusal of accepted credentials, for an error saying what the server said', async () => {
    const base = await serve(refusing(401, '{"message":"Missing credentials","status":401}'));
    const caller = { role: 'customer', credentials: 'API key', headers: { 'x-api-key': 'xr_accepted' } };
    const checks = await toolChecks(backend(0), lines, tools, [caller], base, fetch);
    expect(checks).toEqual([
      expect.objectContaining({ role: '(anonymous)', tool: 'tools/list', expected: 'admitted', got: 'error', status: 401, note: 'Missing credentials' }),
      expect.objectContaining({ role: 'customer', credentials: 'MCP, API key', tool: 'tools/list', expected: 'admitted', got: 'error', status: 401 }),
    ]);
  });
});
