import { Agent } from 'node:http';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BuiltServer, startBuiltServer } from '../support/built-server.js';
import { formBody, type RawResponse, send } from '../support/http.js';
import { ownDatabase } from '../support/own-database.js';

/**
 * Conditional writes (docs/internals/contract.md §15) over HTTP against the built server: the demo's
 * `PUT shop/v1.0/order` (version="version", if_match="required") writes the order's history, then changes its
 * quantity only while its version is the one If-Match names.
 */
let databaseUrl = '';
let server: BuiltServer;
let db: mysql.Connection;
const agent = new Agent({ keepAlive: true });
const tokens = new Map<string, string>();

beforeAll(async () => {
  databaseUrl = await ownDatabase('conditional_writes');
  server = await startBuiltServer({ env: { DATABASE_URL: databaseUrl } });
  db = await mysql.createConnection({ uri: databaseUrl });
}, 120_000);

afterAll(async () => {
  agent.destroy();
  await db?.end();
  await server?.stop();
});

async function token(user: string): Promise<string> {
  const known = tokens.get(user);
  if (known) return known;
  const response = await send(`${server.url}/shop/`, { method: 'POST', agent, ...formBody({ auth: 'bearer', userid: user, password: `${user}-pass` }) });
  expect(response.status).toBe(200);
  const made = `Bearer ${(response.json() as { token: string }).token}`;
  tokens.set(user, made);
  return made;
}

/** A new order of `user`'s (version 0), by the demo's POST. */
async function placeOrder(user = 'alice'): Promise<number> {
  const response = await send(`${server.url}/shop/v1.0/orders`, {
    method: 'POST',
    agent,
    headers: { authorization: await token(user), 'content-type': 'application/json' },
    body: JSON.stringify({ product_id: 2, quantity: 1 }),
  });
  expect(response.status).toBe(201);
  return (response.json() as { order: { insertId: number } }).order.insertId;
}

async function change(orderId: number, quantity: number, ifMatch: string | undefined, user = 'alice'): Promise<RawResponse> {
  return send(`${server.url}/shop/v1.0/order`, {
    method: 'PUT',
    agent,
    headers: { authorization: await token(user), 'content-type': 'application/json', ...(ifMatch === undefined ? {} : { 'if-match': ifMatch }) },
    body: JSON.stringify({ order_id: orderId, quantity }),
  });
}

async function row(orderId: number): Promise<{ quantity: number; version: string; changes: number }> {
  const [rows] = await db.query<mysql.RowDataPacket[]>(
    'select quantity, cast(version as char) as version, (select count(*) from order_changes c where c.order_id = o.order_id) as changes from orders o where order_id = ?',
    [orderId],
  );
  const found = rows[0]!;
  return { quantity: Number(found.quantity), version: String(found.version), changes: Number(found.changes) };
}

