import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

/**
 * One delivery attempt: a POST of the event's body with the Standard Webhooks
 * headers. Status handling as the specification suggests ("Delivery success
 * and failure"): a 2xx is delivered; a 410 Gone stops the webhook; anything
 * else, a redirect included (never followed: node:http has no notion of
 * following one, and its Location is never read), a timeout or a broken
 * connection, is a failed attempt, tried again later, no sooner than a
 * `Retry-After` asks. The whole attempt, the answer's body included, is cut
 * after `timeoutMs`; at most ANSWER_BYTES of the body are read, the rest
 * dropped with the connection.
 *
 * node:http rather than fetch: fetch (undici's, in Node 20) took about twice
 * the CPU per request here, and a server delivers a thousand events a second.
 * Connections are kept alive, one agent per webhook's origin, at most
 * `sockets` each, so that a receiver sees at most that many at once.
 */
export type Attempt =
  | { outcome: 'delivered'; status: number }
  | { outcome: 'gone'; status: 410 }
  | { outcome: 'failed'; status: number | null; error: string; retryAfterMs?: number };

const ANSWER_BYTES = 64 * 1024;
const USER_AGENT = 'xmlrest-webhooks/1';

/** Where a webhook's requests go, worked out once per URL. */
interface Destination {
  request: typeof httpRequest;
  options: { protocol: string; hostname: string; port: string; path: string; agent: HttpAgent };
}

/** An attempt that took longer than its timeout, cut off by the sender. */
class TimedOut extends Error {
  override readonly name = 'TimeoutError';
}

export class Sender {
  private readonly destinations = new Map<string, Destination>();
  private readonly agents = new Map<string, HttpAgent>();

  constructor(
    private readonly sockets: number,
    private readonly timeoutMs: number,
  ) {}

  send(url: string, headers: Record<string, string>, body: string): Promise<Attempt> {
    const { request, options } = this.destination(url);
    const payload = Buffer.from(body);
    return new Promise<Attempt>((resolve) => {
      let done = false;
      const settle = (outcome: Attempt) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        resolve(outcome);
      };
      const failed = (error: unknown) => settle({ outcome: 'failed', status: null, error: describe(error, this.timeoutMs) });
      const call = request(
        {
          ...options,
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': String(payload.length), 'user-agent': USER_AGENT, ...headers },
        },
        (response) => {
          drain(response).then(() => settle(attempt(response)), failed);
        },
      );
      // One timer for the whole attempt, the answer included: past it the request and its connection are destroyed.
      const timer = setTimeout(() => call.destroy(new TimedOut()), this.timeoutMs);
      call.on('error', failed);
      call.end(payload);
    });
  }

  private destination(url: string): Destination {
    let destination = this.destinations.get(url);
    if (destination === undefined) {
      const target = new URL(url);
      const secure = target.protocol === 'https:';
      let agent = this.agents.get(target.origin);
      if (agent === undefined) {
        const options = { keepAlive: true, maxSockets: this.sockets, maxFreeSockets: this.sockets, scheduling: 'lifo' as const };
        agent = secure ? new HttpsAgent(options) : new HttpAgent(options);
        this.agents.set(target.origin, agent);
      }
      destination = {
        request: secure ? httpsRequest : httpRequest,
        options: {
          protocol: target.protocol,
          hostname: target.hostname.replace(/^\[|\]$/g, ''),
          port: target.port,
          path: `${target.pathname}${target.search}`,
          agent,
        },
      };
      this.destinations.set(url, destination);
    }
    return destination;
  }

  /** Closes the kept-alive connections (a graceful stop). */
  close(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }
}

function attempt(response: IncomingMessage): Attempt {
  const status = response.statusCode ?? 0;
  if (status >= 200 && status < 300) return { outcome: 'delivered', status };
  if (status === 410) return { outcome: 'gone', status };
  const header = response.headers['retry-after'];
  const retryAfterMs = retryAfter(typeof header === 'string' ? header : null);
  const error =
    status >= 300 && status < 400
      ? `the receiver answered ${status}, a redirect (never followed: give the webhook its final URL)`
      : `the receiver answered ${status}`;
  return { outcome: 'failed', status, error, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
}

/** Reads the answer's body up to ANSWER_BYTES (so that its connection serves the next delivery); past that, drops the connection. */
function drain(response: IncomingMessage): Promise<void> {
  return new Promise((resolve, reject) => {
    let read = 0;
    response.on('data', (chunk: Buffer) => {
      read += chunk.length;
      if (read > ANSWER_BYTES) {
        response.destroy();
        resolve();
      }
    });
    response.on('end', resolve);
    response.on('error', reject);
    response.on('aborted', () => reject(new Error('the answer was cut')));
  });
}

/** Why an attempt got no answer, in words for the log and the operators (never the body sent). */
function describe(error: unknown, timeoutMs: number): string {
  const named = error as { name?: string; message?: string; code?: string };
  if (error instanceof TimedOut) return `no answer within ${timeoutMs} ms: cut off`;
  if (named.code) return `cannot reach the receiver (${named.code})`;
  return `cannot reach the receiver (${named.message ?? String(error)})`;
}

/** `Retry-After` as milliseconds: seconds, or an HTTP date; undefined when absent or unreadable. */
export function retryAfter(value: string | null): number | undefined {
  if (value === null) return undefined;
  if (/^[0-9]{1,9}$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}
