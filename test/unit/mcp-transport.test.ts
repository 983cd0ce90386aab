import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { ExchangeTransport } from '../../runtime/mcp/transport.js';

/**
 * The MCP endpoint's one transport (runtime/mcp/transport.ts, docs/internals/contract.md §16), with a server that
 * holds what it is handed and answers when told: every caller's requests meet in one server, so that ids, answers and
 * notifications must never cross from one caller to another.
 */
function heldServer() {
  const transport = new ExchangeTransport();
  const held: { id: number; method: string }[] = [];
  const notified: JSONRPCMessage[] = [];
  transport.onmessage = (message) => {
    if ('id' in message) held.push(message as unknown as { id: number; method: string });
    else notified.push(message);
  };
  const answer = (request: { id: number }, result: object) => transport.send({ jsonrpc: '2.0', id: request.id, result } as JSONRPCMessage);
  return { transport, held, notified, answer };
}

const request = (id: unknown, method = 'tools/list') => ({ jsonrpc: '2.0', id, method }) as JSONRPCMessage;

describe("the MCP endpoint's transport", () => {
  it('gives two callers who send the same id each its own answer under that id, whichever the server answers first', async () => {
    const { transport, held, answer } = heldServer();
    const alices = transport.handle([request(1)], { caller: 'alice' });
    const bobs = transport.handle([request(1)], { caller: 'bob' });
    expect(held.map((message) => message.id)).toEqual([0, 1]);
    expect(transport.exchangeOf(held[0]!.id)).toEqual({ caller: 'alice' });
    await answer(held[1]!, { for: 'bob' });
    await answer(held[0]!, { for: 'alice' });
    expect(await alices).toEqual([{ jsonrpc: '2.0', id: 1, result: { for: 'alice' } }]);
    expect(await bobs).toEqual([{ jsonrpc: '2.0', id: 1, result: { for: 'bob' } }]);
  });

  it("hands no client's notification to the server (notifications/cancelled would name another caller's request)", async () => {
    const { transport, held, notified } = heldServer();
    const waiting = transport.handle([request(1)], { caller: 'alice' });
    const cancel = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: held[0]!.id } } as JSONRPCMessage;
    expect(await transport.handle([cancel], { caller: 'mallory' })).toEqual([]);
    expect(notified).toEqual([]);
    transport.abandon({ caller: 'nobody' });
    expect(transport.exchangeOf(held[0]!.id)).toEqual({ caller: 'alice' });
    void waiting;
  });

  it('answers a request the protocol does not take under its own id, and one whose id is no integer or text as invalid', async () => {
    const { transport, held } = heldServer();
    const answers = await transport.handle([{ jsonrpc: '2.0', id: 3, method: 'tools/list', params: null } as unknown as JSONRPCMessage], {});
    expect(answers).toEqual([{ jsonrpc: '2.0', id: 3, error: { code: -32600, message: 'Invalid Request' } }]);
    expect(await transport.handle([request(1.5)], {})).toEqual([{ jsonrpc: '2.0', id: 1.5, error: { code: -32600, message: 'Invalid Request' } }]);
    expect(held).toEqual([]);
  });

  it("answers a caller who went away, and begins no more of its batch's requests", async () => {
    const { transport, held } = heldServer();
    const exchange = { caller: 'alice' };
    const batch = transport.handle([request('a'), request('b')], exchange);
    expect(held).toHaveLength(1);
    transport.abandon(exchange);
    expect(await batch).toEqual([{ jsonrpc: '2.0', id: 'a', error: { code: -32000, message: 'Connection closed' } }]);
    expect(held).toHaveLength(1);
  });

  it('answers whatever it holds when closed, never leaving a request unanswered', async () => {
    const { transport } = heldServer();
    const waiting = transport.handle([request(9)], {});
    await transport.close();
    expect(await waiting).toEqual([{ jsonrpc: '2.0', id: 9, error: { code: -32000, message: 'Connection closed' } }]);
  });
});
