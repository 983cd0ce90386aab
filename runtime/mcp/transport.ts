import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, isJSONRPCRequest, type JSONRPCMessage, McpError, type RequestId } from '@modelcontextprotocol/sdk/types.js';

/** What one HTTP request's JSON-RPC requests are handled for: its Koa context and who its caller is, as the endpoint made them. */
export type Exchange = object;

/** A request the transport answers from a handler of the server's own, without the server's generic dispatch; its result an object the endpoint writes (a tool call's ToolAnswer, call.ts). */
export type DirectHandler = (params: unknown, exchange: Exchange) => Promise<object>;

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
 * request, and converts each request through @hono/node-server into a web Request and back (measured on the demo's
 * one-row read: a tool call 0.16x to 0.35x the REST GET; docs/internals/contract.md §16). Two agents may both send id 1 at once: a request is handed to the server
 * under an id unique to this transport, and its answer given back under the client's own.
 *
 * Stateless and JSON-only: nothing the server sends on its own (a notification, a request of its own) has a
 * stream to travel in, so it is dropped; the server of this endpoint sends none. Nor does a client's notification
 * reach the server: each concerns a session, which this endpoint keeps none of, and `notifications/cancelled`
 * names a request by an id that, on this one server every caller shares, may be another caller's (a client ends
 * its own request by closing its HTTP request: `abandon`). A request the SDK's server would not take as one (its
 * params no object, say) is answered Invalid Request here: the server would drop it unanswered.
 */
export class ExchangeTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: { requestInfo?: { headers: Record<string, string | string[] | undefined> } }) => void;

  private next = 0;
  private readonly waiting = new Map<number, Waiting>();
  private readonly direct = new Map<string, DirectHandler>();
  /** The exchanges whose clients went away: a batch's later requests are not begun. */
  private readonly abandoned = new WeakSet<Exchange>();

  async start(): Promise<void> {}

  async close(): Promise<void> {
    // Nothing is left waiting unanswered: an HTTP request whose answer never came would never end.
    for (const waiting of this.waiting.values()) waiting.answer(closedAnswer(waiting.id));
    this.waiting.clear();
    this.onclose?.();
  }

  /**
   * A method whose requests go to the server's own handler for it at once, rather than through the SDK's generic
   * dispatch (Protocol: three zod checks of the message's kind, an AbortController, a chain of promises, some
   * 100 µs of a tool call's 250 measured): `tools/call`, every call of the endpoint. Its answer is made as the
   * SDK makes one (a result, or an McpError's code and message).
   */
  handleDirectly(method: string, handler: DirectHandler): void {
    this.direct.set(method, handler);
  }

  /** The exchange a request the server handles came in, by the id the server knows it by. */
  exchangeOf(id: RequestId): Exchange | undefined {
    return typeof id === 'number' ? this.waiting.get(id)?.exchange : undefined;
  }

  /**
   * One HTTP request's messages handed to the server: its answers, one per request, in the order the requests
   * came (notifications and a client's responses have none). A batch's requests run one after another, as a
   * client's lone requests on one connection do: a POST of a hundred tool calls never holds a hundred of the
   * database's connections at once, and stops at the first request after its client went away.
   */
  handle(messages: readonly JSONRPCMessage[], exchange: Exchange): Promise<JSONRPCMessage[]> {
    if (messages.length === 1) {
      const answer = this.dispatch(messages[0]!, exchange);
      return answer === undefined ? Promise.resolve([]) : answer.then((message) => [message]);
    }
    return this.inTurn(messages, exchange);
  }

  private async inTurn(messages: readonly JSONRPCMessage[], exchange: Exchange): Promise<JSONRPCMessage[]> {
    const answers: JSONRPCMessage[] = [];
    for (const message of messages) {
      if (this.abandoned.has(exchange)) break;
      const answer = this.dispatch(message, exchange);
      if (answer !== undefined) answers.push(await answer);
    }
    return answers;
  }

  /** One message handed to the server: its answer, or undefined for what has none. */
  private dispatch(message: JSONRPCMessage, exchange: Exchange): Promise<JSONRPCMessage> | undefined {
    // A client's response to a request this server never sends, or a notification (above): nothing to do.
    if (!('method' in message) || !('id' in message)) return undefined;
    const id = this.next;
    const request = { ...message, id };
    // The client's own id as the SDK's schema takes one (text or an integer): the request handed on carries ours.
    const validId = typeof message.id === 'string' || Number.isSafeInteger(message.id);
    if (!validId || (!isPlainRequest(request) && !isJSONRPCRequest(request))) {
      return Promise.resolve({ jsonrpc: '2.0', id: message.id, error: { code: ErrorCode.InvalidRequest, message: 'Invalid Request' } });
    }
    const direct = this.direct.get(message.method);
    if (direct !== undefined) return directly(message.id, direct, message.params, exchange);
    this.next = this.next === Number.MAX_SAFE_INTEGER ? 0 : this.next + 1;
    const answer = new Promise<JSONRPCMessage>((resolve) => {
      this.waiting.set(id, { id: message.id, exchange, answer: resolve });
    });
    this.onmessage?.(request);
    return answer;
  }

  /**
   * The client of an exchange went away: a batch's later requests are not begun, and the requests the server holds
   * are answered to no one at once (their late answers dropped). A tool call in flight runs to its end, as a REST
   * call whose client went away does: its route's transaction commits or rolls back whole, bounded in time by the
   * database's own limits (runtime/db/).
   */
  abandon(exchange: Exchange): void {
    this.abandoned.add(exchange);
    for (const [id, waiting] of this.waiting) {
      if (waiting.exchange !== exchange) continue;
      this.waiting.delete(id);
      waiting.answer(closedAnswer(waiting.id));
    }
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

const REQUEST_FIELDS = new Set(['jsonrpc', 'id', 'method', 'params']);

/**
 * A request the SDK's schema takes (JSONRPCRequestSchema: these four fields alone, an integer or text id, params an
 * object), known without it when its params carry no `_meta`, whose fields the schema checks one by one: the
 * zod check is some 7 µs of every call (measured in a CPU profile of the bench's tools/call), and a call's params
 * are checked again by its handler. Anything else is left to the schema, which says the same or no.
 */
export function isPlainRequest(request: Record<string, unknown>): boolean {
  for (const field in request) if (!REQUEST_FIELDS.has(field)) return false;
  const { jsonrpc, id, method, params } = request;
  if (jsonrpc !== '2.0' || typeof method !== 'string' || !(typeof id === 'string' || Number.isSafeInteger(id))) return false;
  if (params === undefined) return true;
  return typeof params === 'object' && params !== null && !Array.isArray(params) && !('_meta' in params);
}

/** A request's answer from a direct handler, as the SDK's Protocol answers one: its result, or its error's code and message. */
function directly(id: RequestId, handler: DirectHandler, params: unknown, exchange: Exchange): Promise<JSONRPCMessage> {
  return handler(params, exchange).then(
    (result) => ({ jsonrpc: '2.0', id, result }) as JSONRPCMessage,
    (error: unknown) => {
      // An McpError says what the request did wrong; anything else is the server's fault, and says no more.
      const known = error instanceof McpError;
      return { jsonrpc: '2.0', id, error: { code: known ? error.code : ErrorCode.InternalError, message: known ? error.message : 'Internal error' } };
    },
  );
}

/** The answer of a request whose client went away, or whose server closed. */
function closedAnswer(id: RequestId): JSONRPCMessage {
  return { jsonrpc: '2.0', id, error: { code: ErrorCode.ConnectionClosed, message: 'Connection closed' } };
}
