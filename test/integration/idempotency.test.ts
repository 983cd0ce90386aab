import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import path from 'node:path';
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyStore } from '../../console/keys.js';
import { recordId } from '../../runtime/idempotency/index.js';
import { connectTo } from '../../scripts/connection.js';
import { addUser, queryableOf } from '../../scripts/schema.js';
import { type BuiltServer, startBuiltServer } from '../support/built-server.js';
import { basicHeader, formBody, type RawResponse, send } from '../support/http.js';
import { ownDatabase } from '../support/own-database.js';
import { buildScratchProject } from '../support/scratch-project.js';

/**
 * Idempotency-Key on POSTs (docs/internals/contract.md §15, issue 44 point 3) over HTTP against two built servers
 * on one database: a retry answered from the record the first request's own transaction wrote, by either server and
 * after a restart; another body 422; a first use still running 409; a failed request leaves no record; keys of two
 * callers apart; an answer with a token never recorded; records pruned.
 */
const ROOT = path.resolve('test/.tmp/idempotency');
const ALICE = basicHeader('id-alice', 'id-alice-pass');
const BOB = basicHeader('id-bob', 'id-bob-pass');
let databaseUrl = '';
let connection: mysql.Connection;
let first: BuiltServer;
let second: BuiltServer;
let aliceId = 0;
let bobId = 0;

beforeAll(async () => {
  databaseUrl = await ownDatabase('idempotency');
  connection = await connectTo(databaseUrl);
  await connection.query(
    'create table idem_orders (order_id int unsigned not null auto_increment primary key, user_id int not null, item varchar(40) not null, qty int not null)',
  );
  await connection.query('create table idem_tags (tag varchar(40) not null primary key)');
  await connection.query('create table idem_log (id int unsigned not null auto_increment primary key, who varchar(190) not null)');
  aliceId = await addUser(connection, 'id-alice', 'id-alice-pass', ['buyer']);
  bobId = await addUser(connection, 'id-bob', 'id-bob-pass', ['buyer']);
  await buildScratchProject(ROOT, {
    databaseUrl,
    files: {
      'resources/idem/backend.xml': '<Backend xmlns="urn:xmlrest:resource:1.0" auth_scheme="Basic" api_keys="on"/>\n',
      // An order, then its tag (unique: a later step that can fail), then the order as written.
      'resources/idem/orders.xml': `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0" auth="buyer">
  <Request method="POST" status="201">
    <Sql id="placed" output="false">insert into idem_orders (user_id, item, qty) values ($uid, $item, $qty)</Sql>
    <Sql id="tagged" output="false">insert into idem_tags (tag) values ($tag)</Sql>
    <Sql id="order">select order_id, item, qty from idem_orders where order_id = $[placed][0].insertId</Sql>
  </Request>
</Resource>
`,
      'resources/idem/required.xml': `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0" auth="buyer">
  <Request method="POST" status="201" idempotency="required">
    <Sql id="logged">insert into idem_log (who) values ($who)</Sql>
  </Request>
</Resource>
`,
      // A POST that only reads: no transaction, so no record.
      'resources/idem/lookup.xml': `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0" auth="buyer">
  <Request method="POST">
    <Sql id="found">select count(*) as n from idem_orders where item = $item</Sql>
  </Request>
</Resource>
`,
      'resources/idtok/backend.xml': '<Backend xmlns="urn:xmlrest:resource:1.0" auth_scheme="Bearer"/>\n',
      // A token request that writes: a transaction, and an answer with a token in it.
      'resources/idtok/token.xml': `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0">
  <Request method="POST" status="201">
    <Sql id="authQuery" output="false">select cast(u.user_id as char) as sub, r.role_name as aud, u.pass_word from usr_role r inner join usr u on r.user_id = u.user_id where u.user_name = $user</Sql>
    <Sql id="seen" output="false">insert into idem_log (who) values ($user)</Sql>
    <Execute id="token" output="true" classname="xmlrest.auth.TokenGenerator">
      <Arg name="aud" value="$[authQuery][0].aud"/>
      <Arg name="sub" value="$[authQuery][0].sub"/>
      <Arg name="password" value="$pass"/>
      <Arg name="hash" value="$[authQuery][0].pass_word"/>
      <Arg name="user" value="$user"/>
    </Execute>
  </Request>
</Resource>
`,
    },
  });
  [first, second] = await Promise.all([startServer(), startServer()]);
}, 240_000);

afterAll(async () => {
  await first?.stop();
  await second?.stop();
  await connection?.end();
  rmSync(ROOT, { recursive: true, force: true });
});

