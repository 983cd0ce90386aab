import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ListOrderTerm, ListSpec } from '../../runtime/contract.js';
import { keysetCondition, listStatement } from '../../runtime/lists/statement.js';
import { connectTo } from '../../scripts/connection.js';
import { type BuiltServer, startBuiltServer } from '../support/built-server.js';
import { formBody, send } from '../support/http.js';
import { ownDatabase } from '../support/own-database.js';

/**
 * Lists that scale (docs/internals/contract.md §11, issue 31) over HTTP, against the built server and a database of this
 * file's own: the demo's catalog (shop products v3.0: filters, sorts, pages keyed by product_id) and a
 * customer's orders newest first (shop orders v2.0: a two-column descending key), walked page after page by
 * `next` and by the Link header, while rows come and go; forged, foreign and stale cursors; the limits of limit;
 * and the plan MariaDB makes for the page after a cursor deep in a large table.
 */
let url: string;
let db: mysql.Connection;
let server: BuiltServer;
let alice = '';
let bob = '';

const ALICE = 1;
const BOB = 2;

beforeAll(async () => {
  url = await ownDatabase('lists');
  db = await connectTo(url, { multipleStatements: true });
  server = await startBuiltServer({ env: { DATABASE_URL: url } });
  // Token shape A: every role the user holds (bob's first role row is admin, not customer).
  const token = async (user: string) => {
    const answer = await send(`${server.url}/shop/`, formBody({ auth: 'bearer', userid: user, password: `${user}-pass` }));
    expect(answer.status, answer.text).toBe(200);
    return `Bearer ${(answer.json() as { token: string }).token}`;
  };
  [alice, bob] = await Promise.all([token('alice'), token('bob')]);
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await db?.end();
});

interface Answer {
  status: number;
  link: string | undefined;
  body: Record<string, unknown> & { next?: string | null; message?: string };
}

async function get(path: string, authorization?: string): Promise<Answer> {
  const response = await send(server.url + path, authorization ? { headers: { authorization } } : {});
  return { status: response.status, link: response.headers.link as string | undefined, body: response.json() as Answer['body'] };
}

/** Every page from `first`, following the Link header; each page's rows, and the pages' statuses. */
async function walk(first: string, field: string, authorization?: string, between?: () => Promise<void>): Promise<Record<string, unknown>[][]> {
  const pages: Record<string, unknown>[][] = [];
  let path: string | undefined = first;
  while (path !== undefined) {
    const page = await get(path, authorization);
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    pages.push(page.body[field] as Record<string, unknown>[]);
    const next = /^<([^>]+)>; rel="next"$/.exec(page.link ?? '')?.[1];
    // The Link header and next agree: both, or neither on the last page.
    expect(next === undefined ? null : new URL(next, server.url).searchParams.get('after')).toBe(page.body.next);
    path = next;
    if (pages.length > 500) throw new Error('more pages than rows');
    await between?.();
  }
  return pages;
}

async function rows<Row>(sql: string, values: unknown[] = []): Promise<Row[]> {
  const [found] = await db.query(sql, values);
  return found as Row[];
}

describe("docs/guides/lists.md's calls, on the demo's rows", () => {
  it('answers them as docs/guides/lists.md says: the catalog two at a time, the next page, a filter with a sort, a sort it does not take', async () => {
    const first = await get('/shop/v3.0/products?limit=2');
    expect(first.body.products).toEqual([
      { product_id: 2, name: 'Cup', price: '6.00', stock: 100 },
      { product_id: 3, name: 'Kettle', price: '39.90', stock: 5 },
    ]);
    expect(first.body.next).toMatch(/^WyJuYW1lIiwiS2V0dGxlIiwzXQ\./);
    expect(first.link).toBe(`</shop/v3.0/products?limit=2&after=${first.body.next}>; rel="next"`);
    expect((await get(`/shop/v3.0/products?limit=2&after=${first.body.next}`)).body).toEqual({
      products: [{ product_id: 1, name: 'Teapot', price: '24.50', stock: 10 }],
      next: null,
    });
    expect((await get('/shop/v3.0/products?sort=-price&max_price=30')).body).toEqual({
      products: [
        { product_id: 1, name: 'Teapot', price: '24.50', stock: 10 },
        { product_id: 2, name: 'Cup', price: '6.00', stock: 100 },
      ],
      next: null,
    });
    expect(await get('/shop/v3.0/products?sort=stock')).toMatchObject({
      status: 400,
      body: { message: "Parameter 'sort' must be one of name, -name, price, -price", status: 400 },
    });
  });
});

