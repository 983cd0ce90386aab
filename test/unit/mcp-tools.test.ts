import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { backends } from '../../generated/index.js';
import { inlineRefs } from '../../runtime/mcp/schema.js';
import { toolsOf } from '../../runtime/mcp/tools.js';

/** A backend's tools made from the generated OpenAPI document (docs/internals/contract.md §16). */
const document = JSON.parse(readFileSync('generated/openapi.json', 'utf8')) as {
  paths: Record<string, Record<string, { operationId: string }>>;
};
const shop = backends.find((backend) => backend.name === 'shop')!;
const tools = toolsOf(document, shop);
const named = (name: string) => tools.find((tool) => tool.tool.name === name)!;

describe('toolsOf', () => {
  it('makes one tool per resource route method, named by its operationId, and none for a token request or a door', () => {
    const operations = Object.entries(document.paths)
      .filter(([path]) => path.startsWith('/shop/v'))
      .flatMap(([, item]) => Object.values(item).map((operation) => operation.operationId));
    const names = tools.map((tool) => tool.tool.name);
    // Token shape B takes a password: no tool. Shape A (/shop/), the batch and the webhooks are not resource routes.
    expect(names.sort()).toEqual(operations.filter((name) => name !== 'shop_token_v1_0_post').sort());
    expect(names).not.toContain('shop_batch');
    expect(names).not.toContain('shop_token');
  });

  it("takes a read's query parameters with their types and required ones, and no If-None-Match", () => {
    const order = named('shop_order_v1_0_get');
    expect(order.method).toBe('GET');
    expect(order.path).toBe('/shop/v1.0/order');
    expect(order.access).toEqual(['customer']);
    expect(order.tool.inputSchema).toEqual({
      type: 'object',
      properties: { order_id: { type: 'integer', minimum: 0, description: 'Compared with or stored in orders.order_id.' } },
      required: ['order_id'],
    });
    expect(order.headers).toEqual([]);
    expect(order.tool.annotations).toEqual({ readOnlyHint: true, idempotentHint: true, openWorldHint: false });
    expect(order.tool.title).toMatch(/^One of the caller's orders/);
    expect(order.tool.description).toContain('Requires the role `customer`');
    const output = order.tool.outputSchema as { type: string; required: string[] };
    expect(output.type).toBe('object');
    expect(output.required).toEqual(['order']);
  });

  it("takes a list's limit and after, and answers its next", () => {
    const products = named('shop_products_v3_0_get');
    const input = products.tool.inputSchema.properties as Record<string, { type: string; maximum?: number }>;
    expect(Object.keys(input)).toEqual(['max_price', 'q', 'sort', 'limit', 'after']);
    expect(input.limit).toMatchObject({ type: 'integer', maximum: 100 });
    expect(products.tool.inputSchema.required).toBeUndefined();
    expect((products.tool.outputSchema as { required: string[] }).required).toContain('next');
  });

  it("takes a write's JSON body fields and its headers by their names, If-Match required where the route requires it", () => {
    const put = named('shop_order_v1_0_put');
    expect(put.headers).toEqual(['If-Match']);
    expect(Object.keys(put.tool.inputSchema.properties ?? {})).toEqual(['If-Match', 'order_id', 'quantity']);
    expect(put.tool.inputSchema.required).toEqual(['If-Match', 'order_id', 'quantity']);
    expect(put.tool.annotations).toEqual({ readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false });
    const post = named('shop_orders_v1_0_post');
    expect(post.headers).toEqual(['Idempotency-Key']);
    expect(post.tool.inputSchema.required ?? []).not.toContain('Idempotency-Key');
    expect(post.tool.annotations).toMatchObject({ destructiveHint: false, idempotentHint: false });
    expect(named('shop_reviews_v1_0_delete').tool.annotations).toMatchObject({ destructiveHint: true, idempotentHint: true });
  });

  it('leaves no $ref to the document in any schema', () => {
    for (const { tool } of tools) expect(JSON.stringify([tool.inputSchema, tool.outputSchema ?? {}])).not.toContain('"$ref"');
  });

  it('sees a public route as public and every tool of every demo backend as a valid MCP tool name', () => {
    expect(named('shop_reviews_v1_0_get').access).toBeNull();
    for (const backend of backends) for (const { tool } of toolsOf(document, backend)) expect(tool.name).toMatch(/^[A-Za-z0-9_.-]{1,128}$/);
  });
});

describe('inlineRefs', () => {
  it('puts a component in place of its $ref, keeping the siblings', () => {
    const components = { Error: { type: 'object', properties: { message: { type: 'string' } } } };
    expect(inlineRefs({ type: 'array', items: { $ref: '#/components/schemas/Error', description: 'one' } }, components)).toEqual({
      type: 'array',
      items: { type: 'object', properties: { message: { type: 'string' } }, description: 'one' },
    });
  });

  it('keeps a schema that refers to itself once under $defs', () => {
    const components = { Node: { type: 'object', properties: { next: { $ref: '#/components/schemas/Node' } } } };
    const schema = inlineRefs({ $ref: '#/components/schemas/Node' }, components);
    expect(schema).toEqual({
      type: 'object',
      properties: { next: { $ref: '#/$defs/Node' } },
      $defs: { Node: { type: 'object', properties: { next: { $ref: '#/$defs/Node' } } } },
    });
  });
});
