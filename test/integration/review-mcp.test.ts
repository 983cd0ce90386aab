import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTo } from '../../scripts/connection.js';
import { type PrivateMariadb, startPrivateMariadb } from '../../scripts/mariadb.js';
import { addUser, createDemoDatabase } from '../../scripts/schema.js';
import { type BuiltServer, startBuiltServer } from '../support/built-server.js';
import { basicHeader, formBody, send } from '../support/http.js';
import { type FixtureIssuer, type PrivateJwk, signingKey, startFixtureIssuer } from '../support/identity-provider.js';
import { buildScratchProject } from '../support/scratch-project.js';

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
      // again until alice is answered (the server numbers the requests it holds from 0, fewer than 1,000 here). A
      // tool call is handed to its handler without such a number (transport.ts) and so could not be cancelled this
      // way since; that no notification reaches the server at all is test/unit/mcp-transport.test.ts's.
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

  // Left open: a tool call's line in the access log. The front door writes one line per HTTP request, so a refused
  // tool call is `POST /shop/mcp 200` with resource `mcp`, and the route's status, reason and metrics series (set on
  // the call's sub-context) reach no line and no counter, as a batch's operations do not either. Whether a call
  // gets a line of its own, or the MCP request's line the call's fields, is the contract's to say (§7, §16).
  it.fails("records a refused tool call in the access log as a route's refusal over REST is recorded", async () => {
    const answer = await post(call('shop_report_v1_0_get', {}), { authorization: tokens.alice!, 'x-request-id': 'review-mcp-log-3' });
    expect(toolError(answer)).toMatchObject({ status: 403 });
    const lines = () => server.logs.filter((entry) => entry.msg === 'request' && entry.requestId === 'review-mcp-log-3');
    await expect.poll(() => lines().length, { timeout: 10_000 }).toBeGreaterThan(0);
    expect(lines()).toContainEqual(expect.objectContaining({ resource: 'report@1.0', status: 403, reason: 'role_not_held' }));
  }, 30_000);

  it('runs a batch of audited calls (protocol 2025-03-26) without a warning of leaking listeners on the log', async () => {
    const token = await send(`${server.url}/desk/v1.0/token`, { method: 'POST', ...formBody({ user: 'bob', pass: 'bob-pass' }) });
    const authorization = `Bearer ${(token.json() as { token: string }).token}`;
    const batch = Array.from({ length: 20 }, (_, id) => call('desk_tickets_v1_0_get', {}, id));
    const answer = await post(batch, { authorization }, 'desk');
    expect(answer.status).toBe(200);
    expect((answer.body as unknown[]).map((each) => toolError({ status: 200, body: each }))).not.toContainEqual(expect.objectContaining({ status: 429 }));
    // Node prints the warning on stderr a moment after: a while to let it arrive, then none may be there.
    const warned = () => server.logs.some((entry) => String(entry.text ?? '').includes('MaxListenersExceededWarning'));
    await expect
      .poll(warned, { timeout: 3000 })
      .toBe(true)
      .catch(() => undefined);
    expect(warned()).toBe(false);
  }, 30_000);

  it("counts tool calls against the route's rate limit and answers the 61st of a minute 429, as over REST", async () => {
    const token = await send(`${server.url}/desk/v1.0/token`, { method: 'POST', ...formBody({ user: 'alice', pass: 'alice-pass' }) });
    const authorization = `Bearer ${(token.json() as { token: string }).token}`;
    // The limit's windows are fixed minutes from the epoch (runtime/limits): begun early in one, so that no window
    // ends among the calls however slow the machine.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 30_000) await new Promise((resolve) => setTimeout(resolve, 60_500 - intoMinute));
    const statuses: number[] = [];
    for (let index = 0; index < 61; index++) {
      const answer = await post(call('desk_tickets_v1_0_get', {}), { authorization }, 'desk');
      const refusal = toolError(answer) as { status?: number };
      statuses.push(refusal.status ?? 200);
    }
    expect(statuses.slice(0, 60).every((status) => status === 200)).toBe(true);
    expect(statuses[60]).toBe(429);
    const rest = await send(`${server.url}/desk/v1.0/tickets`, { headers: { authorization } });
    expect(rest.status).toBe(429);
  }, 90_000);

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

/**
 * A Bearer backend with an Issuer (MCP's authorization for HTTP transports): every 401 of its endpoint points at its
 * protected resource metadata, so that a client whose token was refused (expired, revoked, forged) learns from the
 * 401 where to get another, as one that sent none does; and an outside user's tools are its mapped roles' routes.
 */
