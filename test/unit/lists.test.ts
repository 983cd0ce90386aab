import { createSecretKey } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ListSpec } from '../../runtime/contract.js';
import { CursorKey, type ListRequest, Lists } from '../../runtime/lists/index.js';
import { keysetCondition, listStatement, orderOf } from '../../runtime/lists/statement.js';
import { readParams } from '../../runtime/params.js';

/**
 * The list runtime (docs/internals/contract.md §11) in-process: the statements it makes for each shape of request (the
 * golden modules show each list's widest), its cursors (tampered, foreign, stale), and the bounds of limit.
 * Over HTTP against MariaDB: test/integration/lists.test.ts.
 */
const ORDERS: ListSpec = {
  sql: 'select o.order_id, o.created_on, o.total\nfrom orders o\nwhere (o.user_id = ? or o.shared = 1)',
  where: true,
  tail: '',
  filters: [
    { param: 'status', sql: 'o.status = ?', uses: 1 },
    { param: 'q', sql: '(o.note like ? or o.title like ?)', uses: 2 },
  ],
  sort: {
    param: 'sort',
    allow: {
      created_on: { sql: 'o.created_on', column: 'created_on', desc: false, type: 'Date' },
      total: { sql: 'o.total', column: 'total', desc: false, type: 'string' },
    },
    default: { name: 'created_on', desc: true },
  },
  page: {
    size: 2,
    max: 5,
    key: [
      { sql: 'o.created_on', column: 'created_on', desc: true, type: 'Date' },
      { sql: 'o.order_id', column: 'order_id', desc: true, type: 'number' },
    ],
  },
};

const key = (secret = 'a-secret-of-at-least-32-bytes-0123456789') => new CursorKey([createSecretKey(Buffer.from(secret))]);

function request(overrides: Partial<ListRequest> = {}): ListRequest & { links: string[] } {
  const links: string[] = [];
  return { route: 'shop orders@1.0 GET', user: '7', path: '/shop/v1.0/orders', link: (value) => links.push(value), links, ...overrides };
}

describe('the statement of each shape of request', () => {
  it('adds only the filters sent, then the order and the limit; the first page has no keyset condition', () => {
    const first = new Lists(() => key()).open(ORDERS, { status: 'paid' }, request());
    expect(first.sql).toBe(
      'select o.order_id, o.created_on, o.total\nfrom orders o\nwhere (o.user_id = ? or o.shared = 1)\n  and o.status = ?\norder by o.created_on desc, o.order_id desc\nlimit ?',
    );
    // The step's own values, then the filter's, then one row more than the page.
    expect(first.values(7)).toEqual([7, 'paid', 3]);
  });

  it('a filter used twice takes its value twice; a statement without WHERE begins one', () => {
    const spec: ListSpec = { ...ORDERS, sql: 'select o.order_id, o.created_on, o.total\nfrom orders o', where: false, sort: null };
    const list = new Lists(() => key()).open(spec, { q: '%tea%', limit: 4 }, request());
    expect(list.sql).toBe(
      'select o.order_id, o.created_on, o.total\nfrom orders o\nwhere (o.note like ? or o.title like ?)\norder by o.created_on desc, o.order_id desc\nlimit ?',
    );
    expect(list.values()).toEqual(['%tea%', '%tea%', 5]);
  });

  it('keeps what follows the conditions in a list without Page or Sort', () => {
    const spec: ListSpec = {
      sql: 'select category, count(*) as n\nfrom products',
      where: false,
      tail: 'group by category',
      filters: [{ param: 'min', sql: 'price >= ?', uses: 1 }],
      sort: null,
      page: null,
    };
    expect(listStatement(spec, { filters: spec.filters, order: [], after: false, limit: false })).toBe(
      'select category, count(*) as n\nfrom products\nwhere price >= ?\ngroup by category',
    );
  });

  it('expands the keyset condition term by term, each by its own direction, never as a row comparison', () => {
    const order = [
      { sql: 'a', column: 'a', desc: true, type: 'number' as const },
      { sql: 'b', column: 'b', desc: false, type: 'number' as const },
      { sql: 'c', column: 'c', desc: true, type: 'number' as const },
    ];
    expect(keysetCondition(order.slice(0, 1))).toBe('a < ?');
    expect(keysetCondition(order)).toBe('(a < ? or (a = ? and b > ?) or (a = ? and b = ? and c < ?))');
  });

  it('orders a sort by its column then the key, turning the key round when the sort runs against it', () => {
    const terms = (sort: string) => orderOf(ORDERS, sort).map((term) => `${term.sql}${term.desc ? ' desc' : ''}`);
    expect(terms('')).toEqual(['o.created_on desc', 'o.order_id desc']);
    expect(terms('-created_on')).toEqual(['o.created_on desc', 'o.order_id desc']);
    expect(terms('created_on')).toEqual(['o.created_on', 'o.order_id']);
    // A column the key does not hold: ascending keeps the key as written, descending is the exact reverse (one index serves both).
    expect(terms('total')).toEqual(['o.total', 'o.created_on desc', 'o.order_id desc']);
    expect(terms('-total')).toEqual(['o.total desc', 'o.created_on', 'o.order_id']);
  });
});

