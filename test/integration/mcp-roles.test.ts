import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTo } from '../../scripts/connection.js';
import { addUser, DEMO_USERS, grantRole, revokeRole } from '../../scripts/schema.js';
import { type BuiltServer, startBuiltServer } from '../support/built-server.js';
import { credentialsOn, operationsFor, restCall, tokenOf } from '../support/callers.js';
import { DEMO_WEBHOOK_ENV } from '../support/demo-webhook.js';
import { basicHeader } from '../support/http.js';
import { callTool, listedTo, mcpClient, toolNames } from '../support/mcp-client.js';
import { ownDatabase } from '../support/own-database.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * Issue 45's "Done when", over HTTP against the built demo with the MCP specification's own client (the SDK's
 * Client and StreamableHTTPClientTransport; docs/internals/contract.md §16): the tools each caller is listed are
 * the operations `GET /openapi.json?for=me` gives the same credentials (every demo user and a user of each demo
 * role alone, on each backend; API keys with a subset of their user's roles; no credentials), every kind of call
 * answers what the same REST call answers, a call without credentials or with a role revoked or ended is refused
 * in the route's words, a write's Emit and audit row are those of the same REST call, and a tenant's caller keeps
 * to its tenant. The outside issuer's users: mcp-issuer.test.ts (its server needs an Issuer of its own).
 */
const run = promisify(execFile);
const BACKENDS = ['shop', 'desk', 'staff', 'crm'] as const;
/** A user of each role of the demo holding it alone (crm's with an organisation, else crm refuses them all). */
const ONE_ROLE = [...new Set(DEMO_USERS.flatMap((user) => user.roles))].map((role) => ({ name: `mcp-only-${role}`, roles: [role] }));
const figures: string[] = [];
let url: string;
let connection: mysql.Connection;
let server: BuiltServer;
const receiver = new WebhookReceiver([DEMO_WEBHOOK_ENV.DESK_WEBHOOK_SECRET]);
const ids = new Map<string, number>();

beforeAll(async () => {
  url = await ownDatabase('mcp_roles');
  connection = await connectTo(url);
  await receiver.up();
  for (const { name, roles } of ONE_ROLE) {
    ids.set(name, await addUser(connection, name, `${name}-pass`, roles, roles[0]!.startsWith('crm-') ? { column: 'org_id', tenant: '1' } : undefined));
  }
  // Users whose roles the refusals take away, apart from the demo's, whose lists the first test compares.
  for (const [name, roles] of [
    ['mcp-paula', ['customer', 'guest']],
    ['mcp-rita', ['customer', 'guest']],
    ['mcp-sam', ['staff', 'admin']],
    ['mcp-tess', ['customer']],
    ['mcp-uma', ['staff']],
  ] as const) {
    ids.set(name, await addUser(connection, name, `${name}-pass`, roles));
  }
  server = await startBuiltServer({ env: { DATABASE_URL: url, DESK_WEBHOOK_URL: receiver.url } });
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await receiver.down();
  await connection?.end();
  process.stdout.write(`mcp-roles figures:\n  ${figures.join('\n  ')}\n`);
});

async function xmlrest(...args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, ['scripts/xmlrest.mjs', ...args], { env: { ...process.env, DATABASE_URL: url } });
  return stdout.trim();
}

/** Polls until `read` gives what `done` wants, or 15 s pass (a revoke reaches a server within its poll). */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() - started > 15_000) return value;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const has = (listed: string[] | { refused: number }, tool: string) => Array.isArray(listed) && listed.includes(tool);