describe('the demo catalog, a page at a time (shop products v3.0)', () => {
  beforeAll(async () => {
    // 120 products more, prices in 17 steps: ties for the sort to break.
    await db.query("insert into products (name, price, stock) select concat('Item ', lpad(seq, 3, '0')), (seq % 17) + 0.5, seq % 5 from seq_1_to_120");
  });

  it('walks every product once, in each order a caller may ask for, pages of limit rows', async () => {
    const orders: Record<string, string> = {
      '': 'name, product_id',
      '&sort=name': 'name, product_id',
      '&sort=-name': 'name desc, product_id desc',
      '&sort=price': 'price, product_id',
      '&sort=-price': 'price desc, product_id desc',
    };
    for (const [sort, order] of Object.entries(orders)) {
      const pages = await walk(`/shop/v3.0/products?limit=7${sort}`, 'products');
      const expected = await rows<{ product_id: number }>(`select product_id from products order by ${order}`);
      expect(
        pages.flat().map((row) => row.product_id),
        sort,
      ).toEqual(expected.map((row) => row.product_id));
      expect(pages.slice(0, -1).every((page) => page.length === 7)).toBe(true);
      expect(pages.at(-1)!.length).toBeGreaterThan(0);
    }
  });

  it('applies each filter only when it is sent, several together with and, in the parameter’s type', async () => {
    const ids = async (query: string) => (await walk(`/shop/v3.0/products?limit=50${query}`, 'products')).flat().map((row) => row.product_id);
    const expected = async (where: string, values: unknown[]) =>
      (await rows<{ product_id: number }>(`select product_id from products ${where} order by name, product_id`, values)).map((row) => row.product_id);
    expect(await ids('')).toEqual(await expected('', []));
    expect(await ids('&max_price=5.5')).toEqual(await expected('where price <= ?', ['5.5']));
    expect(await ids('&q=Item%2001')).toEqual(await expected("where name like '%Item 01%'", []));
    expect(await ids('&max_price=3&q=Item%200')).toEqual(await expected("where price <= 3 and name like '%Item 0%'", []));
    // A page after a cursor keeps the filters the Link header carries.
    expect(await ids('&max_price=3&sort=-price')).toEqual(
      (await rows<{ product_id: number }>('select product_id from products where price <= 3 order by price desc, product_id desc')).map(
        (row) => row.product_id,
      ),
    );
    const refused = await get('/shop/v3.0/products?max_price=cheap');
    expect(refused.status).toBe(400);
    expect(refused.body.message).toBe("Parameter 'max_price' must be a decimal number");
  });

  it('takes one of the allowed sorts, - for descending, and anything else is a 400 naming them', async () => {
    for (const sort of ['stock', 'price desc', '--price', 'price,name', 'PRICE', '']) {
      const answer = await get(`/shop/v3.0/products?sort=${encodeURIComponent(sort)}`);
      expect(answer.status, sort).toBe(400);
      expect(answer.body.message).toBe("Parameter 'sort' must be one of name, -name, price, -price");
    }
    expect((await get('/shop/v3.0/products?sort=price&sort=name')).status).toBe(400);
  });

  it('holds limit to 1..max: anything else, however large or long, is a 400; none is a page of size rows', async () => {
    const all = await get('/shop/v3.0/products');
    expect((all.body.products as unknown[]).length).toBe(20);
    expect((await get('/shop/v3.0/products?limit=100')).status).toBe(200);
    for (const limit of ['0', '101', '-1', '2.5', 'ten', '1e2', '9'.repeat(5000), '18446744073709551617']) {
      const answer = await get(`/shop/v3.0/products?limit=${limit}`);
      expect(answer.status, limit.slice(0, 20)).toBe(400);
      expect(answer.body.message).toBe("Parameter 'limit' must be a whole number from 1 to 100");
    }
    const huge = await get(`/shop/v3.0/products?after=${'A'.repeat(10_000)}`);
    expect(huge.status).toBe(400);
    expect(huge.body.message).toMatch(/^Parameter 'after' must be at most \d+ characters$/);
  });
});