function startServer(env: Record<string, string> = {}): Promise<BuiltServer> {
  return startBuiltServer({ root: ROOT, env: { DATABASE_URL: databaseUrl, ...env } });
}

/** A fresh key, so that the tests share nothing. */
const newKey = () => `k-${randomBytes(12).toString('base64url')}`;

/** Alice's order, by password unless `headers` say otherwise (an undefined header is not sent). */
function order(server: BuiltServer, body: object, headers: Record<string, string | undefined>): Promise<RawResponse> {
  const sent = Object.entries({ authorization: ALICE, 'content-type': 'application/json', ...headers }).filter(([, value]) => value !== undefined);
  return send(`${server.url}/idem/v1.0/orders`, {
    method: 'POST',
    headers: Object.fromEntries(sent) as Record<string, string>,
    body: JSON.stringify(body),
  });
}

async function count(sql: string, values: unknown[] = []): Promise<number> {
  const [rows] = await connection.query(sql, values);
  return Number((rows as { n: number }[])[0]!.n);
}

const orders = () => count('select count(*) as n from idem_orders');

async function recordOf(backend: string, caller: string, key: string): Promise<{ status: number | null; body: string | null } | undefined> {
  const [rows] = await connection.query('select status, body from xmlrest_idempotency where id = ?', [recordId(backend, caller, key)]);
  return (rows as { status: number | null; body: string | null }[])[0];
}