describe('tools/list: exactly what ?for=me gives the same credentials', () => {
  it('to every demo user, and to a user of each demo role alone, on each of the four backends', async () => {
    const callers = [...DEMO_USERS.map((user) => ({ name: user.name, roles: user.roles })), ...ONE_ROLE];
    // Four callers at a time: each signs in with a password, and the server hashes at most 16 waiting (then 503).
    const compared: { caller: string; backend: string; listed: string[] | { refused: number }; operations: string[] }[] = [];
    for (let at = 0; at < callers.length; at += 4) {
      const batch = callers.slice(at, at + 4).flatMap((caller) =>
        BACKENDS.map(async (backend) => {
          const headers = await credentialsOn(server.url, backend, caller.name, `${caller.name}-pass`);
          const [listed, operations] = await Promise.all([listedTo(server.url, backend, headers), operationsFor(server.url, backend, headers)]);
          return { caller: caller.name, backend, listed, operations };
        }),
      );
      compared.push(...(await Promise.all(batch)));
    }
    for (const { caller, backend, listed, operations } of compared) expect({ caller, backend, tools: listed }).toEqual({ caller, backend, tools: operations });
    const seen = (caller: string, backend: string) => compared.find((row) => row.caller === caller && row.backend === backend)!.operations;
    // Not the same list for all: each role gives its own (spot checks that do not lean on ?for=me).
    expect(seen('mcp-only-customer', 'shop')).toContain('shop_orders_v1_0_post');
    expect(seen('mcp-only-customer', 'shop')).not.toContain('shop_report_v1_0_get');
    expect(seen('mcp-only-admin', 'shop')).toEqual(expect.arrayContaining(['shop_report_v1_0_get', 'shop_reviews_v1_0_delete', 'shop_account_v1_0_get']));
    expect(seen('mcp-only-admin', 'staff')).toEqual(['staff_board_v1_0_get', 'staff_board_v1_0_post']);
    expect(seen('mcp-only-staff', 'staff')).not.toContain('staff_board_v1_0_post');
    expect(seen('mcp-only-crm-operator', 'crm')).toEqual(['crm_report_v1_0_get']);
    expect(seen('heidi', 'crm')).toEqual([]);
    // Every tool of every backend is some caller's: no route is left out of the comparison.
    const all = new Set(compared.flatMap((row) => row.operations));
    expect(all.size).toBe(28);
    const counts = (backend: string) => compared.filter((row) => row.backend === backend).map((row) => `${row.caller} ${row.operations.length}`);
    for (const backend of BACKENDS) figures.push(`${backend}: tools listed = ?for=me operations, by caller: ${counts(backend).join(', ')}`);
  });

  it('to API keys listing a subset of their user’s roles, as X-API-Key or as a Bearer credential', async () => {
    // admin is shop's console role, which no key may list: bob's key lists customer alone (not his admin), paula's
    // guest alone (not her customer).
    const [bobKey, paulaKey] = await Promise.all([
      xmlrest('key', 'create', '--backend', 'shop', '--user', 'bob', '--name', 'mcp customer', '--role', 'customer'),
      xmlrest('key', 'create', '--backend', 'shop', '--user', 'mcp-paula', '--name', 'mcp guest', '--role', 'guest'),
    ]);
    for (const [user, key, missing] of [
      ['bob', bobKey, 'shop_report_v1_0_get'],
      ['mcp-paula', paulaKey, 'shop_orders_v1_0_post'],
    ] as const) {
      const own = await listedTo(server.url, 'shop', await credentialsOn(server.url, 'shop', user, `${user}-pass`));
      expect(has(own, missing)).toBe(true);
      for (const headers of [{ 'x-api-key': key }, { authorization: `Bearer ${key}` }] as Record<string, string>[]) {
        const [listed, operations] = await Promise.all([listedTo(server.url, 'shop', headers), operationsFor(server.url, 'shop', headers)]);
        expect(listed).toEqual(operations);
        expect(operations).not.toContain(missing);
        figures.push(
          `shop key of ${user}, ${Object.keys(headers)[0]}: ${operations.length} tools (its user's token: ${Array.isArray(own) ? own.length : own.refused})`,
        );
      }
    }
  });

  it('to a caller without credentials: the public tools alone (shop’s), none on a backend without public routes', async () => {
    for (const backend of BACKENDS) {
      const [listed, operations] = await Promise.all([listedTo(server.url, backend, {}), operationsFor(server.url, backend, {})]);
      expect({ backend, tools: listed }).toEqual({ backend, tools: operations });
    }
    expect(await operationsFor(server.url, 'shop', {})).toEqual([
      'shop_products_v1_0_get',
      'shop_products_v2_0_get',
      'shop_products_v3_0_get',
      'shop_reviews_v1_0_get',
    ]);
  });
});