describe("a customer's orders newest first (shop orders v2.0: key o.created_on desc, o.order_id desc)", () => {
  beforeAll(async () => {
    // 150 orders of alice's in 15 seconds (ten in each: ties the key's second column breaks), 5 of bob's.
    await db.query(`insert into orders (user_id, product_id, quantity, created_on)
        select ${ALICE}, 1 + seq % 3, 1 + seq % 4, timestamp('2026-11-01 08:00:00') + interval (seq div 10) second from seq_1_to_150;
      insert into orders (user_id, product_id, quantity) select ${BOB}, 2, 1 from seq_1_to_5`);
  });

  it('walks every order of the caller once, newest first, ties by order_id, and only theirs', async () => {
    const pages = await walk('/shop/v2.0/orders?limit=9', 'orders', alice);
    const expected = await rows<{ order_id: number }>('select order_id from orders where user_id = ? order by created_on desc, order_id desc', [ALICE]);
    expect(pages.flat().map((row) => row.order_id)).toEqual(expected.map((row) => row.order_id));
    // Mixed directions: quantity ascending, then the key as written.
    const byQuantity = await walk('/shop/v2.0/orders?limit=11&sort=quantity', 'orders', alice);
    const expectedByQuantity = await rows<{ order_id: number }>(
      'select order_id from orders where user_id = ? order by quantity, created_on desc, order_id desc',
      [ALICE],
    );
    expect(byQuantity.flat().map((row) => row.order_id)).toEqual(expectedByQuantity.map((row) => row.order_id));
    const filtered = await walk('/shop/v2.0/orders?limit=8&product_id=2&sort=-quantity', 'orders', alice);
    const expectedFiltered = await rows<{ order_id: number }>(
      'select order_id from orders where user_id = ? and product_id = 2 order by quantity desc, created_on, order_id',
      [ALICE],
    );
    expect(filtered.flat().map((row) => row.order_id)).toEqual(expectedFiltered.map((row) => row.order_id));
  });

  it('repeats and skips no row while rows are inserted and deleted between and during the pages', async () => {
    for (const sort of ['', '&sort=quantity']) {
      const before = new Set((await rows<{ order_id: number }>('select order_id from orders where user_id = ?', [ALICE])).map((row) => row.order_id));
      const inserted = new Set<number>();
      const deleted = new Set<number>();
      let churning = true;
      // Rows come and go the whole time: new orders at any time in the range (before and after the cursor), and
      // orders removed, old ones and new ones.
      const churn = (async () => {
        for (let round = 0; churning; round++) {
          const [result] = (await db.query(
            `insert into orders (user_id, product_id, quantity, created_on) values (?, 1, ?, timestamp('2026-11-01 08:00:00') + interval ? second)`,
            [ALICE, 1 + (round % 4), (round * 7) % 16],
          )) as unknown as [{ insertId: number }];
          inserted.add(result.insertId);
          const victims = await rows<{ order_id: number }>('select order_id from orders where user_id = ? order by rand() limit 1', [ALICE]);
          for (const victim of victims) {
            await db.query('delete from orders where order_id = ?', [victim.order_id]);
            deleted.add(victim.order_id);
          }
          await new Promise((resolve) => setTimeout(resolve, 2));
        }
      })();
      let pages: Record<string, unknown>[][];
      try {
        pages = await walk(`/shop/v2.0/orders?limit=9${sort}`, 'orders', alice, () => new Promise((resolve) => setTimeout(resolve, 5)));
      } finally {
        churning = false;
        await churn;
      }
      const seen = pages.flat().map((row) => row.order_id as number);
      expect(inserted.size, 'rows came and went during the walk').toBeGreaterThan(5);
      expect(new Set(seen).size, `${sort}: a row repeated`).toBe(seen.length);
      // Every row there from the first page to the last was seen; nothing seen was never there.
      const stayed = [...before].filter((id) => !deleted.has(id));
      expect(
        stayed.filter((id) => !seen.includes(id)),
        `${sort}: rows skipped`,
      ).toEqual([]);
      expect(seen.filter((id) => !before.has(id) && !inserted.has(id))).toEqual([]);
    }
  });

  it("refuses another user's cursor: bob may not go on from a page of alice's", async () => {
    const first = await get('/shop/v2.0/orders?limit=3', alice);
    expect(first.status).toBe(200);
    const foreign = await get(`/shop/v2.0/orders?limit=3&after=${first.body.next}`, bob);
    expect(foreign.status).toBe(400);
    expect(foreign.body.message).toMatch(/^Parameter 'after' is not a cursor of this list/);
    expect((await get(`/shop/v2.0/orders?limit=3&after=${first.body.next}`, alice)).status).toBe(200);
  });
});

