import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PrivateMariadb, startPrivateMariadb } from '../../scripts/mariadb.js';
import { connectTo } from '../../scripts/connection.js';
import { addUser, createDemoDatabase } from '../../scripts/schema.js';
import { type BuiltServer, startBuiltServer } from '../support/built-server.js';
import { basicHeader, formBody, send } from '../support/http.js';

/**
 * The MCP endpoint (docs/internals/contract.md §16, issue 45) attacked as an outsider would, over HTTP against the
 * built server with the demo's data: JSON-RPC the SDK's client never sends, one caller's messages aimed at another's
 * requests, arguments of the wrong JSON type, and what the access log keeps of a call. The file has a MariaDB of its
 * own, which one test stops (SIGSTOP) to hold a caller's request in flight.
 */
const QUERY_TIMEOUT_MS = 2000;
/** How long a request may go unanswered before it counts as left hanging: far past any answer on a busy machine. */
const HANG_MS = 20_000;
let db: PrivateMariadb;
let server: BuiltServer;
const tokens: Record<string, string> = {};

beforeAll(async () => {
  db = await startPrivateMariadb({ dir: 'test/.tmp/review-mcp-db', fresh: true, database: 'review_mcp' });
  await createDemoDatabase(db.url);
  server = await startBuiltServer({ env: { DATABASE_URL: db.url, QUERY_TIMEOUT_MS: String(QUERY_TIMEOUT_MS), DB_ACQUIRE_TIMEOUT_MS: '500' } });
  for (const user of ['alice', 'bob']) {
    const response = await send(`${server.url}/shop/v1.0/token`, { method: 'POST', ...formBody({ user, pass: `${user}-pass` }) });
    tokens[user] = `Bearer ${(response.json() as { token: string }).token}`;
  }
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await db?.kill('SIGCONT').catch(() => undefined);
  await db?.stop();
});

interface Answer {
  status: number;
  body: unknown;
}

/**
 * A POST to the shop's endpoint as an agent's HTTP client makes it, answered or refused by its own deadline: a
 * request the server never answers fails the test with a TimeoutError rather than holding it to vitest's limit.
 */