/** An answer with the ids a write made put aside: two writes of the same call differ in those alone. */
function sameBut(value: unknown, fields: readonly string[]): unknown {
  if (Array.isArray(value)) return value.map((item) => sameBut(item, fields));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, fields.includes(name) ? '<made>' : sameBut(item, fields)]));
}

describe('tools/call: each kind of call answers what the same REST call answers', () => {
  it('a POST, a one-row GET, a versioned PUT with If-Match (and a stale one), a DELETE, a bad parameter', async () => {
    const alice = await credentialsOn(server.url, 'shop', 'alice', 'alice-pass');
    const bob = await credentialsOn(server.url, 'shop', 'bob', 'bob-pass');
    const [agent, admin] = await Promise.all([mcpClient(server.url, 'shop', alice), mcpClient(server.url, 'shop', bob)]);
    try {
      // Listed first, so that the SDK's client checks every structured answer against its tool's outputSchema.
      await Promise.all([toolNames(agent), toolNames(admin)]);
      const made = ['order_id', 'insertId', 'review_id', 'created_on'];
      // POST: an order placed either way.
      const order = { product_id: 2, quantity: 1 };
      const [posted, rest] = [await callTool(agent, 'shop_orders_v1_0_post', order), await restCall(server.url, 'POST', '/shop/v1.0/orders', order, alice)];
      expect(rest.status).toBe(201);
      expect(posted.isError).toBe(false);
      expect(posted.text).toEqual(posted.body);
      expect(sameBut(posted.body, made)).toEqual(sameBut(rest.body, made));
      const mine = (posted.body as { placed: { order_id: number }[] }).placed[0]!.order_id;
      const theirs = (rest.body as { placed: { order_id: number }[] }).placed[0]!.order_id;
      // GET: the order the tool placed, as REST reads it.
      const read = await restCall(server.url, 'GET', '/shop/v1.0/order', { order_id: mine }, alice);
      expect(read.status).toBe(200);
      expect((await callTool(agent, 'shop_order_v1_0_get', { order_id: mine })).body).toEqual(read.body);
      // PUT under If-Match: each order changed at the version its GET's ETag names; then that tag again is stale.
      const tagOf = async (id: number) => String((await restCall(server.url, 'GET', '/shop/v1.0/order', { order_id: id }, alice)).headers.etag);
      const [mineTag, theirsTag] = [await tagOf(mine), await tagOf(theirs)];
      const changed = await callTool(agent, 'shop_order_v1_0_put', { order_id: mine, quantity: 3, 'If-Match': mineTag });
      const restChanged = await restCall(server.url, 'PUT', '/shop/v1.0/order', { order_id: theirs, quantity: 3, 'If-Match': theirsTag }, alice);
      expect(restChanged.status).toBe(200);
      expect(changed.isError).toBe(false);
      expect(changed.body).toEqual(restChanged.body);
      expect((await callTool(agent, 'shop_order_v1_0_get', { order_id: mine })).body).toMatchObject({ order: [{ quantity: 3 }] });
      const stale = await callTool(agent, 'shop_order_v1_0_put', { order_id: mine, quantity: 4, 'If-Match': mineTag });
      const restStale = await restCall(server.url, 'PUT', '/shop/v1.0/order', { order_id: mine, quantity: 4, 'If-Match': mineTag }, alice);
      expect(restStale.status).toBe(412);
      expect(stale).toMatchObject({ isError: true, body: restStale.body });
      const untagged = await callTool(agent, 'shop_order_v1_0_put', { order_id: mine, quantity: 4 });
      expect(untagged).toMatchObject({
        isError: true,
        body: (await restCall(server.url, 'PUT', '/shop/v1.0/order', { order_id: mine, quantity: 4 }, alice)).body,
      });
      expect((untagged.body as { status: number }).status).toBe(428);
      // DELETE: two reviews, one removed by a tool, one by REST (an admin's method).
      const review = { product_id: 3, stars: 4, body: 'Boils fast.' };
      const reviewed = await callTool(agent, 'shop_reviews_v1_0_post', review);
      const restReviewed = await restCall(server.url, 'POST', '/shop/v1.0/reviews', review, alice);
      expect(sameBut(reviewed.body, made)).toEqual(sameBut(restReviewed.body, made));
      const reviewsBefore = await restCall(server.url, 'GET', '/shop/v1.0/reviews', { product_id: 3 }, {});
      expect((await callTool(agent, 'shop_reviews_v1_0_get', { product_id: 3 })).body).toEqual(reviewsBefore.body);
      const idOf = (answer: unknown) => (answer as { review: { insertId: number } }).review.insertId;
      const removed = await callTool(admin, 'shop_reviews_v1_0_delete', { review_id: idOf(reviewed.body) });
      const restRemoved = await restCall(server.url, 'DELETE', '/shop/v1.0/reviews', { review_id: idOf(restReviewed.body) }, bob);
      expect(restRemoved.status).toBe(200);
      expect(removed).toMatchObject({ isError: false, body: restRemoved.body });
      expect((removed.body as { removed: { affectedRows: number } }).removed.affectedRows).toBe(1);
      // A parameter the route refuses: its 400, in its words.
      const bad = await callTool(agent, 'shop_order_v1_0_get', { order_id: 'one' });
      const restBad = await restCall(server.url, 'GET', '/shop/v1.0/order', { order_id: 'one' }, alice);
      expect(restBad.status).toBe(400);
      expect(bad).toMatchObject({ isError: true, body: restBad.body });
    } finally {
      await Promise.all([agent.close(), admin.close()]);
    }
  });

  it('a list route paged with limit and after, following next to the end, page by page as REST gives it', async () => {
    const carla = await credentialsOn(server.url, 'shop', 'mcp-only-customer', 'mcp-only-customer-pass');
    for (let placed = 0; placed < 5; placed++) await restCall(server.url, 'POST', '/shop/v1.0/orders', { product_id: 1 + (placed % 3), quantity: 1 }, carla);
    const agent = await mcpClient(server.url, 'shop', carla);
    try {
      await toolNames(agent);
      for (const [tool, path, rows] of [
        ['shop_orders_v2_0_get', '/shop/v2.0/orders', 'orders'],
        ['shop_products_v3_0_get', '/shop/v3.0/products', 'products'],
      ] as const) {
        const seen: unknown[] = [];
        let after: string | undefined;
        let pages = 0;
        do {
          const args = { limit: 2, ...(after === undefined ? {} : { after }) };
          const [page, rest] = [await callTool(agent, tool, args), await restCall(server.url, 'GET', path, args, carla)];
          expect(rest.status).toBe(200);
          expect(page).toMatchObject({ isError: false, body: rest.body });
          const body = page.body as Record<string, unknown[]> & { next: string | null };
          seen.push(...body[rows]!);
          after = body.next ?? undefined;
          pages++;
        } while (after !== undefined && pages < 10);
        // The pages together are the whole list, as one page of REST gives it.
        expect(seen).toEqual(((await restCall(server.url, 'GET', path, { limit: 100 }, carla)).body as Record<string, unknown[]>)[rows]);
        expect(seen.length).toBeGreaterThan(2);
        expect(pages).toBe(Math.ceil(seen.length / 2));
        figures.push(`${tool}: ${seen.length} rows in ${pages} pages of 2, each equal to REST's`);
      }
    } finally {
      await agent.close();
    }
  });
});