describe('forged, foreign and stale cursors', () => {
  it('answers 400 to each, never a 500, and the cursor the server gave still works', async () => {
    const catalog = await get('/shop/v3.0/products?limit=5');
    const cursor = catalog.body.next as string;
    const [payload, tag] = cursor.split('.') as [string, string];
    const orders = await get('/shop/v2.0/orders?limit=5', alice);
    // What the payload says, changed and encoded again: the position of another row, a value of another type, SQL.
    const rewritten = (edit: (values: unknown[]) => unknown[]) =>
      `${Buffer.from(JSON.stringify(edit(JSON.parse(Buffer.from(payload, 'base64url').toString()) as unknown[]))).toString('base64url')}.${tag}`;
    // Signed as a server signs, with a key that is not this server's: the same catalog served with another
    // JWT_SECRET (another deployment's, or a key rotated away since).
    const other = await startBuiltServer({ env: { DATABASE_URL: url, JWT_SECRET: 'another-secret-0123456789-abcdefghijklmnop' } });
    let elsewhere: string;
    try {
      elsewhere = ((await send(`${other.url}/shop/v3.0/products?limit=5`)).json() as { next: string }).next;
    } finally {
      await other.stop();
    }
    const cursors = {
      tampered: `${payload}.${tag.slice(0, -1)}${tag.endsWith('A') ? 'B' : 'A'}`,
      moved: rewritten((values) => [values[0], 'Aardvark', 1]),
      typed: rewritten((values) => [values[0], { sql: 1 }, '1 or 1=1']),
      injected: rewritten(() => ['name', "' or 1=1 -- ", 1]),
      'another key': elsewhere,
      'another list': orders.body.next as string,
      garbage: "' or 1=1 --",
      empty: '',
    };
    const before = server.logs.length;
    for (const [what, after] of Object.entries(cursors)) {
      const answer = await get(`/shop/v3.0/products?limit=5&after=${encodeURIComponent(after)}`);
      expect(answer.status, what).toBe(400);
      expect(answer.body.message, what).toMatch(/^Parameter 'after' is not a cursor of this list/);
    }
    // A cursor of the catalog's beside a sort it was not made for.
    const sorted = await get(`/shop/v3.0/products?limit=5&sort=-price&after=${cursor}`);
    expect(sorted.status).toBe(400);
    expect(sorted.body.message).toBe("Parameter 'sort' is not the sort its cursor 'after' was made for (name): send that one, or none");
    expect(server.logs.slice(before).filter((line) => Number(line.status) >= 500)).toEqual([]);
    expect((await get(`/shop/v3.0/products?limit=5&after=${cursor}`)).status).toBe(200);
  });
});

