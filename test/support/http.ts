import { type Agent, request } from 'node:http';

/**
 * One HTTP request with node:http, for what fetch cannot do: send from another
 * loopback address (127.0.0.2 is another client to the server), or send
 * headers fetch refuses.
 */
export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json(): unknown;
}

export interface RawRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** The client's own address: any of 127.0.0.0/8 on Linux. */
  from?: string;
  /** Keep-alive connections to reuse; by default each request has a connection of its own. */
  agent?: Agent;
}

export function send(url: string, options: RawRequest = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const body = options.body === undefined ? undefined : Buffer.from(options.body);
    const req = request(
      url,
      {
        method: options.method ?? (body ? 'POST' : 'GET'),
        headers: { ...(body ? { 'content-length': String(body.length) } : {}), ...options.headers },
        ...(options.from ? { localAddress: options.from } : {}),
        agent: options.agent ?? false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) as unknown });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** A form-encoded POST body and its content type. */
export function formBody(fields: Record<string, string>): { body: string; headers: Record<string, string> } {
  return { body: new URLSearchParams(fields).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } };
}

export function basicHeader(user: string, pass: string): string {
  return `Basic ${Buffer.from(`${user}:${pass}`, 'utf8').toString('base64')}`;
}