describe('tools/call refused as the route refuses it', () => {
  it('without credentials: the route’s refusal (403, the seed’s rule), as a tool error; a name that is no tool: JSON-RPC -32602', async () => {
    const anonymous = await mcpClient(server.url, 'shop');
    try {
      const refused = await callTool(anonymous, 'shop_orders_v1_0_get', {});
      const rest = await restCall(server.url, 'GET', '/shop/v1.0/orders', {});
      expect(rest.status).toBe(403);
      expect(refused).toMatchObject({ isError: true, body: rest.body });
      expect((await callTool(anonymous, 'shop_products_v1_0_get', {})).body).toEqual((await restCall(server.url, 'GET', '/shop/v1.0/products', {})).body);
      await expect(anonymous.callTool({ name: 'shop_token_v1_0_post', arguments: {} })).rejects.toMatchObject({ code: -32602 });
    } finally {
      await anonymous.close();
    }
  });

  it('a role revoked (the CLI’s way) from a key’s user, or a grant that ends: the next tools/list loses its tools, a call of one is the route’s 403', async () => {
    const key = await xmlrest('key', 'create', '--backend', 'shop', '--user', 'mcp-rita', '--name', 'mcp revoke', '--role', 'customer', '--role', 'guest');
    const rita = { 'x-api-key': key };
    // mcp-uma holds admin for half an hour (the console's grant, with an end), then until a second from now: a
    // grant that ends.
    await grantRole(connection, ids.get('mcp-uma')!, 'admin', Math.floor(Date.now() / 1000) + 1800);
    const uma = { authorization: basicHeader('mcp-uma', 'mcp-uma-pass') };
    expect(await listedTo(server.url, 'shop', rita)).toContain('shop_orders_v1_0_get');
    expect(await listedTo(server.url, 'staff', uma)).toContain('staff_board_v1_0_post');
    await grantRole(connection, ids.get('mcp-uma')!, 'admin', Math.floor(Date.now() / 1000) + 1);
    await xmlrest('role', 'revoke', 'mcp-rita', 'customer');
    const cases = [
      { backend: 'shop', headers: rita, tool: 'shop_orders_v1_0_get', method: 'GET', path: '/shop/v1.0/orders', args: {}, kept: 'shop_account_v1_0_get' },
      {
        backend: 'staff',
        headers: uma,
        tool: 'staff_board_v1_0_post',
        method: 'POST',
        path: '/staff/v1.0/board',
        args: { title: 'x' },
        kept: 'staff_me_v1_0_get',
      },
    ];
    for (const { backend, headers, tool, method, path, args, kept } of cases) {
      const listed = await until(
        () => listedTo(server.url, backend, headers),
        (tools) => !has(tools, tool),
      );
      expect(listed).toEqual(await operationsFor(server.url, backend, headers));
      expect(listed).toContain(kept);
      expect(listed).not.toContain(tool);
      const agent = await mcpClient(server.url, backend, headers);
      try {
        const refused = await callTool(agent, tool, args);
        const rest = await restCall(server.url, method, path, args, headers);
        expect(rest.status).toBe(403);
        expect(refused).toMatchObject({ isError: true, body: rest.body });
        expect((await callTool(agent, kept, {})).isError).toBe(false);
      } finally {
        await agent.close();
      }
    }
  });

  it('a token its user’s revoke ended: the endpoint refuses it (401) as every route does', async () => {
    const tess = { authorization: `Bearer ${await tokenOf(server.url, 'shop', 'mcp-tess', 'mcp-tess-pass')}` };
    expect(await listedTo(server.url, 'shop', tess)).toContain('shop_orders_v1_0_get');
    await revokeRole(connection, ids.get('mcp-tess')!, 'customer');
    expect(
      await until(
        () => listedTo(server.url, 'shop', tess),
        (listed) => !Array.isArray(listed),
      ),
    ).toEqual({ refused: 401 });
    expect((await restCall(server.url, 'GET', '/shop/v1.0/account', {}, tess)).status).toBe(401);
  });
});