describe('pages and their cursors', () => {
  const rows = [
    { order_id: 9, created_on: new Date('2026-11-20T10:00:00.123Z'), total: '5.00' },
    { order_id: 8, created_on: new Date('2026-11-20T10:00:00.123Z'), total: '7.50' },
    { order_id: 4, created_on: new Date('2026-11-19T08:00:00Z'), total: '1.00' },
  ];

  it('keeps one row less than it read, and gives the next page after the last one kept, in the Link header too', () => {
    const lists = new Lists(() => key());
    const asked = request();
    const first = lists.open(ORDERS, { status: 'paid', limit: 2 }, asked);
    expect(first.page(rows)).toEqual(rows.slice(0, 2));
    expect(first.next).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(asked.links).toEqual([`</shop/v1.0/orders?status=paid&limit=2&after=${first.next}>; rel="next"`]);
    const second = lists.open(ORDERS, { status: 'paid', limit: 2, after: first.next }, request());
    expect(second.sql).toContain('and (o.created_on < ? or (o.created_on = ? and o.order_id < ?))\norder by o.created_on desc, o.order_id desc');
    const at = rows[1]!.created_on;
    expect(second.values(7)).toEqual([7, 'paid', at, at, 8, 3]);
    // The last page: no next, no Link.
    const last = request();
    const third = lists.open(ORDERS, { after: first.next }, last);
    expect(third.page(rows.slice(0, 1))).toHaveLength(1);
    expect(third.next).toBeNull();
    expect(last.links).toEqual([]);
  });

  it('remembers its sort: the next page goes on in it, and another sort beside it is a 400', () => {
    const lists = new Lists(() => key());
    const first = lists.open(ORDERS, { sort: 'total' }, request());
    first.page(rows);
    const again = lists.open(ORDERS, { after: first.next }, request());
    expect(again.sql).toContain('order by o.total, o.created_on desc, o.order_id desc');
    expect(() => lists.open(ORDERS, { after: first.next, sort: '-total' }, request())).toThrow(/is not the sort its cursor 'after' was made for \(total\)/);
    expect(lists.open(ORDERS, { after: first.next, sort: 'total' }, request()).sql).toBe(again.sql);
  });

  it("refuses a cursor changed anywhere, signed with another key, another route's, another user's, or from before the list changed", () => {
    const lists = new Lists(() => key());
    const first = lists.open(ORDERS, {}, request());
    first.page(rows);
    const cursor = first.next!;
    const refused = /Parameter 'after' is not a cursor of this list/;
    const open =
      (after: string, asked = request(), spec = ORDERS, server = lists) =>
      () =>
        server.open(spec, { after }, asked);
    expect(open(cursor)).not.toThrow();
    const [payload, tag] = cursor.split('.') as [string, string];
    // The same position, one value changed and encoded again: no longer the server's.
    const moved = Buffer.from(Buffer.from(payload, 'base64url').toString().replace('8', '1')).toString('base64url');
    expect(open(`${moved}.${tag}`)).toThrow(refused);
    expect(open(cursor, request(), ORDERS, new Lists(() => key('another-secret-of-at-least-32-bytes-000')))).toThrow(refused);
    expect(open(cursor, request({ route: 'shop invoices@1.0 GET' }))).toThrow(refused);
    expect(open(cursor, request({ user: '8' }))).toThrow(refused);
    expect(open(cursor, request({ user: undefined }))).toThrow(refused);
    // A redeploy that changed the key or the sorts makes older cursors stale.
    expect(open(cursor, request(), { ...ORDERS, page: { ...ORDERS.page!, key: ORDERS.page!.key.slice(1) } })).toThrow(refused);
    expect(open(`${payload}.${tag}x`)).toThrow(refused);
    expect(open('')).toThrow(refused);
  });

  it('verifies with every key of a rotation, signing with the first', () => {
    const old = new Lists(() => key('the-old-secret-of-at-least-32-bytes-000'));
    const first = old.open(ORDERS, {}, request());
    first.page(rows);
    const rotated = new Lists(
      () =>
        new CursorKey([
          createSecretKey(Buffer.from('the-new-secret-of-at-least-32-bytes-000')),
          createSecretKey(Buffer.from('the-old-secret-of-at-least-32-bytes-000')),
        ]),
    );
    expect(() => rotated.open(ORDERS, { after: first.next }, request())).not.toThrow();
  });

  it('never opens, and never throws anything but its 400, whatever text comes as a cursor, or a cursor with any character changed', () => {
    const lists = new Lists(() => key());
    const first = lists.open(ORDERS, {}, request());
    first.page(rows);
    const cursor = first.next!;
    const only400 = (after: string) => {
      try {
        lists.open(ORDERS, { after }, request());
        return after === cursor;
      } catch (error) {
        return (error as { status?: number }).status === 400;
      }
    };
    fc.assert(fc.property(fc.string({ maxLength: 300 }), only400), { numRuns: Number(process.env.FUZZ_RUNS ?? 500) });
    fc.assert(
      fc.property(fc.nat(cursor.length - 1), fc.constantFrom(...'ABCabc019-_.='), (at, character) => {
        const changed = cursor.slice(0, at) + character + cursor.slice(at + 1);
        return changed === cursor || only400(changed);
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 500) },
    );
  });
});

describe('the limits of limit', () => {
  const specs = {
    limit: { kind: 'integer', nullable: false, min: 1, max: 100, optional: true },
    after: { kind: 'string', nullable: false, maxLength: 300, optional: true },
  } as const;

  it('takes 1 to max, and says the range for anything else, however large or long', () => {
    expect(readParams({ limit: '100' }, undefined, specs)).toEqual({ limit: 100 });
    expect(readParams({}, undefined, specs)).toEqual({});
    for (const limit of ['0', '101', '-1', '1.5', 'ten', '', '9'.repeat(400), '1e3', ' 5']) {
      expect(() => readParams({ limit }, undefined, specs), limit).toThrow("Parameter 'limit' must be a whole number from 1 to 100");
    }
    expect(() => readParams({}, { limit: 1e300 }, specs)).toThrow("Parameter 'limit' must be a whole number from 1 to 100");
    expect(() => readParams({ limit: ['1', '2'] }, undefined, specs)).toThrow("Parameter 'limit' must be a single string");
    expect(() => readParams({ after: 'x'.repeat(301) }, undefined, specs)).toThrow("Parameter 'after' must be at most 300 characters");
  });
});