describe('xmlrest doctor and the indexes of lists', () => {
  it('names the index that serves each order, and for one no index serves, the CREATE INDEX to run', async () => {
    await db.query('drop index products_price on products');
    const { stdout } = await promisify(execFile)(process.execPath, ['scripts/xmlrest.mjs', 'doctor'], {
      env: { ...process.env, DATABASE_URL: url, JWT_SECRET: 'doctor-secret-0123456789-0123456789' },
    });
    expect(stdout).toMatch(/^ok {3}list GET \/shop\/v2\.0\/orders, order o\.created_on desc, o\.order_id desc: served by the index orders_user_created/m);
    expect(stdout).toMatch(/^ok {3}list GET \/shop\/v3\.0\/products, order name, product_id: served by the index products_name/m);
    expect(stdout).toContain(
      'WARN list GET /shop/v3.0/products, order price, product_id: no index serves it (EXPLAIN: Using filesort), so a page deep in products reads and sorts every row before it: create one, CREATE INDEX products_price_product_id ON products (price, product_id)',
    );
    // A warning: nothing is broken, and doctor says so.
    expect(stdout.trim().split('\n').at(-1)).toBe('nothing to fix; 1 warning above');
    await db.query('create index products_price on products (price, product_id)');
  });
});

describe('the plan MariaDB makes for a page deep in a large table', () => {
  it('serves the page after a cursor from the index, reading a page of rows, where a row comparison reads every row before it', async () => {
    await db.query(`create table page_events (
        item_id int unsigned not null primary key,
        created_on datetime not null,
        title varchar(40) not null,
        key page_events_created (created_on, item_id)
      ) engine = InnoDB;
      insert into page_events select seq, timestamp('2026-01-01') + interval (seq div 3) second, concat('event ', seq) from seq_1_to_60000;
      analyze table page_events`);
    const key: ListOrderTerm[] = [
      { sql: 'created_on', column: 'created_on', desc: true, type: 'Date' },
      { sql: 'item_id', column: 'item_id', desc: true, type: 'number' },
    ];
    const spec: ListSpec = {
      sql: 'select item_id, created_on, title\nfrom page_events',
      where: false,
      tail: '',
      filters: [],
      sort: null,
      page: { size: 20, max: 100, key },
    };
    // The statement the runtime makes for the page after the 50,000th row, newest first.
    const sql = listStatement(spec, { filters: [], order: key, after: true, limit: true });
    expect(sql).toContain(`where ${keysetCondition(key)}`);
    const [cursor] = await rows<{ created_on: Date; item_id: number }>(
      'select created_on, item_id from page_events order by created_on desc, item_id desc limit 49999, 1',
    );
    const values = [cursor!.created_on, cursor!.created_on, cursor!.item_id, 21];
    const [plan] = (await db.execute(`explain ${sql}`, values as (number | Date)[])) as unknown as [{ type: string; key: string; Extra: string }[]];
    expect(plan[0]).toMatchObject({ type: 'range', key: 'page_events_created' });
    expect(plan[0]!.Extra ?? '').not.toContain('filesort');
    // Rows the storage engine handed over to answer it: a page's worth, against the 50,000 before the cursor for
    // the row comparison Platformatic DB sends.
    const counted = async () => {
      const [status] = (await db.query(
        "show session status where variable_name in ('Handler_read_first', 'Handler_read_last', 'Handler_read_next', 'Handler_read_prev', 'Handler_read_key')",
      )) as unknown as [{ Value: string }[]];
      return status.reduce((sum, row) => sum + Number(row.Value), 0);
    };
    const handlerReads = async (statement: string, bound: unknown[]) => {
      const before = await counted();
      const [page] = (await db.execute(statement, bound as (string | number | Date)[])) as unknown as [unknown[]];
      return { rows: page.length, reads: (await counted()) - before };
    };
    const expanded = await handlerReads(sql, values);
    expect(expanded.rows).toBe(21);
    expect(expanded.reads).toBeLessThan(100);
    const rowComparison = await handlerReads(sql.replace(keysetCondition(key), '(created_on, item_id) < (?, ?)'), [cursor!.created_on, cursor!.item_id, 21]);
    expect(rowComparison.rows).toBe(21);
    expect(rowComparison.reads).toBeGreaterThan(40_000);
  });
});
