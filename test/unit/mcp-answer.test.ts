import { isJSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { ToolAnswer } from '../../runtime/mcp/call.js';
import { isPlainRequest } from '../../runtime/mcp/transport.js';

/**
 * The shortcuts a tool call takes (docs/internals/contract.md §16, docs/performance.md): its answer written from the
 * route's text, and its request taken without the SDK's schema when plainly one. Each must say what the long way says.
 */
describe('a tool call answer written from its route text', () => {
  /** What the endpoint wrote before: the text parsed back, and the whole made JSON. */
  const longWay = (text: string, isError: boolean) => {
    if (isError) return { content: [{ type: 'text', text }], isError: true };
    const answer: unknown = JSON.parse(text);
    const structured = typeof answer === 'object' && answer !== null && !Array.isArray(answer);
    return { content: [{ type: 'text', text }], ...(structured ? { structuredContent: answer } : {}) };
  };
  const texts = [
    JSON.stringify({ catalog: [{ item_id: 42, title: 'a "quoted" title\n\twith \\ and \u2028 and é', price: 9.5 }] }),
    JSON.stringify({ item: [], next: null }),
    JSON.stringify({ lone: '\ud800', nested: { deep: [[1], { a: null }] } }),
    JSON.stringify([{ a: 1 }]),
    'null',
    JSON.stringify({ message: 'role not held', status: 403 }),
  ];

  it('is the JSON the long way made, as text and as structured content', () => {
    for (const text of texts) {
      for (const isError of [false, true]) {
        const answer = new ToolAnswer(text, isError);
        expect(JSON.parse(answer.json())).toEqual(longWay(text, isError));
        expect(answer.toJSON()).toEqual(longWay(text, isError));
        // Made JSON whole (a batch's answers, the SDK), it says the same.
        expect(JSON.parse(JSON.stringify({ result: answer }))).toEqual({ result: longWay(text, isError) });
      }
    }
  });
});

describe('a request taken without the schema', () => {
  const requests: unknown[] = [
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x', arguments: { id: 42 } } },
    { jsonrpc: '2.0', id: 'a', method: 'tools/list' },
    { jsonrpc: '2.0', id: 1.5, method: 'tools/call', params: {} },
    { jsonrpc: '2.0', id: 2 ** 53, method: 'tools/call', params: {} },
    { jsonrpc: '2.0', id: null, method: 'tools/call', params: {} },
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: [] },
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: null },
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: 'text' },
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { _meta: { progressToken: 1 } } },
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { _meta: 'no object' } },
    { jsonrpc: '2.0', id: 1, method: 'tools/call', extra: true },
    { jsonrpc: '1.0', id: 1, method: 'tools/call' },
    { jsonrpc: '2.0', id: 1, method: 7 },
    JSON.parse('{"jsonrpc":"2.0","id":1,"method":"tools/call","__proto__":{"x":1}}'),
  ];

  it('is taken only when the schema takes it, and the plain ones are', () => {
    for (const request of requests) {
      const plain = isPlainRequest({ ...(request as object) });
      if (plain) expect(isJSONRPCRequest(request), JSON.stringify(request)).toBe(true);
    }
    expect(isPlainRequest({ ...(requests[0] as object) })).toBe(true);
    expect(isPlainRequest({ ...(requests[1] as object) })).toBe(true);
  });
});