async function post(message: unknown, headers: Record<string, string> = {}, backend = 'shop'): Promise<Answer> {
  const response = await fetch(`${server.url}/${backend}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    // A message given as text is sent as it is (one too deep for JSON.stringify here).
    body: typeof message === 'string' ? message : JSON.stringify(message),
    signal: AbortSignal.timeout(HANG_MS),
  });
  const text = await response.text();
  const json = (response.headers.get('content-type') ?? '').startsWith('application/json');
  return { status: response.status, body: json ? JSON.parse(text) : text };
}

const call = (name: string, args: unknown, id: unknown = 1) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

/** The route's error body a tool error carries, or the JSON-RPC answer as it is when it is none. */
function toolError(answer: Answer): unknown {
  const result = (answer.body as { result?: { isError?: boolean; content: { text: string }[] } }).result;
  return result?.isError === true ? JSON.parse(result.content[0]!.text) : answer.body;
}

describe('the MCP endpoint under attack', () => {
  it('answers a request whose params the protocol does not take (null, a list, a _meta that is no object), never leaving it hanging', async () => {
    for (const params of [null, [], { _meta: 5 }, 'tools']) {
      const answer = await post({ jsonrpc: '2.0', id: 7, method: 'tools/list', params }, { authorization: tokens.alice! });
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32600 } });
    }
  }, 120_000);

  it("gives no caller a way to cancel another caller's call: notifications/cancelled naming any id leaves it answered", async () => {
    await db.kill('SIGSTOP');
    let victim: Answer | undefined;
    let failed: unknown;
    try {
      // alice's call waits on the stopped database until the query's timeout answers it 503.
      const pending = post(call('shop_orders_v1_0_get', {}), { authorization: tokens.alice! }).then(
        (answer) => {
          victim = answer;
        },
        (error: unknown) => {
          failed = error;
        },
      );
      // Someone else, without credentials, cancels every id the server may have given a request so far, again and
      // again until alice is answered (the server numbers requests it handles from 0, fewer than 1,000 here).
      while (victim === undefined && failed === undefined) {
        for (let from = 0; from < 1000; from += 100) {
          const cancels = Array.from({ length: 100 }, (_, index) => ({
            jsonrpc: '2.0',
            method: 'notifications/cancelled',
            params: { requestId: from + index, reason: 'not yours' },
          }));
          expect((await post(cancels)).status).toBe(202);
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await pending;
    } finally {
      await db.kill('SIGCONT');
    }
    expect(failed).toBeUndefined();
    expect(victim!.status).toBe(200);
    expect(toolError(victim!)).toMatchObject({ status: 503 });
  }, 60_000);

  it("answers arguments of the wrong JSON type with the route's 400 as a tool error, never an internal error", async () => {
    const alice = { authorization: tokens.alice! };
    // A header-named argument is a header's text: an object is no header.
    const key = await post(call('shop_orders_v1_0_post', { product_id: 1, quantity: 1, 'Idempotency-Key': { toString: 1 } }), alice);
    expect(toolError(key)).toMatchObject({ status: 400, message: expect.stringMatching(/Idempotency-Key/) });
    // A query parameter is a single value: an object, or a list nested however deep, is no query parameter.
    const object = await post(call('shop_products_v3_0_get', { q: { a: 1 } }));
    expect(toolError(object)).toMatchObject({ status: 400, message: expect.stringMatching(/'q'/) });
    const nested = `${'['.repeat(100_000)}"x"${']'.repeat(100_000)}`;
    const deep = await post(JSON.stringify(call('shop_products_v3_0_get', { q: 'NESTED' })).replace('"NESTED"', nested));
    expect(toolError(deep)).toMatchObject({ status: 400, message: expect.stringMatching(/'q'/) });
  }, 60_000);

  it("lets no argument stand for the caller's credentials or another header: a tool runs as the MCP request's caller", async () => {
    const alice = { authorization: tokens.alice! };
    for (const args of [
      { Authorization: tokens.bob },
      { authorization: tokens.bob },
      { 'X-API-Key': 'xk_anything' },
      JSON.parse(`{"__proto__":{"authorization":${JSON.stringify(tokens.bob)}}}`),
      { constructor: { prototype: { authorization: tokens.bob } } },
    ]) {
      const report = await post(call('shop_report_v1_0_get', args), alice);
      expect(toolError(report)).toMatchObject({ status: expect.any(Number) });
      expect([400, 403]).toContain((toolError(report) as { status: number }).status);
    }
    // And a header argument's text stays one header's value: a line break in it smuggles no other header.
    const smuggled = await post(call('shop_order_v1_0_put', { order_id: 1, quantity: 2, 'If-Match': '"1"\r\nAuthorization: x' }), alice);
    expect([400, 404, 412]).toContain((toolError(smuggled) as { status: number }).status);
  }, 60_000);

  it("serves no caller another's tool list: a role named with a comma is not two roles", async () => {
    const connection = await connectTo(db.url);
    try {
      await addUser(connection, 'trent', 'trent-pass-1', ['admin', 'staff']);
      await addUser(connection, 'mallory', 'mallory-pass-1', ['admin,staff']);
    } finally {
      await connection.end();
    }
    const listed = async (user: string) => {
      const answer = await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, { authorization: basicHeader(user, `${user}-pass-1`) }, 'staff');
      return (answer.body as { result: { tools: { name: string }[] } }).result.tools.map((tool) => tool.name).sort();
    };
    const operations = async (user: string) => {
      const response = await send(`${server.url}/openapi.json?for=me`, { headers: { authorization: basicHeader(user, `${user}-pass-1`) } });
      const paths = (response.json() as { paths: Record<string, Record<string, { operationId: string }>> }).paths;
      return Object.entries(paths)
        .filter(([path]) => path.startsWith('/staff/v'))
        .flatMap(([, item]) => Object.values(item).map((operation) => operation.operationId))
        .sort();
    };
    expect(await listed('trent')).toContain('staff_notes_v1_0_get');
    // mallory's one role, `admin,staff`, admits no staff route: trent's list, listed just before, is not hers.
    expect(await operations('mallory')).toEqual([]);
    expect(await listed('mallory')).toEqual([]);
  }, 30_000);

  it("keeps in the access log who called a tool, as a route's line over REST does", async () => {
    const headers = { authorization: tokens.alice!, 'x-request-id': 'review-mcp-log-1' };
    const answer = await post(call('shop_account_v1_0_get', {}), headers);
    expect(answer.status).toBe(200);
    const rest = await send(`${server.url}/shop/v1.0/account`, { headers: { authorization: tokens.alice!, 'x-request-id': 'review-mcp-log-2' } });
    expect(rest.status).toBe(200);
    const line = (requestId: string) => server.logs.find((entry) => entry.msg === 'request' && entry.requestId === requestId);
    await expect.poll(() => line('review-mcp-log-2'), { timeout: 10_000 }).toBeDefined();
    await expect.poll(() => line('review-mcp-log-1'), { timeout: 10_000 }).toBeDefined();
    expect(line('review-mcp-log-2')).toMatchObject({ userId: '1' });
    expect(line('review-mcp-log-1')).toMatchObject({ path: '/shop/mcp', userId: '1' });
  }, 30_000);
});
