import { describe, expect, it } from 'vitest';
import { type BatchRoute, checkOperations } from '../../runtime/batch/operations.js';
import { resolveReferences } from '../../runtime/batch/reference.js';
import { HttpError } from '../../runtime/errors.js';

/** A batch's body checked before anything runs, and `$ref` resolved (docs/internals/contract.md §15). */
const route = { label: 'orders@1.0', path: '/shop/v1.0/orders' } as BatchRoute;
const routes = { find: (method: string, path: string) => (path.toLowerCase() === '/shop/v1.0/orders' && method !== 'PUT' ? route : undefined) };

function refusal(work: () => unknown): string {
  try {
    work();
  } catch (error) {
    expect(error).toBeInstanceOf(HttpError);
    expect((error as HttpError).status).toBe(400);
    return (error as HttpError).message;
  }
  throw new Error('not refused');
}

describe('checkOperations', () => {
  it('takes operations of the backend with their query strings, bodies and preconditions', () => {
    const [one, two] = checkOperations(
      {
        operations: [
          { method: 'POST', path: '/shop/v1.0/orders', body: { quantity: 1 }, headers: { 'IF-MATCH': '"3"' } },
          { method: 'GET', path: '/shop/v1.0/orders?sort=-quantity&limit=2' },
        ],
      },
      5,
      routes,
    );
    expect(one).toMatchObject({ method: 'POST', path: '/shop/v1.0/orders', querystring: '', body: { quantity: 1 }, headers: { 'if-match': '"3"' } });
    expect(two).toMatchObject({ method: 'GET', path: '/shop/v1.0/orders', querystring: 'sort=-quantity&limit=2', body: undefined, headers: {} });
  });

  it('refuses a body that is not a list of 1 to max operations', () => {
    expect(refusal(() => checkOperations(undefined, 5, routes))).toBe('A batch is {"operations": [...]}');
    expect(refusal(() => checkOperations({ operations: 'x' }, 5, routes))).toBe('A batch is {"operations": [...]}');
    expect(refusal(() => checkOperations({ operations: [], more: 1 }, 5, routes))).toMatch(/no other field: "more"/);
    expect(refusal(() => checkOperations({ operations: [] }, 5, routes))).toBe('A batch has 1 to 5 operations, not 0');
    const six = Array.from({ length: 6 }, () => ({ method: 'GET', path: '/shop/v1.0/orders' }));
    expect(refusal(() => checkOperations({ operations: six }, 5, routes))).toBe('A batch has 1 to 5 operations, not 6');
  });

  it('names the operation it refuses, and why', () => {
    const at = (operation: unknown) => refusal(() => checkOperations({ operations: [{ method: 'GET', path: '/shop/v1.0/orders' }, operation] }, 5, routes));
    expect(at('GET /x')).toMatch(/^Operation 1: is an object/);
    expect(at({ method: 'HEAD', path: '/shop/v1.0/orders' })).toMatch(/^Operation 1: method is one of/);
    expect(at({ method: 'get', path: '/shop/v1.0/orders' })).toMatch(/^Operation 1: method is one of/);
    expect(at({ method: 'GET', path: 'shop/v1.0/orders' })).toMatch(/^Operation 1: path is a path/);
    expect(at({ method: 'PUT', path: '/shop/v1.0/orders' })).toBe('Operation 1: PUT /shop/v1.0/orders is not a resource route of this backend');
    expect(at({ method: 'POST', path: '/shop/batch' })).toBe('Operation 1: POST /shop/batch is not a resource route of this backend');
    expect(at({ method: 'POST', path: '/shop/v1.0/orders', body: [1] })).toBe('Operation 1: body is an object');
    expect(at({ method: 'POST', path: '/shop/v1.0/orders', headers: { Authorization: 'Basic eA==' } })).toMatch(
      /^Operation 1: header "Authorization" is not taken/,
    );
    expect(at({ method: 'POST', path: '/shop/v1.0/orders', headers: { 'If-Match': 3 } })).toBe('Operation 1: header If-Match is a string');
    expect(at({ method: 'POST', path: '/shop/v1.0/orders', extra: true })).toBe('Operation 1: unknown field "extra"');
  });
});

describe('resolveReferences', () => {
  const placed = { order_id: 41, 'a/b': 'slash', 'm~n': 'tilde' };
  const answers: unknown[] = [{ order: { insertId: 41 }, placed: [placed] }, { lines: [] }];
  const of = (index: number) => answers[index];

  it('replaces each reference, anywhere in the body, by the value it points at', () => {
    const body = { order_id: { $ref: '/0/order/insertId' }, nested: [{ $ref: '/0/placed/0' }, 'plain'], keep: { $ref: '/0/order', other: 1 } };
    expect(resolveReferences(body, of, 2)).toEqual({
      order_id: 41,
      nested: [placed, 'plain'],
      // An object with more than $ref is not a reference: its fields are looked into.
      keep: { $ref: '/0/order', other: 1 },
    });
    expect(resolveReferences({ a: { $ref: '/0/placed/0/a~1b' }, m: { $ref: '/0/placed/0/m~0n' } }, of, 1)).toEqual({ a: 'slash', m: 'tilde' });
  });

  it('refuses a reference to this operation, a later one, or nothing, naming the operation', () => {
    expect(refusal(() => resolveReferences({ x: { $ref: '/1/lines' } }, of, 1))).toBe('Operation 1: $ref "/1/lines" names no earlier operation');
    expect(refusal(() => resolveReferences({ x: { $ref: '/01/lines' } }, of, 2))).toMatch(/names no earlier operation/);
    expect(refusal(() => resolveReferences({ x: { $ref: '0/order' } }, of, 2))).toMatch(/is a JSON Pointer/);
    expect(refusal(() => resolveReferences({ x: { $ref: '/0/order/missing' } }, of, 2))).toBe('Operation 2: $ref "/0/order/missing" points at nothing');
    expect(refusal(() => resolveReferences({ x: { $ref: '/0/placed/1' } }, of, 2))).toMatch(/points at nothing/);
    expect(refusal(() => resolveReferences({ x: { $ref: '/0/order/constructor' } }, of, 2))).toMatch(/points at nothing/);
  });

  it('keeps a field named __proto__ a field', () => {
    const body = JSON.parse('{"__proto__": {"$ref": "/0/order/insertId"}}') as Record<string, unknown>;
    const resolved = resolveReferences(body, of, 1);
    expect(Object.getPrototypeOf(resolved)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(resolved, '__proto__')?.value).toBe(41);
  });

  it('answers a body without a reference as it is, and copies only what holds one, leaving the body unchanged', () => {
    const plain = { title: 'x', tags: ['a', { b: 1 }] };
    expect(resolveReferences(plain, of, 1)).toBe(plain);
    // Fields before the reference copied as fields too (a __proto__ among them), those beside it kept as they were.
    const text = '{"__proto__": {"p": 1}, "list": [1, {"$ref": "/0/order/insertId"}], "same": {"s": 2}, "last": "z"}';
    const body = JSON.parse(text) as Record<string, unknown>;
    const resolved = resolveReferences(body, of, 1);
    expect(Object.getPrototypeOf(resolved)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(resolved, '__proto__')?.value).toEqual({ p: 1 });
    expect(resolved.list).toEqual([1, 41]);
    expect(resolved.same).toBe(body.same);
    expect(resolved.last).toBe('z');
    // A deadlock runs the batch again from the same bodies: nothing of them was replaced.
    expect(body).toEqual(JSON.parse(text));
  });
});
