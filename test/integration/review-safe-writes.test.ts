import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import path from 'node:path';
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateProject } from '../../generator/index.js';
import { validatorText } from '../../runtime/conditional/reads.js';
import { digestTag } from '../../runtime/conditional/tags.js';
import { connectTo } from '../../scripts/connection.js';
import { addUser } from '../../scripts/schema.js';
import { type BuiltServer, startBuiltServer } from '../support/built-server.js';
import { basicHeader, type RawResponse, send } from '../support/http.js';
import { ownDatabase } from '../support/own-database.js';
import { buildScratchProject } from '../support/scratch-project.js';

/**
 * An adversarial review of issue 44's safe writes (docs/internals/contract.md §15), over HTTP against the built
 * server: what a batch, an Idempotency-Key, an ETag or a versioned write lets a caller do that a lone, careful
 * request could not. Each attack is a test; those that hold are kept as proof that they hold.
 */
const ROOT = path.resolve('test/.tmp/review-safe-writes');
const ALICE = basicHeader('rv-alice', 'rv-alice-pass');
const BOB = basicHeader('rv-bob', 'rv-bob-pass');
let databaseUrl = '';
let connection: mysql.Connection;
let server: BuiltServer;
let aliceId = 0;
let bobId = 0;

const NS = 'xmlns="urn:xmlrest:resource:1.0"';
const files = {
  'resources/rv/backend.xml': `<Backend ${NS} auth_scheme="Basic" batch="on"/>\n`,
  // Each caller's own notes, read under their version and changed under it.
  'resources/rv/notes.xml': `<Resource ${NS} v="1.0" auth="clerk">
  <Request method="GET">
    <Validator>select n.version from rv_notes n where n.note_id = $id and n.user_id = $uid</Validator>
    <Sql id="note">select n.note_id, n.body, n.version from rv_notes n where n.note_id = $id and n.user_id = $uid</Sql>
  </Request>
  <Request method="PUT" version="version">
    <Sql id="changed">update rv_notes n set n.body = $body where n.note_id = $id and n.user_id = $uid</Sql>
  </Request>
</Resource>
`,
  // A write with no version column: If-Match on it is refused (400), never ignored.
  'resources/rv/memos.xml': `<Resource ${NS} v="1.0" auth="clerk">
  <Request method="PUT">
    <Sql id="changed">update rv_memos set body = $body where memo_id = $id</Sql>
  </Request>
</Resource>
`,
  // A POST that must carry an Idempotency-Key.
  'resources/rv/charges.xml': `<Resource ${NS} v="1.0" auth="clerk">
  <Request method="POST" status="201" idempotency="required">
    <Sql id="charged">insert into rv_memos (body) values ($body)</Sql>
  </Request>
</Resource>
`,
  // A versioned write whose where is the caller's rows, not one row.
  'resources/rv/items.xml': `<Resource ${NS} v="1.0" auth="clerk">
  <Request method="PUT" version="version">
    <Sql id="changed">update rv_items i set i.qty = $qty where i.user_id = $uid</Sql>
  </Request>
</Resource>
`,
  // A versioned write beside a GET with no <Validator>: the GET's ETag is a digest of its bytes.
  'resources/rv/drafts.xml': `<Resource ${NS} v="1.0" auth="clerk">
  <Request method="GET">
    <Sql id="draft">select d.note_id, d.body, d.version from rv_notes d where d.note_id = $id and d.user_id = $uid</Sql>
  </Request>
  <Request method="PUT" version="version" if_match="required">
    <Sql id="changed">update rv_notes d set d.body = $body where d.note_id = $id and d.user_id = $uid</Sql>
  </Request>
</Resource>
`,
  // A Validator that forgets the owner its step keeps to: the version of anyone's note, whoever asks.
  'resources/rv/peeks.xml': `<Resource ${NS} v="1.0" auth="clerk">
  <Request method="GET">
    <Validator>select n.version from rv_notes n where n.note_id = $id</Validator>
    <Sql id="note">select n.note_id, n.body from rv_notes n where n.note_id = $id and n.user_id = $uid</Sql>
  </Request>
</Resource>
`,
};

