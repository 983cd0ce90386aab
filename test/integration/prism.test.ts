import { type ChildProcess, spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/mariadb.js';
import { type BuiltServer, startBuiltServer } from '../support/built-server.js';

/**
 * The OpenAPI document tells the truth, as judged by a client nobody here
 * wrote: Stoplight Prism, as a validating proxy (`prism proxy
 * generated/openapi.json <server> --errors`) in front of the built server,
 * checks every request and every answer of a scripted session of the demo's
 * calls, refusals included, against the document. Any violation turns the
 * answer into Prism's own error, and adds an sl-violations header.
 */
interface Proxy {
  url: string;
  child: ChildProcess;
  log: () => string;
}

async function prism(upstream: string): Promise<Proxy> {
  const port = await freePort();
  let log = '';
  const child = spawn(
    process.execPath,
    ['node_modules/@stoplight/prism-cli/dist/index.js', 'proxy', 'generated/openapi.json', upstream, '--errors', '--host', '127.0.0.1', '--port', String(port)],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stdout!.on('data', (chunk: Buffer) => (log += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (log += chunk.toString()));
  for (let i = 0; i < 600 && !log.includes('Prism is listening'); i++) {
    if (child.exitCode !== null) throw new Error(`prism exited: ${log}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (!log.includes('Prism is listening')) throw new Error(`prism did not start: ${log}`);
  return { url: `http://127.0.0.1:${port}`, child, log: () => log };
}

let server: BuiltServer;
let down: BuiltServer;
let proxy: Proxy;
let proxyOfDown: Proxy;

beforeAll(async () => {
  server = await startBuiltServer();
  // The same server with its database nowhere: every database fault answers 503.
  down = await startBuiltServer({ env: { DATABASE_URL: 'mysql://u:p@127.0.0.1:1/none', QUERY_TIMEOUT_MS: '1000' } });
  [proxy, proxyOfDown] = await Promise.all([prism(server.url), prism(down.url)]);
}, 120_000);

afterAll(async () => {
  proxy?.child.kill();
  proxyOfDown?.child.kill();
  await server?.stop();
  await down?.stop();
});

interface Call {
  method?: string;
  path: string;
  form?: Record<string, string>;
  json?: unknown;
  authorization?: string;
}

async function through(at: Proxy, call: Call): Promise<{ status: number; violations: string | null; body: string }> {
  const headers: Record<string, string> = {};
  let body: string | undefined;
  if (call.authorization) headers.authorization = call.authorization;
  if (call.form) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(call.form).toString();
  } else if (call.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(call.json);
  }
  const response = await fetch(at.url + call.path, { method: call.method ?? (body ? 'POST' : 'GET'), headers, body });
  return { status: response.status, violations: response.headers.get('sl-violations'), body: await response.text() };
}

const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;

describe('the OpenAPI document, checked by Prism as a validating proxy', () => {
  it('describes every answer of the demo’s calls, refusals included', async () => {
    const token = async (user: string) => {
      const issued = await through(proxy, { path: '/shop/v1.0/token', form: { user, pass: `${user}-pass` } });
      expect(issued.status, issued.body).toBe(201);
      return `Bearer ${(JSON.parse(issued.body) as { token: string }).token}`;
    };
    const alice = await token('alice');
    const bob = await token('bob');
    // Requests the document allows, answered with every status the server gives them. A request the document
    // forbids (a missing field, no credentials where it names a security scheme) Prism refuses itself: it
    // never reaches the server, so the 403 for no credentials is tested over plain HTTP elsewhere.
    const session: [Call, number][] = [
      [{ path: '/shop/v1.0/products' }, 200],
      [{ path: '/shop/v2.0/products?max_price=25' }, 200],
      [{ path: '/shop/v1.0/reviews?product_id=1' }, 200],
      [{ path: '/shop/v1.0/token', form: { user: 'alice', pass: 'wrong-pass' } }, 401],
      [{ path: '/shop/', form: { auth: 'bearer', userid: 'bob', password: 'bob-pass' } }, 200],
      [{ path: '/shop/', form: { auth: 'bearer', userid: 'bob', password: 'wrong-pass' } }, 401],
      [{ path: '/shop/v1.0/orders', authorization: alice }, 200],
      [{ path: '/shop/v1.0/orders', form: { product_id: '2', quantity: '1' }, authorization: alice }, 201],
      [{ path: '/shop/v1.0/orders', json: { product_id: 2, quantity: 1 }, authorization: alice }, 201],
      [{ path: '/shop/v1.0/orders', authorization: 'Bearer not.a.token' }, 401],
      [{ path: '/shop/v1.0/report', authorization: alice }, 403],
      [{ path: '/shop/v1.0/report', authorization: bob }, 200],
      [{ path: '/shop/v1.0/account', authorization: alice }, 200],
      [{ path: '/shop/v1.0/reviews', form: { product_id: '1', stars: '5', body: 'Lovely' }, authorization: alice }, 201],
      [{ path: '/shop/v1.0/reviews', form: { product_id: '1', stars: '9', body: 'Out of range' }, authorization: alice }, 400],
      [{ method: 'DELETE', path: '/shop/v1.0/reviews?review_id=1', authorization: alice }, 403],
      [{ path: '/staff/v1.0/me', authorization: basic('carol', 'carol-pass') }, 200],
      [{ path: '/staff/v1.0/me', authorization: basic('carol', 'wrong') }, 401],
      [{ path: '/staff/v1.0/me', authorization: basic('dave', 'dave-pass') }, 403],
      [{ path: '/staff/v1.0/notes', form: { title: 'prism', body: 'checked' }, authorization: basic('carol', 'carol-pass') }, 201],
      [{ path: '/staff/v1.0/notes', form: { title: 'prism', body: 'again' }, authorization: basic('carol', 'carol-pass') }, 409],
      [{ path: '/staff/v1.0/board', authorization: basic('carol', 'carol-pass') }, 200],
      // Lists (docs/internals/contract.md §11): pages with next and the Link header, filters, sorts, and a cursor the server refuses.
      [{ path: '/shop/v3.0/products?limit=2' }, 200],
      [{ path: '/shop/v3.0/products?limit=1&sort=-price&max_price=30&q=e' }, 200],
      [{ path: '/shop/v3.0/products?after=not-a-cursor' }, 400],
      [{ path: '/shop/v2.0/orders?limit=1&sort=quantity', authorization: alice }, 200],
    ];
    for (const [call, status] of session) {
      const answer = await through(proxy, call);
      const what = `${call.method ?? (call.form || call.json ? 'POST' : 'GET')} ${call.path}: ${answer.body.slice(0, 300)}\n${proxy.log().slice(-2000)}`;
      expect(answer.violations, what).toBeNull();
      expect(answer.status, what).toBe(status);
    }
    // The page after a cursor, and the last page, whose next is null.
    const first = await through(proxy, { path: '/shop/v3.0/products?limit=2' });
    const next = (JSON.parse(first.body) as { next: string }).next;
    const last = await through(proxy, { path: `/shop/v3.0/products?limit=2&after=${next}` });
    expect(last.violations, last.body).toBeNull();
    expect(JSON.parse(last.body)).toMatchObject({ next: null });
  }, 60_000);

  it('describes 429 with Retry-After on the token endpoints and HTTP Basic', async () => {
    // Failed logins of one name from one address: the eleventh is refused before any password check.
    for (const [path, call] of [
      ['/shop/v1.0/token', () => ({ path: '/shop/v1.0/token', form: { user: 'prism-guess-b', pass: 'wrong' } })],
      ['/shop/', () => ({ path: '/shop/', form: { auth: 'bearer', userid: 'prism-guess-a', password: 'wrong' } })],
      ['/staff/v1.0/me', () => ({ path: '/staff/v1.0/me', authorization: basic('prism-guess-basic', 'wrong') })],
    ] as [string, () => Call][]) {
      let last = { status: 0, violations: null as string | null, body: '' };
      for (let n = 1; n <= 11; n++) last = await through(proxy, call());
      expect(last.violations, `${path}: ${last.body}`).toBeNull();
      expect(last.status, path).toBe(429);
    }
  }, 60_000);

  it('describes 503 with Retry-After when the database is unreachable', async () => {
    for (const call of [
      { path: '/shop/v1.0/products' },
      { path: '/shop/v1.0/token', form: { user: 'alice', pass: 'alice-pass' } },
      { path: '/staff/v1.0/me', authorization: basic('carol', 'carol-pass') },
    ]) {
      const answer = await through(proxyOfDown, call);
      expect(answer.violations, `${call.path}: ${answer.body}`).toBeNull();
      expect(answer.status, call.path).toBe(503);
    }
  }, 60_000);
});
