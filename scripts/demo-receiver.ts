import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/**
 * The demo's webhook receiver (resources/desk/backend.xml's Webhook): on loopback, it checks each delivery's
 * signature with `standardwebhooks`, the specification's reference implementation, as a team's receiver would,
 * and prints it, so that `npm run demo` shows a webhook end to end with no outside URL.
 */
export interface DemoReceiver {
  url: string;
  close(): Promise<void>;
}

/** A Standard Webhooks secret: whsec_ and the base64 of 32 random bytes (docs/internals/contract.md §12). */
export function makeWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export async function startDemoReceiver(secret: string, say: (line: string) => void): Promise<DemoReceiver> {
  const verifier = new Webhook(secret);
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      try {
        verifier.verify(body, request.headers as Record<string, string>);
        say(`webhook received ${request.headers['webhook-id']}, signature verified: ${body}`);
        response.writeHead(204).end();
      } catch (error) {
        // A forged or stale delivery is refused as a receiver would: the sender tries again later.
        say(`webhook refused a delivery (${(error as Error).message})`);
        response.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/desk`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * The demo's webhook settings in `env` (process.env): those already set are kept, a missing secret is made and a
 * missing URL is the receiver started here. For the demo and for `npm run dev` in this repository.
 */
export async function setDemoWebhookEnv(env: NodeJS.ProcessEnv, say: (line: string) => void): Promise<void> {
  env.DESK_WEBHOOK_SECRET ||= makeWebhookSecret();
  env.DESK_WEBHOOK_URL ||= (await startDemoReceiver(env.DESK_WEBHOOK_SECRET, say)).url;
}