beforeAll(async () => {
  databaseUrl = await ownDatabase('review_safe_writes');
  connection = await connectTo(databaseUrl);
  await connection.query(`create table rv_notes (note_id int unsigned not null auto_increment primary key, user_id int not null,
    body varchar(100) not null, version bigint unsigned not null default 0)`);
  await connection.query('create table rv_memos (memo_id int unsigned not null auto_increment primary key, body varchar(100) not null)');
  await connection.query(`create table rv_items (item_id int unsigned not null auto_increment primary key, user_id int not null,
    qty int not null, version bigint unsigned not null default 0)`);
  aliceId = await addUser(connection, 'rv-alice', 'rv-alice-pass', ['clerk']);
  bobId = await addUser(connection, 'rv-bob', 'rv-bob-pass', ['clerk']);
  await buildScratchProject(ROOT, { databaseUrl, files });
  server = await startBuiltServer({ root: ROOT, env: { DATABASE_URL: databaseUrl } });
}, 240_000);

afterAll(async () => {
  await server?.stop();
  await connection?.end();
  rmSync(ROOT, { recursive: true, force: true });
});

type Operation = { method: string; path: string; body?: Record<string, unknown>; headers?: Record<string, string> };

function call(method: string, route: string, body: object | undefined, headers: Record<string, string> = {}): Promise<RawResponse> {
  return send(`${server.url}${route}`, {
    method,
    headers: { authorization: ALICE, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

const batch = (operations: Operation[], headers: Record<string, string> = {}): Promise<RawResponse> => call('POST', '/rv/batch', { operations }, headers);

async function one<Row>(sql: string, values: unknown[]): Promise<Row> {
  const [rows] = await connection.query(sql, values);
  return (rows as Row[])[0]!;
}

async function insert(sql: string, values: unknown[]): Promise<number> {
  const [result] = await connection.query(sql, values);
  return (result as { insertId: number }).insertId;
}

const memoBody = async (id: number) => (await one<{ body: string }>('select body from rv_memos where memo_id = ?', [id])).body;
const newKey = () => `rv-${randomBytes(12).toString('base64url')}`;

describe('a batch takes no operation a lone call could not make', () => {
  it('If-Match on an unversioned write in a batch is refused as alone (400), not ignored into an unconditional overwrite', async () => {
    const memo = await insert('insert into rv_memos (body) values (?)', ['first']);
    // Alone: the precondition cannot be compared, so the write is refused and nothing changes.
    const alone = await call('PUT', '/rv/v1.0/memos', { id: memo, body: 'alone' }, { 'if-match': '"7"' });
    expect(alone.status, alone.text).toBe(400);
    expect(await memoBody(memo)).toBe('first');
    // In a batch, the same operation with the same If-Match: the client believes its write is conditional.
    const batched = await batch([{ method: 'PUT', path: '/rv/v1.0/memos', body: { id: memo, body: 'overwritten' }, headers: { 'If-Match': '"7"' } }]);
    expect(batched.status, batched.text).toBe(400);
    expect(await memoBody(memo)).toBe('first');
  });

  it('a POST whose route requires an Idempotency-Key is refused in a batch sent without one (400), as alone', async () => {
    const before = await one<{ n: number }>("select count(*) as n from rv_memos where body = 'charge'", []);
    const alone = await call('POST', '/rv/v1.0/charges', { body: 'charge' });
    expect(alone.status, alone.text).toBe(400);
    const batched = await batch([{ method: 'POST', path: '/rv/v1.0/charges', body: { body: 'charge' } }]);
    expect(batched.status, batched.text).toBe(400);
    expect(await one<{ n: number }>("select count(*) as n from rv_memos where body = 'charge'", [])).toEqual(before);
    // With a key on the batch it runs, once: its retry is a replay.
    const key = newKey();
    const keyed = await batch([{ method: 'POST', path: '/rv/v1.0/charges', body: { body: 'keyed charge' } }], { 'idempotency-key': key });
    expect(keyed.status, keyed.text).toBe(200);
    const again = await batch([{ method: 'POST', path: '/rv/v1.0/charges', body: { body: 'keyed charge' } }], { 'idempotency-key': key });
    expect([again.status, again.headers['idempotent-replayed'], again.text]).toEqual([200, 'true', keyed.text]);
    expect(await one<{ n: number }>("select count(*) as n from rv_memos where body = 'keyed charge'", [])).toEqual({ n: 1 });
  });

  it("one batch's Idempotency-Key never answers another caller's batch, nor a lone call of the same caller", async () => {
    const key = newKey();
    const operations = [{ method: 'POST', path: '/rv/v1.0/charges', body: { body: `shared ${key}` } }];
    const alices = await batch(operations, { 'idempotency-key': key });
    expect(alices.status, alices.text).toBe(200);
    const bobs = await batch(operations, { 'idempotency-key': key, authorization: BOB });
    expect([bobs.status, bobs.headers['idempotent-replayed']]).toEqual([200, undefined]);
    expect(bobs.text).not.toBe(alices.text);
    // The same caller's key on a lone request is another request: 422, never the batch's answer.
    const lone = await call('POST', '/rv/v1.0/charges', { body: `shared ${key}` }, { 'idempotency-key': key });
    expect(lone.status, lone.text).toBe(422);
  });
});

describe('an Idempotency-Key on a body nested deep', () => {
  // 200 KB of brackets, within the 1 MB body limit: JSON.parse takes it, and the fingerprint's canonical text recursed.
  const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
  const post = (route: string, text: string, keyed = true) =>
    send(`${server.url}${route}`, {
      method: 'POST',
      headers: { authorization: ALICE, 'content-type': 'application/json', ...(keyed ? { 'idempotency-key': newKey() } : {}) },
      body: text,
    });

  it('is a 400 on a lone POST, not a 500, and nothing is written', async () => {
    const answer = await post('/rv/v1.0/charges', `{"body": "deep lone", "deep": ${deep}}`);
    expect(answer.status, answer.text).toBe(400);
    expect(await one<{ n: number }>("select count(*) as n from rv_memos where body = 'deep lone'", [])).toEqual({ n: 0 });
  });

  it('is a 400 on a batch, not a 500, and nothing is written', async () => {
    const answer = await post('/rv/batch', `{"operations": [{"method": "POST", "path": "/rv/v1.0/charges", "body": {"body": "deep batch", "deep": ${deep}}}]}`);
    expect(answer.status, answer.text).toBe(400);
    expect(await one<{ n: number }>("select count(*) as n from rv_memos where body = 'deep batch'", [])).toEqual({ n: 0 });
  });

  it('without a key, on a lone PUT, is no 500', async () => {
    const answer = await send(`${server.url}/rv/v1.0/memos`, {
      method: 'PUT',
      headers: { authorization: ALICE, 'content-type': 'application/json' },
      body: `{"id": 0, "body": "x", "deep": ${deep}}`,
    });
    expect(answer.status, answer.text).toBeLessThan(500);
  });

  it('without a key, on a batch whose $ref resolution walks it, is no 500 either', async () => {
    const answer = await post(
      '/rv/batch',
      `{"operations": [{"method": "PUT", "path": "/rv/v1.0/memos", "body": {"id": 0, "body": "x", "deep": ${deep}}}]}`,
      false,
    );
    expect(answer.status, answer.text).toBeLessThan(500);
  });
});

describe("ETags and preconditions say nothing of another caller's row", () => {
  it("another user's If-None-Match with the owner's ETag is no 304, and no credentials is refused before any validator", async () => {
    const note = await insert('insert into rv_notes (user_id, body) values (?, ?)', [aliceId, 'private']);
    const owner = await call('GET', `/rv/v1.0/notes?id=${note}`, undefined);
    expect([owner.status, owner.headers.etag]).toEqual([200, '"0"']);
    const bob = await call('GET', `/rv/v1.0/notes?id=${note}`, undefined, { authorization: BOB, 'if-none-match': '"0"' });
    expect(bob.status).toBe(200);
    expect(bob.json()).toEqual({ note: [] });
    const anonymous = await send(`${server.url}/rv/v1.0/notes?id=${note}`, { headers: { 'if-none-match': '"0"' } });
    // No credentials on a Basic backend is 403 (auth/guard.ts), before the validator could say anything.
    expect(anonymous.status).toBe(403);
    // HEAD answers as GET: the owner's 304, the other's no 304.
    const head = await call('HEAD', `/rv/v1.0/notes?id=${note}`, undefined, { 'if-none-match': '"0"' });
    expect([head.status, head.headers.etag, head.headers['cache-control']]).toEqual([304, '"0"', 'private, no-cache']);
    const bobHead = await call('HEAD', `/rv/v1.0/notes?id=${note}`, undefined, { authorization: BOB, 'if-none-match': '"0"' });
    expect(bobHead.status).toBe(200);
  });

  it("another user's conditional write of the owner's row is 404 with no ETag, alone and in a batch, and changes nothing", async () => {
    const note = await insert('insert into rv_notes (user_id, body) values (?, ?)', [aliceId, 'mine']);
    for (const ifMatch of ['"0"', '"1"', '*']) {
      const alone = await call('PUT', '/rv/v1.0/notes', { id: note, body: 'bob was here' }, { authorization: BOB, 'if-match': ifMatch });
      expect([alone.status, alone.headers.etag], ifMatch).toEqual([ifMatch === '*' ? 412 : 404, undefined]);
      const batched = await batch([{ method: 'PUT', path: '/rv/v1.0/notes', body: { id: note, body: 'bob was here' }, headers: { 'If-Match': ifMatch } }], {
        authorization: BOB,
      });
      expect([batched.status, batched.headers.etag], ifMatch).toEqual([ifMatch === '*' ? 412 : 404, undefined]);
    }
    expect(await one('select body, cast(version as char) as version from rv_notes where note_id = ?', [note])).toEqual({ body: 'mine', version: '0' });
  });
});

describe("a Validator that reads users' rows", () => {
  // The runtime answers what the Validator says, as it must (it runs before the steps). What is missing is the
  // generator's: the unowned-read lint (generator/analyse/ownership.ts) read the steps but not the Validator, so a
  // Validator without $uid passed `generate --strict`, and its tag is a digest of what the caller knows (the route, his
  // own id, the query string) and of its rows: Bob, sending the digests of versions 0 to 4 in one If-None-Match, learns
  // from a 304 that Alice's note exists and how often she changed it, though its step gives him nothing. The fix lints the Validator as a step (next test);
  // a project that ignores the warning still answers as its Validator says, so this stays failing by design.
  it.fails("answers no 304 to a caller who cannot read the row, for the row's version he guessed", async () => {
    const note = await insert('insert into rv_notes (user_id, body, version) values (?, ?, 3)', [aliceId, 'secret']);
    // The tag is a digest of what Bob knows (the route, his own id, the query string) and of the rows: he tries versions.
    const query = `id=${note}`;
    const tags = [0, 1, 2, 3, 4, '0', '1', '2', '3', '4'].flatMap((version) =>
      [bobId, String(bobId)].map((userId) =>
        digestTag(validatorText({ backend: 'rv', resource: 'peeks@1.0', userId: userId as string, tenant: undefined, query }, [{ version }])),
      ),
    );
    const bob = await call('GET', `/rv/v1.0/peeks?${query}`, undefined, { authorization: BOB, 'if-none-match': tags.join(', ') });
    expect(bob.status).toBe(200);
    expect(bob.json()).toEqual({ note: [] });
  });

  it('is refused by generate --strict when it reads rows per user without binding $uid, as a step is', async () => {
    const lines: string[] = [];
    const status = await generateProject({ root: ROOT, check: true, strict: true, databaseUrl, log: (line) => lines.push(line) });
    expect(status).not.toBe(0);
    expect(lines.join('\n')).toMatch(/resources\/rv\/peeks\.xml:\d+:\d+: .*Validator.* without binding \$uid/);
  });
});

describe('a versioned write', () => {
  it('at the largest version its column holds is answered a JSON error, not a 500, and the row is unchanged', async () => {
    const note = await insert('insert into rv_notes (user_id, body, version) values (?, ?, 18446744073709551615)', [aliceId, 'old']);
    const answer = await call('PUT', '/rv/v1.0/notes', { id: note, body: 'new' }, { 'if-match': '"18446744073709551615"' });
    expect(answer.status, answer.text).toBeLessThan(500);
    expect(answer.json()).toMatchObject({ status: answer.status });
    expect(await one('select body from rv_notes where note_id = ?', [note])).toEqual({ body: 'old' });
  });

  // FOOTGUN: the generator takes a versioned update whose `where` matches several rows (here: all the caller's items).
  // If-Match then changes only the rows still at that version and answers 200 with the ETag of the next one, while the
  // rows another write had moved on keep their older values: the client is told its change was made, and it was
  // made in part. The fix (not small): the generator proves the where pins one row (a primary or unique key
  // compared with `=` in its top-level AND terms, as the types stage knows the table's keys), or the handler rolls
  // back and answers 412 when the write changed fewer rows than its where matches (a count in the probe).
  it.fails('whose where matches several rows is not answered 200 when only some of them were at the version If-Match names', async () => {
    const first = await insert('insert into rv_items (user_id, qty, version) values (?, 1, 0)', [aliceId]);
    const second = await insert('insert into rv_items (user_id, qty, version) values (?, 1, 5)', [aliceId]);
    const answer = await call('PUT', '/rv/v1.0/items', { qty: 9 }, { 'if-match': '"0"' });
    const [rows] = await connection.query('select item_id, qty from rv_items where item_id in (?, ?) order by item_id', [first, second]);
    // All the caller's items at 9, or none of them and a 412: never one of two with a 200.
    expect(answer.status === 200 ? rows : answer.status, answer.text).toEqual(
      answer.status === 200
        ? [
            { item_id: first, qty: 9 },
            { item_id: second, qty: 9 },
          ]
        : 412,
    );
  });

  // FOOTGUN: a resource may have a versioned write and a GET without a <Validator> (the generator checks a Validator
  // only when there is one). That GET's ETag is a digest of its bytes, which If-Match never matches (a version is
  // compared): issue 44's "If-Match with the ETag a GET gave" always answers 412, with no ETag to go on (the tag sent
  // is no version, so it is refused before the write runs): the row can only be changed under `*`, unconditionally.
  // The fix (a generator rule, goldens to review): a
  // resource with a versioned write needs a version <Validator> on its GET (an error, or the generator adds
  // `select <column> from <the write's table> where <the write's where>` itself when the where's parameters are the GET's).
  it.fails("with If-Match the ETag its resource's GET gave, when that GET has no Validator, runs (200), not 412", async () => {
    const note = await insert('insert into rv_notes (user_id, body) values (?, ?)', [aliceId, 'draft']);
    const read = await call('GET', `/rv/v1.0/drafts?id=${note}`, undefined);
    expect(read.status).toBe(200);
    const written = await call('PUT', '/rv/v1.0/drafts', { id: note, body: 'edited' }, { 'if-match': read.headers.etag as string });
    expect([written.status, written.headers.etag], written.text).toEqual([200, '"1"']);
  });
});