describe('a write through tools/call records what the same REST call records', () => {
  it('a ticket opened: its Emit (the outbox row and the webhook delivery) and its audit row, as REST’s', async () => {
    const alice = await credentialsOn(server.url, 'desk', 'alice', 'alice-pass');
    const ticket = { subject: 'Lid cracked', body: 'The teapot lid arrived cracked.' };
    const agent = await mcpClient(server.url, 'desk', { ...alice, 'x-request-id': 'mcp-roles-ticket-mcp' });
    let opened: Awaited<ReturnType<typeof callTool>>;
    try {
      await toolNames(agent);
      opened = await callTool(agent, 'desk_tickets_v1_0_post', ticket);
    } finally {
      await agent.close();
    }
    const rest = await restCall(server.url, 'POST', '/desk/v1.0/tickets', ticket, { ...alice, 'x-request-id': 'mcp-roles-ticket-rest' });
    expect(rest.status).toBe(201);
    expect(opened.isError).toBe(false);
    expect(sameBut(opened.body, ['ticket_id'])).toEqual(sameBut(rest.body, ['ticket_id']));
    const ticketOf = (answer: unknown) => String((answer as { opened: { ticket_id: number }[] }).opened[0]!.ticket_id);
    const [mine, theirs] = [ticketOf(opened.body), ticketOf(rest.body)];

    const [audit] = (await connection.query(
      "select * from xmlrest_api_audit where request_id in ('mcp-roles-ticket-mcp', 'mcp-roles-ticket-rest') and method = 'POST' order by request_id",
    )) as unknown as [Record<string, unknown>[]];
    expect(audit.map((row) => row.request_id)).toEqual(['mcp-roles-ticket-mcp', 'mcp-roles-ticket-rest']);
    const { id: _a, at: _b, request_id: _c, ...viaTool } = audit[0]!;
    const { id: _d, at: _e, request_id: _f, ...viaRest } = audit[1]!;
    expect(viaTool).toEqual(viaRest);
    expect(viaRest).toMatchObject({ backend: 'desk', resource: 'tickets', method: 'POST', status: 201, user_id: '1' });

    const keyOf = (ticket: string) => `ticket:${ticket}`;
    const delivered = await until(
      async () => receiver.deliveries.filter((delivery) => [mine, theirs].includes(String((delivery.payload as { key?: unknown } | undefined)?.key))),
      (found) => found.length === 2,
    );
    const [outbox] = (await connection.query(
      "select backend, event, url, order_key, payload from xmlrest_outbox where backend = 'desk' and order_key in (?, ?) order by order_key = ?",
      [keyOf(mine), keyOf(theirs), keyOf(theirs)],
    )) as unknown as [Record<string, unknown>[]];
    expect(outbox).toHaveLength(2);
    const made = ['ticket_id', 'timestamp', 'key'];
    const row = (found: Record<string, unknown>) => ({ ...found, order_key: '<made>', payload: sameBut(JSON.parse(String(found.payload)), made) });
    expect(row(outbox[0]!)).toEqual(row(outbox[1]!));
    expect(outbox[0]).toMatchObject({ event: 'ticket.opened', order_key: keyOf(mine), url: receiver.url });
    expect(delivered.map((delivery) => delivery.payload?.type)).toEqual(['ticket.opened', 'ticket.opened']);
    expect(sameBut(delivered[0]!.payload, made)).toEqual(sameBut(delivered[1]!.payload, made));
  });
  it('a read of an audited route: its row, written after the answer, as REST’s', async () => {
    const alice = await credentialsOn(server.url, 'desk', 'alice', 'alice-pass');
    const agent = await mcpClient(server.url, 'desk', { ...alice, 'x-request-id': 'mcp-roles-tickets-mcp' });
    try {
      const rest = await restCall(server.url, 'GET', '/desk/v1.0/tickets', {}, { ...alice, 'x-request-id': 'mcp-roles-tickets-rest' });
      expect(await callTool(agent, 'desk_tickets_v1_0_get', {})).toMatchObject({ isError: false, body: rest.body });
    } finally {
      await agent.close();
    }
    const audit = await until(
      async () =>
        (
          (await connection.query(
            "select * from xmlrest_api_audit where request_id in ('mcp-roles-tickets-mcp', 'mcp-roles-tickets-rest') and method = 'GET' order by request_id",
          )) as unknown as [Record<string, unknown>[]]
        )[0],
      (rows) => rows.length === 2,
    );
    expect(audit.map((row) => row.request_id)).toEqual(['mcp-roles-tickets-mcp', 'mcp-roles-tickets-rest']);
    const { id: _a, at: _b, request_id: _c, ...viaTool } = audit[0]!;
    const { id: _d, at: _e, request_id: _f, ...viaRest } = audit[1]!;
    expect(viaTool).toEqual(viaRest);
    expect(viaRest).toMatchObject({ resource: 'tickets', method: 'GET', status: 200, user_id: '1' });
  });
});

