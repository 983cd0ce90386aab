import { execFile } from 'node:child_process';
import path from 'node:path';
import { describe, expect, inject, it } from 'vitest';

/**
 * `xmlrest explain` on a backend with MCP (docs/internals/contract.md §16, issue 45 point 5): under its answer, the
 * route's tool as the server names it from the OpenAPI document (its name, whether it only reads) and the backend's
 * endpoint; a route that is no tool (a token request, which takes a password) says so. A tool is its route: what
 * explain answers for the route holds for the tool. Run in this repository, on the demo's modules and users.
 */
function explain(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.resolve('scripts/xmlrest.mjs'), 'explain', ...args],
      { env: { ...process.env, DATABASE_URL: inject('databaseUrl') } },
      (error, stdout, stderr) => resolve({ code: error ? Number((error as { code?: number }).code) : 0, stdout, stderr }),
    );
  });
}

describe('xmlrest explain on a backend with MCP', () => {
  // Each command is a process that loads the project's modules: a few seconds each on a busy machine, so few of them.
  it("names the route's tool, whether it only reads, and the endpoint; a route that is no tool says so", async () => {
    const [read, write, json, token] = await Promise.all([
      explain(['alice', 'GET', '/shop/v1.0/order']),
      explain(['alice', 'DELETE', '/shop/v1.0/reviews']),
      explain(['alice', 'GET', '/shop/v1.0/report', '--json']),
      explain(['alice', 'POST', '/shop/v1.0/token', '--json']),
    ]);
    expect(read.code, read.stderr).toBe(0);
    expect(read.stdout).toContain('allowed: alice may call GET /shop/v1.0/order on backend shop');
    expect(read.stdout).toContain(
      '  MCP tool: shop_order_v1_0_get (read-only) at POST /shop/mcp; tools/list shows it to alice exactly when the route admits them',
    );
    expect(write.code).toBe(1);
    expect(write.stdout).toContain('  MCP tool: shop_reviews_v1_0_delete (not read-only) at POST /shop/mcp');
    // Denied: the tool is not listed to her, and a call of it is refused by the route's guard.
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({
      allowed: false,
      needs: ['admin'],
      mcp: { endpoint: '/shop/mcp', tool: 'shop_report_v1_0_get', readOnly: true },
    });
    expect(token.code).toBe(0);
    expect(JSON.parse(token.stdout)).toMatchObject({ allowed: true, needs: 'public', mcp: { endpoint: '/shop/mcp', tool: null } });
  }, 120_000);
});