describe('a versioned write', () => {
  it('runs with the current version: 200, the ETag of the next version, the version moved on', async () => {
    const order = await placeOrder();
    const first = await change(order, 2, '"0"');
    expect(first.status).toBe(200);
    expect(first.headers.etag).toBe('"1"');
    expect(await row(order)).toEqual({ quantity: 2, version: '1', changes: 1 });
    // The tag it answered is the one the next change names.
    const second = await change(order, 3, first.headers.etag as string);
    expect(second.status).toBe(200);
    expect(second.headers.etag).toBe('"2"');
    expect(await row(order)).toEqual({ quantity: 3, version: '2', changes: 2 });
  });

  it("takes the ETag its GET answered (the Validator reads the version): a change with it runs, the GET's next tag is the new version, and the old one is 412", async () => {
    const order = await placeOrder();
    const read = async (ifNoneMatch?: string) =>
      send(`${server.url}/shop/v1.0/order?order_id=${order}`, {
        agent,
        headers: { authorization: await token('alice'), ...(ifNoneMatch === undefined ? {} : { 'if-none-match': ifNoneMatch }) },
      });
    const first = await read();
    expect({ status: first.status, etag: first.headers.etag }).toEqual({ status: 200, etag: '"0"' });
    expect((first.json() as { order: { quantity: number }[] }).order[0]!.quantity).toBe(1);
    expect((await read('"0"')).status).toBe(304);
    const changed = await change(order, 4, first.headers.etag as string);
    expect({ status: changed.status, etag: changed.headers.etag }).toEqual({ status: 200, etag: '"1"' });
    const second = await read('"0"');
    expect({ status: second.status, etag: second.headers.etag }).toEqual({ status: 200, etag: '"1"' });
    expect((await read('"1"')).status).toBe(304);
    expect((await change(order, 5, first.headers.etag as string)).status).toBe(412);
    expect(await row(order)).toEqual({ quantity: 4, version: '1', changes: 1 });
  });

  it('answers 412 with the current ETag to a stale tag, and the whole request is rolled back (its history step too)', async () => {
    const order = await placeOrder();
    expect((await change(order, 2, '"0"')).status).toBe(200);
    const stale = await change(order, 5, '"0"');
    expect(stale.status).toBe(412);
    expect(stale.json()).toEqual({ message: 'Precondition failed: the resource has changed since the ETag you sent', status: 412 });
    expect(stale.headers.etag).toBe('"1"');
    // Neither the quantity nor the history step before the versioned one: one change, the first.
    expect(await row(order)).toEqual({ quantity: 2, version: '1', changes: 1 });
  });

  it('answers 428 without If-Match on a route that requires it, and changes nothing', async () => {
    const order = await placeOrder();
    const response = await change(order, 4, undefined);
    expect(response.status).toBe(428);
    expect(response.json()).toEqual({ message: 'Precondition required: send If-Match with the ETag of the version you change', status: 428 });
    expect(await row(order)).toEqual({ quantity: 1, version: '0', changes: 0 });
  });

  it('answers 404 for a row that is not there (another user’s order is not there either), and 412 under If-Match: *', async () => {
    const missing = await change(999_999_999, 2, '"0"');
    expect(missing.status).toBe(404);
    expect(missing.json()).toEqual({ message: 'Not found', status: 404 });
    const bobs = await placeOrder('bob');
    const foreign = await change(bobs, 7, '"0"', 'alice');
    expect(foreign.status).toBe(404);
    expect(foreign.headers.etag).toBeUndefined();
    expect(await row(bobs)).toEqual({ quantity: 1, version: '0', changes: 0 });
    const any = await change(999_999_999, 2, '*');
    expect(any.status).toBe(412);
    expect(any.headers.etag).toBeUndefined();
  });

  it('runs under If-Match: * when the row is there, moving the version on', async () => {
    const order = await placeOrder();
    const response = await change(order, 6, '*');
    expect(response.status).toBe(200);
    expect(await row(order)).toEqual({ quantity: 6, version: '1', changes: 1 });
  });

  it('never matches a weak tag, a digest, a list or a malformed tag (strong comparison): 412, nothing changed', async () => {
    const order = await placeOrder();
    for (const tag of ['W/"0"', '"q2V8Yk1m7Qx0aZb3Lw9sTnRfUcE"', '"0", "1"', '0', '"00"', '"-1"', '"18446744073709551616"']) {
      const response = await change(order, 9, tag);
      expect({ tag, status: response.status }).toEqual({ tag, status: 412 });
    }
    expect(await row(order)).toEqual({ quantity: 1, version: '0', changes: 0 });
  });

  it('refuses If-Match on a write that has no version column (400), rather than ignore it', async () => {
    const response = await send(`${server.url}/shop/v1.0/orders`, {
      method: 'POST',
      agent,
      headers: { authorization: await token('alice'), 'content-type': 'application/json', 'if-match': '"0"' },
      body: JSON.stringify({ product_id: 2, quantity: 1 }),
    });
    expect(response.status).toBe(400);
    expect(response.json()).toEqual({ message: 'If-Match is not taken here: this write has no version column to compare', status: 400 });
  });
});
