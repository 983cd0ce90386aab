import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, type JSONRPCMessage, type RequestId } from '@modelcontextprotocol/sdk/types.js';

/** What one HTTP request's JSON-RPC requests are handled for: its Koa context and who its caller is, as the endpoint made them. */
export type Exchange = object;

interface Waiting {
  /** The id the client gave the request. */
  id: RequestId;
  exchange: Exchange;
  answer: (message: JSONRPCMessage) => void;
}

/**
 * The one transport of a backend's MCP server (docs/internals/contract.md §16): every HTTP request's messages
 * reach the one `Server`, made once, and each request's answer goes back to the HTTP request it came in. The
 * SDK's StreamableHTTPServerTransport serves one connection: stateless, it takes a transport and a `connect` per
 * request, and converts each request through @hono/node-server into a web Request and back (its cost, measured,
 * is in docs/internals/performance.md). Two agents may both send id 1 at once: a request is handed to the server
 * under an id unique to this transport, and its answer given back under the client's own.
 *
 * Stateless and JSON-only: nothing the server sends on its own (a notification, a request of its own) has a
 * stream to travel in, so it is dropped; the server of this endpoint sends none.
 */
export class ExchangeTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: { requestInfo?: { headers: Record<string, string | string[] | undefined> } }) => void;

  private next = 0;
  private readonly waiting = new Map<number, Waiting>();

  async start(): Promise<void> {}

  async close(): Promise<void> {
    this.waiting.clear();
    this.onclose?.();
  }

  /** The exchange a request the server handles came in, by the id the server knows it by. */
  exchangeOf(id: RequestId): Exchange | undefined {
    return typeof id === 'number' ? this.waiting.get(id)?.exchange : undefined;
  }

  /**
   * One HTTP request's messages handed to the server: its answers, one per request, in the order the requests
   * came (notifications and a client's responses have none). `gone` ends the wait when the client goes away.
   */
  handle(messages: readonly JSONRPCMessage[], exchange: Exchange, gone?: AbortSignal): Promise<JSONRPCMessage[]> {
    const answers: Promise<JSONRPCMessage>[] = [];
    const ids: number[] = [];
    for (const message of messages) {
      if (!('method' in message)) continue; // A client's response to a request this server never sends.
      if (!('id' in message)) {
        this.onmessage?.(message);
        continue;
      }
      const id = this.next;
      this.next = this.next === Number.MAX_SAFE_INTEGER ? 0 : this.next + 1;
      ids.push(id);
      answers.push(
        new Promise<JSONRPCMessage>((answer) => {
          this.waiting.set(id, { id: message.id, exchange, answer });
        }),
      );
      this.onmessage?.({ ...message, id });
    }
    if (ids.length === 0) return Promise.resolve([]);
    // The client went away: its requests are answered to no one, so that the HTTP request ends (and the server's
    // count of requests in flight with it) whatever the handlers still do; their late answers are dropped.
    gone?.addEventListener('abort', () => {
      for (const id of ids) {
        const waiting = this.waiting.get(id);
        this.waiting.delete(id);
        waiting?.answer({ jsonrpc: '2.0', id: waiting.id, error: { code: ErrorCode.ConnectionClosed, message: 'Connection closed' } });
      }
    });
    return Promise.all(answers);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (!('id' in message) || 'method' in message || typeof message.id !== 'number') return;
    const waiting = this.waiting.get(message.id);
    // A request whose client went away: its answer has nowhere to go.
    if (waiting === undefined) return;
    this.waiting.delete(message.id);
    waiting.answer({ ...message, id: waiting.id } as JSONRPCMessage);
  }
}
