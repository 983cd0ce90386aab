import { rmSync } from 'node:fs';
import path from 'node:path';
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectTo } from '../../scripts/connection.js';
import { addUser } from '../../scripts/schema.js';
import { type BuiltServer, startBuiltServer } from '../support/built-server.js';
import { basicHeader, type RawResponse, send } from '../support/http.js';
import { buildScratchProject } from '../support/scratch-project.js';

/**
 * Validators on reads (docs/internals/contract.md §15, issue 44 point 1) over HTTP against two built servers of one
 * build: ETAGS on (the default) and ETAGS=off. A GET's 200 carries a strong ETag of its bytes or of its
 * `<Validator>`'s rows; If-None-Match (weak, a list, `*`) answers 304 with no body and the same ETag, Cache-Control
 * and Vary; HEAD the same; errors no tag. A Validator's 304 is proven to skip the main statement by taking that
 * statement's table away: the 304 still comes, and a request that must run it fails.
 */
const ROOT = path.resolve('test/.tmp/etags');
const ANN = basicHeader('et-ann', 'et-ann-pass');
const BOB = basicHeader('et-bob', 'et-bob-pass');
let connection: mysql.Connection;
let server: BuiltServer;
let off: BuiltServer;

beforeAll(async () => {
  connection = await connectTo(inject('databaseUrl'));
  await connection.query('drop table if exists et_items, et_board_items, et_stamp');
  await connection.query('create table et_items (item_id int unsigned primary key, name varchar(50) not null)');
  await connection.query('insert into et_items values (1, "pen"), (2, "ink")');
  await connection.query('create table et_stamp (board_id int unsigned primary key, stamp int unsigned not null)');
  await connection.query('insert into et_stamp values (1, 1)');
  await connection.query('create table et_board_items (board_id int unsigned not null, item varchar(50) not null)');
  await connection.query('insert into et_board_items values (1, "first")');
  for (const user of ['et-ann', 'et-bob']) await addUser(connection, user, `${user}-pass`, ['member']);
  await buildScratchProject(ROOT, {
    databaseUrl: inject('databaseUrl'),
    files: {
      'resources/et/backend.xml': '<Backend xmlns="urn:xmlrest:resource:1.0" auth_scheme="Basic"/>\n',
      'resources/et/items.xml': `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0">
  <Request method="GET"><Sql id="items">select item_id, name from et_items where item_id &gt;= $from order by item_id</Sql></Request>
</Resource>
`,
      'resources/et/catalog.xml': `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0">
  <Request method="GET" max_age="60"><Sql id="items">select item_id, name from et_items order by item_id</Sql></Request>
</Resource>
`,
      'resources/et/mine.xml': `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0" auth="member">
  <Request method="GET">
    <Validator>select count(*) as items, max(item_id) as last from et_items</Validator>
    <Sql id="items">select item_id, name from et_items order by item_id</Sql>
  </Request>
</Resource>
`,
      'resources/et/board.xml': `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0">
  <Request method="GET">
    <Validator>select stamp from et_stamp where board_id = $board_id</Validator>
    <Sql id="items">select item from et_board_items where board_id = $board_id</Sql>
  </Request>
</Resource>
`,
    },
  });
  [server, off] = await Promise.all([startBuiltServer({ root: ROOT }), startBuiltServer({ root: ROOT, env: { ETAGS: 'off' } })]);
}, 240_000);

afterAll(async () => {
  await Promise.all([server?.stop(), off?.stop()]);
  await connection?.query('drop table if exists et_items, et_board_items, et_stamp');
  await connection?.end();
  rmSync(ROOT, { recursive: true, force: true });
});