describe('Idempotency-Key on a POST', () => {
  it('a retry with the same key and body answers the first status and body, marked as a replay, and writes nothing more', async () => {
    const key = newKey();
    const before = await orders();
    const placed = await order(first, { item: 'pen', qty: 2, tag: `t-${key}` }, { 'idempotency-key': key });
    expect(placed.status).toBe(201);
    expect(placed.headers['idempotent-replayed']).toBeUndefined();
    expect(await orders()).toBe(before + 1);
    // The body's members in another order are the same request.
    const again = await order(first, { tag: `t-${key}`, qty: 2, item: 'pen' }, { 'idempotency-key': key });
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(again.text).toBe(placed.text);
    expect(await orders()).toBe(before + 1);
    // The record holds the answer as sent, under a digest of backend, caller and key: the key is nowhere in the clear.
    expect(await recordOf('idem', `u:${aliceId}`, key)).toEqual({ status: 201, body: placed.text });
    expect(await count('select count(*) as n from xmlrest_idempotency where body like ? or id like ?', [`%${key}%`, `%${key}%`])).toBe(0);
  });

  it("another server replays the first's answer, and so does the first after a restart", async () => {
    const key = newKey();
    const placed = await order(first, { item: 'ink', qty: 1, tag: `t-${key}` }, { 'idempotency-key': key });
    expect(placed.status).toBe(201);
    const before = await orders();
    const elsewhere = await order(second, { item: 'ink', qty: 1, tag: `t-${key}` }, { 'idempotency-key': key });
    expect([elsewhere.status, elsewhere.headers['idempotent-replayed'], elsewhere.text]).toEqual([201, 'true', placed.text]);
    await first.stop();
    first = await startServer();
    const restarted = await order(first, { item: 'ink', qty: 1, tag: `t-${key}` }, { 'idempotency-key': key });
    expect([restarted.status, restarted.headers['idempotent-replayed'], restarted.text]).toEqual([201, 'true', placed.text]);
    expect(await orders()).toBe(before);
  });

  it('the same key with another body, or on another route, is 422 and writes nothing', async () => {
    const key = newKey();
    expect((await order(first, { item: 'pad', qty: 1, tag: `t-${key}` }, { 'idempotency-key': key })).status).toBe(201);
    const before = await orders();
    const other = await order(second, { item: 'pad', qty: 5, tag: `t-${key}` }, { 'idempotency-key': key });
    expect(other.status).toBe(422);
    expect(other.json()).toEqual({ message: 'This Idempotency-Key was used with another request', status: 422 });
    expect(other.headers['idempotent-replayed']).toBeUndefined();
    const query = await send(`${first.url}/idem/v1.0/orders?x=1`, {
      method: 'POST',
      headers: { authorization: ALICE, 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify({ item: 'pad', qty: 1, tag: `t-${key}` }),
    });
    expect(query.status).toBe(422);
    const route = await send(`${first.url}/idem/v1.0/required`, {
      method: 'POST',
      headers: { authorization: ALICE, 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify({ who: 'pad' }),
    });
    expect(route.status).toBe(422);
    expect(await orders()).toBe(before);
  });

  it('two concurrent first uses: one 201 and one 409 with Retry-After; the retry once the first has committed replays it', async () => {
    const key = newKey();
    const tag = `gate-${key}`;
    // The test holds the tag's lock, so that the first use waits inside its transaction, after its claim, until released.
    const gate = await connectTo(databaseUrl);
    try {
      await gate.query('start transaction');
      await gate.query('insert into idem_tags (tag) values (?)', [tag]);
      const body = { item: 'cup', qty: 1, tag };
      const firstUse = order(first, body, { 'idempotency-key': key });
      // Until the first use waits on the tag's lock (it has claimed its key by then: the claim is its first statement).
      const since = Date.now();
      // The processlist shows the threads of the test's own database user (the server's) without the PROCESS privilege.
      const waiting = "select count(*) as n from information_schema.processlist where db = database() and info like 'insert into idem\\_tags%'";
      while ((await count(waiting)) === 0) {
        if (Date.now() - since > 30_000) throw new Error('the first use never waited on the tag');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const concurrent = await order(second, body, { 'idempotency-key': key });
      expect(concurrent.status).toBe(409);
      expect(concurrent.headers['retry-after']).toBe('1');
      expect(concurrent.json()).toEqual({ message: 'A request with this Idempotency-Key is still running', status: 409 });
      await gate.query('rollback');
      const placed = await firstUse;
      expect(placed.status).toBe(201);
      const retry = await order(second, body, { 'idempotency-key': key });
      expect([retry.status, retry.headers['idempotent-replayed'], retry.text]).toEqual([201, 'true', placed.text]);
    } finally {
      await gate.end();
    }
  });

  it('a request that fails (a later step meets a unique key: 409) leaves no record, and its retry runs again', async () => {
    const key = newKey();
    const tag = `taken-${key}`;
    await connection.query('insert into idem_tags (tag) values (?)', [tag]);
    const before = await orders();
    const failed = await order(first, { item: 'mug', qty: 1, tag }, { 'idempotency-key': key });
    expect(failed.status).toBe(409);
    expect(await recordOf('idem', `u:${aliceId}`, key)).toBeUndefined();
    expect(await orders()).toBe(before);
    await connection.query('delete from idem_tags where tag = ?', [tag]);
    const retried = await order(second, { item: 'mug', qty: 1, tag }, { 'idempotency-key': key });
    expect(retried.status).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    expect(await orders()).toBe(before + 1);
    expect((await recordOf('idem', `u:${aliceId}`, key))?.status).toBe(201);
  });

  it('idempotency="required" answers 400 without a key, and runs with one', async () => {
    const logged = () => count('select count(*) as n from idem_log');
    const before = await logged();
    const post = (headers: Record<string, string>) =>
      send(`${first.url}/idem/v1.0/required`, {
        method: 'POST',
        headers: { authorization: ALICE, ...formBody({ who: 'req' }).headers, ...headers },
        body: 'who=req',
      });
    const without = await post({});
    expect(without.status).toBe(400);
    expect(without.json()).toEqual({ message: 'This request requires an Idempotency-Key header', status: 400 });
    expect(await logged()).toBe(before);
    const key = newKey();
    expect((await post({ 'idempotency-key': key })).status).toBe(201);
    expect((await post({ 'idempotency-key': key })).headers['idempotent-replayed']).toBe('true');
    expect(await logged()).toBe(before + 1);
  });

  it('a key that is not 1-255 printable ASCII characters is 400, and nothing runs', async () => {
    const before = await orders();
    for (const bad of ['', 'a b', 'k'.repeat(256), 'caf\u00e9', 'tab\there']) {
      const answer = await order(first, { item: 'bad', qty: 1, tag: `t-${newKey()}` }, { 'idempotency-key': bad });
      expect(answer.status, JSON.stringify(bad)).toBe(400);
      expect(answer.json()).toEqual({ message: 'Idempotency-Key must be 1 to 255 printable ASCII characters', status: 400 });
    }
    expect(await orders()).toBe(before);
    // The longest key is taken.
    expect((await order(first, { item: 'long', qty: 1, tag: `t-${newKey()}` }, { 'idempotency-key': 'k'.repeat(255) })).status).toBe(201);
  });

  it("one key from two users is two records: neither is answered the other's", async () => {
    const key = newKey();
    const alice = await order(first, { item: 'box', qty: 1, tag: `a-${key}` }, { 'idempotency-key': key });
    const bob = await order(first, { item: 'box', qty: 1, tag: `a-${key}-b` }, { 'idempotency-key': key, authorization: BOB });
    expect([alice.status, bob.status]).toEqual([201, 201]);
    expect(bob.headers['idempotent-replayed']).toBeUndefined();
    expect(bob.text).not.toBe(alice.text);
    // Bob with Alice's very body is no replay of hers, and no 422: his own first use.
    const bobSame = await order(second, { item: 'box', qty: 1, tag: `a-${key}-c` }, { 'idempotency-key': newKey(), authorization: BOB });
    expect(bobSame.status).toBe(201);
    expect((await recordOf('idem', `u:${aliceId}`, key))?.body).toBe(alice.text);
    expect((await recordOf('idem', `u:${bobId}`, key))?.body).toBe(bob.text);
  });

  it("an API key's calls are a caller of their own: its user's same key by password is another record", async () => {
    const { key: apiKey } = await new KeyStore(queryableOf(connection)).create({
      backend: 'idem',
      userId: String(aliceId),
      name: 'idempotency test',
      roles: ['buyer'],
      expires: null,
      rate: null,
    });
    const key = newKey();
    const keyed = await order(first, { item: 'jar', qty: 1, tag: `k-${key}` }, { 'idempotency-key': key, authorization: undefined, 'x-api-key': apiKey });
    expect(keyed.status).toBe(201);
    const byPassword = await order(second, { item: 'jar', qty: 1, tag: `p-${key}` }, { 'idempotency-key': key });
    expect([byPassword.status, byPassword.headers['idempotent-replayed']]).toEqual([201, undefined]);
    const again = await order(second, { item: 'jar', qty: 1, tag: `k-${key}` }, { 'idempotency-key': key, authorization: undefined, 'x-api-key': apiKey });
    expect([again.status, again.headers['idempotent-replayed'], again.text]).toEqual([201, 'true', keyed.text]);
  });

  it('a token request with a key is never recorded: it runs again, and no token is stored', async () => {
    const key = newKey();
    const seen = () => count("select count(*) as n from idem_log where who = 'id-alice'");
    const before = await seen();
    const request = () =>
      send(`${first.url}/idtok/v1.0/token`, {
        method: 'POST',
        headers: { ...formBody({}).headers, 'idempotency-key': key },
        body: 'user=id-alice&pass=id-alice-pass',
      });
    const one = await request();
    const two = await request();
    expect([one.status, two.status]).toEqual([201, 201]);
    expect(two.headers['idempotent-replayed']).toBeUndefined();
    expect(await seen()).toBe(before + 2);
    expect(await recordOf('idtok', 'public', key)).toBeUndefined();
    const token = (one.json() as { token: string }).token;
    expect(token.length).toBeGreaterThan(20);
    const [rows] = await connection.query('select body from xmlrest_idempotency');
    for (const { body } of rows as { body: string | null }[]) expect(body ?? '').not.toContain(token.split('.')[2]);
  });

  it('a POST that only reads runs no transaction: it takes no record', async () => {
    const key = newKey();
    const lookup = () =>
      send(`${first.url}/idem/v1.0/lookup`, {
        method: 'POST',
        headers: { authorization: ALICE, ...formBody({}).headers, 'idempotency-key': key },
        body: 'item=pen',
      });
    const one = await lookup();
    expect(one.status).toBe(200);
    expect((await lookup()).headers['idempotent-replayed']).toBeUndefined();
    expect(await recordOf('idem', `u:${aliceId}`, key)).toBeUndefined();
  });
});

describe('idempotency records', () => {
  it('are pruned after IDEMPOTENCY_RETENTION_SECONDS, and younger ones kept', async () => {
    expect(await count('select count(*) as n from xmlrest_idempotency')).toBeGreaterThan(0);
    // A record that is young for as long as this test runs: it stays.
    const young = randomBytes(32);
    await connection.query('insert into xmlrest_idempotency (id, fingerprint, status, body, created_at) values (?, ?, 201, ?, now(3) + interval 1 day)', [
      young,
      randomBytes(32),
      '{}',
    ]);
    await first.stop();
    await second.stop();
    first = await startServer({ IDEMPOTENCY_RETENTION_SECONDS: '1' });
    const since = Date.now();
    while ((await count('select count(*) as n from xmlrest_idempotency where created_at < now(3)')) > 0) {
      if (Date.now() - since > 60_000) throw new Error('the records were never pruned');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(await count('select count(*) as n from xmlrest_idempotency where id = ?', [young])).toBe(1);
    second = await startServer();
  }, 120_000);
});