describe('a tenant backend (crm, issue 43)', () => {
  it('a tool call keeps to the caller’s organisation, as the route does', async () => {
    const [erin, grace] = [{ authorization: basicHeader('erin', 'erin-pass') }, { authorization: basicHeader('grace', 'grace-pass') }];
    const [acme, globex] = await Promise.all([mcpClient(server.url, 'crm', erin), mcpClient(server.url, 'crm', grace)]);
    try {
      await Promise.all([toolNames(acme), toolNames(globex)]);
      for (const [agent, headers, names] of [
        [acme, erin, ['Ann Archer', 'Ben Baker']],
        [globex, grace, ['Cai Cooper']],
      ] as const) {
        const listed = await callTool(agent, 'crm_contacts_v1_0_get', {});
        expect(listed).toMatchObject({ isError: false, body: (await restCall(server.url, 'GET', '/crm/v1.0/contacts', {}, headers)).body });
        expect((listed.body as { contacts: { name: string }[] }).contacts.map((contact) => contact.name)).toEqual(names);
      }
      // Globex's caller names Acme's contact: nothing changed, nothing read, as over REST.
      const renamed = await callTool(globex, 'crm_contacts_v1_0_put', { contact_id: 1, name: 'Taken over' });
      expect(renamed.body).toEqual((await restCall(server.url, 'PUT', '/crm/v1.0/contacts', { contact_id: 1, name: 'Taken over' }, grace)).body);
      expect((renamed.body as { renamed: { affectedRows: number } }).renamed.affectedRows).toBe(0);
      expect((await callTool(globex, 'crm_notes_v1_0_get', { contact_id: 1 })).body).toEqual({ notes: [] });
      expect((await callTool(acme, 'crm_contacts_v1_0_get', { q: 'Ann' })).body).toMatchObject({ contacts: [{ name: 'Ann Archer' }] });
    } finally {
      await Promise.all([acme.close(), globex.close()]);
    }
    // heidi holds crm-user but belongs to no organisation: listed nothing (the first test), refused as the route refuses her.
    const heidi = { authorization: basicHeader('heidi', 'heidi-pass') };
    const nobody = await mcpClient(server.url, 'crm', heidi);
    try {
      const rest = await restCall(server.url, 'GET', '/crm/v1.0/org', {}, heidi);
      expect(rest.status).toBe(403);
      expect(await callTool(nobody, 'crm_org_v1_0_get', {})).toMatchObject({ isError: true, body: rest.body });
    } finally {
      await nobody.close();
    }
  });
});
