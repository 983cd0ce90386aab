import { Agent } from 'node:http';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BuiltServer, startBuiltServer } from '../support/built-server.js';
import { formBody, send } from '../support/http.js';
import { ownDatabase } from '../support/own-database.js';

/**
 * No lost update (issue 44, docs/internals/contract.md §15): two built servers on one database, and in each of
 * 1,000 rounds two clients change one order at once through the demo's `PUT shop/v1.0/order`, one through each
 * server, both with the ETag the last change answered. Each round exactly one change runs (200) and the other is
 * refused (412), so the version counts the rounds and the order's history holds one change per round.
 */
const ROUNDS = 1000;
let databaseUrl = '';
const servers: BuiltServer[] = [];
const agents = [new Agent({ keepAlive: true }), new Agent({ keepAlive: true })];

beforeAll(async () => {
  databaseUrl = await ownDatabase('lost_updates');
  for (let i = 0; i < 2; i++) servers.push(await startBuiltServer({ env: { DATABASE_URL: databaseUrl } }));
}, 120_000);

afterAll(async () => {
  for (const agent of agents) agent.destroy();
  for (const server of servers) await server.stop();
});

describe('two concurrent conditional updates with the same ETag, on two servers', () => {
  it(`answer exactly one 200 and one 412 in each of ${ROUNDS} rounds, and the version counts the rounds`, async () => {
    const login = await send(`${servers[0]!.url}/shop/`, { method: 'POST', ...formBody({ auth: 'bearer', userid: 'alice', password: 'alice-pass' }) });
    expect(login.status).toBe(200);
    const authorization = `Bearer ${(login.json() as { token: string }).token}`;
    const placed = await send(`${servers[0]!.url}/shop/v1.0/orders`, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/json' },
      body: JSON.stringify({ product_id: 2, quantity: 1 }),
    });
    expect(placed.status).toBe(201);
    const orderId = (placed.json() as { order: { insertId: number } }).order.insertId;
    const change = (side: 0 | 1, tag: string, quantity: number) =>
      send(`${servers[side]!.url}/shop/v1.0/order`, {
        method: 'PUT',
        agent: agents[side],
        headers: { authorization, 'content-type': 'application/json', 'if-match': tag },
        body: JSON.stringify({ order_id: orderId, quantity }),
      });

    // The first tag is the one a GET of the order answers (its <Validator> reads the version): what If-Match compares.
    const read = await send(`${servers[0]!.url}/shop/v1.0/order?order_id=${orderId}`, { agent: agents[0], headers: { authorization } });
    expect({ status: read.status, etag: read.headers.etag }).toEqual({ status: 200, etag: '"0"' });
    let tag = read.headers.etag as string;
    const outcomes: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const answers = await Promise.all([change(0, tag, 2 * round + 1), change(1, tag, 2 * round + 2)]);
      const statuses = answers.map((answer) => answer.status);
      const won = answers.find((answer) => answer.status === 200);
      const lost = answers.find((answer) => answer.status === 412);
      // The loser is told the version the winner made: what it would send to try again.
      if (won === undefined || lost === undefined || won.headers.etag !== lost.headers.etag) {
        outcomes.push(`round ${round}: ${statuses.join(' ')} ${answers.map((answer) => `${answer.headers.etag} ${answer.text}`).join(' | ')}`);
      }
      expect(outcomes).toEqual([]);
      tag = won!.headers.etag as string;
      expect(tag).toBe(`"${round + 1}"`);
    }

    const db = await mysql.createConnection({ uri: databaseUrl });
    try {
      const [rows] = await db.query<mysql.RowDataPacket[]>(
        'select cast(version as char) as version, (select count(*) from order_changes c where c.order_id = o.order_id) as changes from orders o where order_id = ?',
        [orderId],
      );
      expect({ version: String(rows[0]!.version), changes: Number(rows[0]!.changes) }).toEqual({ version: String(ROUNDS), changes: ROUNDS });
    } finally {
      await db.end();
    }
  }, 600_000);
});