describe('the MCP endpoint of a Bearer backend with an Issuer', () => {
  const ISSUER = 'https://idp.review.example';
  const ROOT = path.resolve('test/.tmp/review-mcp-issuer');
  let key: PrivateJwk;
  let fixture: FixtureIssuer;
  let issuing: BuiltServer;

  beforeAll(async () => {
    key = await signingKey('RS256', 'review');
    fixture = await startFixtureIssuer([key]);
    await buildScratchProject(ROOT, {
      databaseUrl: db.url,
      files: {
        'resources/api/backend.xml': `<Backend xmlns="urn:xmlrest:resource:1.0" auth_scheme="Bearer" issuer="api" uid_type="text" mcp="on">
  <Issuer iss="${ISSUER}" audience="review-api" jwks_uri="${fixture.jwksUri}"/>
</Backend>
`,
        'resources/api/whoami.xml': `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0" auth="*">
  <Request method="GET"><Sql id="me">select cast($uid as char) as uid</Sql></Request>
</Resource>
`,
        'resources/api/admin.xml': `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0" auth="admin">
  <Request method="GET"><Sql id="area">select 'admin' as area</Sql></Request>
</Resource>
`,
      },
    });
    issuing = await startBuiltServer({ root: ROOT, env: { DATABASE_URL: db.url } });
  }, 240_000);

  afterAll(async () => {
    await issuing?.stop();
    await fixture?.close();
  });

  const list = (headers: Record<string, string>) =>
    send(`${issuing.url}/api/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
  const metadataUrl = () => `${issuing.url}/.well-known/oauth-protected-resource/api/mcp`;

  it('answers 401 without credentials pointing at its protected resource metadata, which names the issuer', async () => {
    const refused = await list({});
    expect(refused.status).toBe(401);
    expect(refused.headers['www-authenticate']).toBe(`Bearer resource_metadata="${metadataUrl()}"`);
    const metadata = await send(metadataUrl());
    expect(metadata.status).toBe(200);
    expect(metadata.json()).toMatchObject({ resource: `${issuing.url}/api/mcp`, authorization_servers: [ISSUER] });
    // Publicly cacheable, so that no request's Origin may write it: a page's site is not the resource.
    const asked = await send(metadataUrl(), { headers: { origin: 'https://evil.example' } });
    expect(asked.json()).toMatchObject({ resource: `${issuing.url}/api/mcp` });
  });

  it('points every 401 at the metadata: a forged, an expired or a foreign token as well as none', async () => {
    const now = Math.floor(Date.now() / 1000);
    const expired = await fixture.sign(key, { iss: ISSUER, aud: 'review-api', sub: 'u1', iat: now - 7200, exp: now - 3600 });
    const foreign = await fixture.sign(key, { iss: 'https://elsewhere.example', aud: 'review-api', sub: 'u1' });
    for (const token of ['not.a.token', expired, foreign]) {
      const refused = await list({ authorization: `Bearer ${token}` });
      expect(refused.status).toBe(401);
      expect(refused.headers['www-authenticate']).toMatch(/^Bearer /);
      expect(refused.headers['www-authenticate']).toContain(`resource_metadata="${metadataUrl()}"`);
    }
  });

  it("lists an outside user's tools by its mapped roles, as ?for=me does", async () => {
    const tools = async (roles: string[]) => {
      const authorization = `Bearer ${await fixture.sign(key, { iss: ISSUER, aud: 'review-api', sub: 'u1', roles })}`;
      const listed = list({ authorization }).then((response) => response.json()) as Promise<{ result: { tools: { name: string }[] } }>;
      const names = (await listed).result.tools.map((tool) => tool.name).sort();
      const document = (await send(`${issuing.url}/openapi.json?for=me`, { headers: { authorization } })).json() as {
        paths: Record<string, Record<string, { operationId: string }>>;
      };
      const operations = Object.entries(document.paths)
        .filter(([path]) => path.startsWith('/api/v'))
        .flatMap(([, item]) => Object.values(item).map((operation) => operation.operationId))
        .sort();
      expect(names).toEqual(operations);
      return names;
    };
    expect(await tools(['admin'])).toEqual(['api_admin_v1_0_get', 'api_whoami_v1_0_get']);
    expect(await tools([])).toEqual(['api_whoami_v1_0_get']);
  });
});
