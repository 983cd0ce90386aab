import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/**
 * A webhook receiver on loopback for the tests of docs/internals/contract.md §12: it
 * records every delivery to /hooks and verifies its signature with
 * `standardwebhooks`, the specification's reference implementation (never
 * with xmlrest's own code). What it answers is set by `mode`; `down()` stops
 * listening (the sender's connections are refused) and `up()` listens on the
 * same port again.
 */
export interface Delivery {
  id: string;
  timestamp: number;
  signature: string;
  body: string;
  /** What `Webhook.verify` returned: the parsed payload; undefined when the signature did not verify. */
  payload: { type: string; timestamp: string; data: Record<string, unknown> } | undefined;
  /** Why verification failed, when it did. */
  refused?: string;
  receivedAt: number;
  /** What the receiver answered (none when it hung). */
  answered?: number;
}

/** ok: 204; fail: 503; gone: 410; redirect: 302; hang: no answer; fail-first: 503 to each event's first attempt, then 204. */
export type ReceiverMode = 'ok' | 'fail' | 'gone' | 'redirect' | 'hang' | 'fail-first';

export class WebhookReceiver {
  readonly deliveries: Delivery[] = [];
  /** Requests to any other path (a redirect's target: never asked for). */
  readonly others: string[] = [];
  mode: ReceiverMode = 'ok';
  /** Answers (in mode ok) after this long: deliveries stay in flight meanwhile. */
  delayMs = 0;
  /** Requests being answered now. */
  inFlight = 0;
  port = 0;
  private server: Server | undefined;
  private readonly verifiers: Webhook[];

  /** `secrets`: any one of them must verify (a sender rotating its secret signs with each). */
  constructor(secrets: string[]) {
    this.verifiers = secrets.map((secret) => new Webhook(secret));
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks`;
  }

  /** Distinct event ids delivered and verified. */
  ids(): Set<string> {
    return new Set(this.deliveries.filter((delivery) => delivery.payload !== undefined).map((delivery) => delivery.id));
  }

  async up(): Promise<void> {
    const server = createServer((request, response) => void this.answer(request, response));
    server.keepAliveTimeout = 1000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Stops listening and cuts every connection: deliveries meanwhile find the port closed. */
  async down(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    if (request.url !== '/hooks') {
      this.others.push(request.url ?? '');
      response.end('landed');
      return;
    }
    const body = Buffer.concat(chunks).toString('utf8');
    const headers = {
      'webhook-id': String(request.headers['webhook-id'] ?? ''),
      'webhook-timestamp': String(request.headers['webhook-timestamp'] ?? ''),
      'webhook-signature': String(request.headers['webhook-signature'] ?? ''),
    };
    let payload: Delivery['payload'];
    let refused: string | undefined;
    for (const verifier of this.verifiers) {
      try {
        payload = verifier.verify(body, headers) as Delivery['payload'];
        break;
      } catch (error) {
        refused = (error as Error).message;
      }
    }
    const seenBefore = this.deliveries.some((delivery) => delivery.id === headers['webhook-id']);
    const delivery: Delivery = {
      id: headers['webhook-id'],
      timestamp: Number(headers['webhook-timestamp']),
      signature: headers['webhook-signature'],
      body,
      payload,
      ...(payload === undefined ? { refused } : {}),
      receivedAt: Date.now(),
    };
    this.deliveries.push(delivery);
    if (this.mode === 'hang') return; // never answered: the sender's timeout cuts it
    this.inFlight++;
    if (this.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
    this.inFlight--;
    const fail = this.mode === 'fail' || (this.mode === 'fail-first' && !seenBefore);
    delivery.answered = this.mode === 'gone' ? 410 : fail ? 503 : this.mode === 'redirect' ? 302 : payload === undefined ? 401 : 204;
    if (delivery.answered === 503) response.writeHead(503, { 'retry-after': '0' }).end('down for maintenance');
    else if (delivery.answered === 302) response.writeHead(302, { location: `http://127.0.0.1:${this.port}/landing` }).end();
    else response.writeHead(delivery.answered).end();
  }
}

/** A Standard Webhooks secret: whsec_ and 32 random bytes in base64. */
export function newSecret(): string {
  return `whsec_${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64')}`;
}
