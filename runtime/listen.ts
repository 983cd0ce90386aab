import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';

/** Emitted on the Koa app when the server `listen` started closes: its background work stops too. */
export const STOPPED = 'xmlrest:stopped';

export interface RunningServer {
  server: Server;
  url: string;
  close(): Promise<void>;
}

export interface ListenOptions {
  maxHeaderBytes?: number | undefined;
  /** Longest a client may take to send a whole request; default 30 s. Slow clients are cut off (408). */
  requestTimeoutMs?: number | undefined;
  /** Longest a client may take to send its headers; default 10 s (never more than the request's). */
  headersTimeoutMs?: number | undefined;
  /** PEM certificate chain and key: serve HTTPS. */
  tls?: { cert: string | Buffer; key: string | Buffer } | undefined;
}

/** Listens on `port` (0 for a free one) and resolves once accepting connections. */
export async function listen(app: Koa, port: number, host = '127.0.0.1', options: ListenOptions = {}): Promise<RunningServer> {
  // Larger header blocks are answered 431 by Node itself, before any of this code runs. A client that
  // trickles its headers or body is cut off by Node too, checked every second, so that a few slow
  // connections cannot hold the server's sockets and memory (slowloris); 0 turns a limit off.
  const requestTimeout = options.requestTimeoutMs ?? 30_000;
  const headersTimeout = Math.min(options.headersTimeoutMs ?? 10_000, requestTimeout || Infinity);
  const limits = {
    maxHeaderSize: options.maxHeaderBytes ?? 16 * 1024,
    requestTimeout,
    headersTimeout: headersTimeout === Infinity ? 0 : headersTimeout,
    connectionsCheckingInterval: 1000,
  };
  const server = options.tls
    ? createHttpsServer({ ...limits, cert: options.tls.cert, key: options.tls.key }, app.callback())
    : createServer(limits, app.callback());
  server.listen(port, host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    server,
    url: `${options.tls ? 'https' : 'http'}://${shownHost}:${address.port}`,
    // Stops accepting (if it still does) and cuts every connection; a graceful stop drains first (shutdown.ts).
    close: () =>
      new Promise<void>((resolve) => {
        app.emit(STOPPED);
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