function get(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<RawResponse> {
  return send(url, { method, headers });
}

const etagOf = (response: RawResponse) => response.headers.etag as string | undefined;

describe('a GET without a Validator', () => {
  it('answers a strong ETag of exactly the bytes sent, the same for the same answer, and 304 to it', async () => {
    const url = `${server.url}/et/v1.0/items?from=1`;
    const first = await get(url);
    expect(first.status).toBe(200);
    const tag = etagOf(first)!;
    expect(tag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect((await get(url)).headers.etag).toBe(tag);
    // Another answer, another tag.
    expect(etagOf(await get(`${server.url}/et/v1.0/items?from=2`))).not.toBe(tag);
    expect(first.headers['cache-control']).toBe('no-cache');
    expect(first.headers.vary).toBeUndefined();

    for (const header of [tag, `W/${tag}`, `"other", ${tag}`, `"other",W/${tag}`, '*']) {
      const again = await get(url, { 'if-none-match': header });
      expect(again.status, header).toBe(304);
      expect(again.text, header).toBe('');
      expect(again.headers.etag, header).toBe(tag);
      expect(again.headers['cache-control'], header).toBe('no-cache');
    }
    // A tag that does not hold, or a malformed header: the whole answer.
    for (const header of ['"other"', tag.slice(1, -1), 'W/"x", "y"']) {
      const whole = await get(url, { 'if-none-match': header });
      expect(whole.status, header).toBe(200);
      expect(whole.text).toBe(first.text);
    }
  });

  it('answers a changed row with 200 and a new tag, and the old tag no longer holds', async () => {
    const url = `${server.url}/et/v1.0/items?from=2`;
    const before = etagOf(await get(url))!;
    await connection.query('update et_items set name = "ink, blue" where item_id = 2');
    try {
      const after = await get(url, { 'if-none-match': before });
      expect(after.status).toBe(200);
      expect(etagOf(after)).not.toBe(before);
      expect((after.json() as { items: { name: string }[] }).items[0]!.name).toBe('ink, blue');
    } finally {
      await connection.query('update et_items set name = "ink" where item_id = 2');
    }
  });

  it('answers HEAD with the headers of GET, and the same 304', async () => {
    const url = `${server.url}/et/v1.0/items?from=1`;
    const full = await get(url);
    const head = await get(url, {}, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect(head.headers.etag).toBe(full.headers.etag);
    expect(head.headers['cache-control']).toBe('no-cache');
    expect(head.headers['content-length']).toBe(full.headers['content-length']);
    const notModified = await get(url, { 'if-none-match': full.headers.etag as string }, 'HEAD');
    expect(notModified.status).toBe(304);
    expect(notModified.headers.etag).toBe(full.headers.etag);
  });

  it('says a public max_age, and keeps no-store and no tag on errors', async () => {
    const catalog = await get(`${server.url}/et/v1.0/catalog`);
    expect(catalog.headers['cache-control']).toBe('public, max-age=60');
    const notModified = await get(`${server.url}/et/v1.0/catalog`, { 'if-none-match': etagOf(catalog)! });
    expect(notModified.status).toBe(304);
    expect(notModified.headers['cache-control']).toBe('public, max-age=60');

    const unauthenticated = await get(`${server.url}/et/v1.0/mine`, { 'if-none-match': '*' });
    expect(unauthenticated.status).toBe(403);
    const badParam = await get(`${server.url}/et/v1.0/board?board_id=x`, { 'if-none-match': '*' });
    expect(badParam.status).toBe(400);
    const missing = await get(`${server.url}/et/v1.0/nothing`, { 'if-none-match': '*' });
    expect(missing.status).toBe(404);
    for (const error of [unauthenticated, badParam, missing]) {
      expect(error.headers.etag).toBeUndefined();
      expect(error.headers['cache-control']).toBe('no-store');
    }
  });
});

describe('a protected GET with a Validator of rows', () => {
  it('is private, varies with the credentials, and tags the same body differently for two callers', async () => {
    const url = `${server.url}/et/v1.0/mine`;
    const ann = await get(url, { authorization: ANN });
    const bob = await get(url, { authorization: BOB });
    expect(ann.status).toBe(200);
    expect(ann.text).toBe(bob.text);
    expect(etagOf(ann)).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect(etagOf(ann)).not.toBe(etagOf(bob));
    expect(ann.headers['cache-control']).toBe('private, no-cache');
    expect(ann.headers.vary).toBe('Authorization, X-API-Key');
    // One caller's tag is no 304 for the other.
    expect((await get(url, { authorization: BOB, 'if-none-match': etagOf(ann)! })).status).toBe(200);
    const notModified = await get(url, { authorization: ANN, 'if-none-match': etagOf(ann)! });
    expect(notModified.status).toBe(304);
    expect(notModified.text).toBe('');
    expect(notModified.headers['cache-control']).toBe('private, no-cache');
    expect(notModified.headers.vary).toBe('Authorization, X-API-Key');
    // The tag is the validator's, not a digest of the body: the same body on the route without one tags otherwise.
    expect(etagOf(ann)).not.toBe(etagOf(await get(`${server.url}/et/v1.0/items?from=1`)));
  });
});

describe('a GET with a Validator', () => {
  it('answers 304 without running its main statement, and a new tag when the validated row changes', async () => {
    const url = `${server.url}/et/v1.0/board?board_id=1`;
    const first = await get(url);
    expect(first.status).toBe(200);
    expect(first.json()).toEqual({ items: [{ item: 'first' }] });
    const tag = etagOf(first)!;
    // The main statement's table is gone: a request that runs it fails, one the validator answers does not.
    await connection.query('rename table et_board_items to et_board_items_away');
    try {
      const notModified = await get(url, { 'if-none-match': tag });
      expect(notModified.status).toBe(304);
      expect(notModified.headers.etag).toBe(tag);
      expect((await get(url, { 'if-none-match': '"stale"' })).status).toBeGreaterThanOrEqual(500);
    } finally {
      await connection.query('rename table et_board_items_away to et_board_items');
    }
    await connection.query('update et_stamp set stamp = stamp + 1 where board_id = 1');
    const changed = await get(url, { 'if-none-match': tag });
    expect(changed.status).toBe(200);
    expect(etagOf(changed)).not.toBe(tag);
    expect((await get(url, { 'if-none-match': etagOf(changed)! })).status).toBe(304);
    // No validated row: still a tag of the answer's own bytes.
    const none = await get(`${server.url}/et/v1.0/board?board_id=9`);
    expect(none.status).toBe(200);
    expect(etagOf(none)).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
  });
});

describe('ETAGS=off', () => {
  it('answers no tag and no 304, with the old no-store, on the same build', async () => {
    for (const pathAndQuery of ['/et/v1.0/items?from=1', '/et/v1.0/catalog', '/et/v1.0/board?board_id=1']) {
      const response = await get(off.url + pathAndQuery, { 'if-none-match': '*' });
      expect(response.status, pathAndQuery).toBe(200);
      expect(response.headers.etag, pathAndQuery).toBeUndefined();
      expect(response.headers['cache-control'], pathAndQuery).toBe('no-store');
    }
    const mine = await get(`${off.url}/et/v1.0/mine`, { authorization: ANN, 'if-none-match': '*' });
    expect(mine.status).toBe(200);
    expect(mine.headers.vary).toBeUndefined();
  });
});
