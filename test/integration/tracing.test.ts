import { readFileSync, rmSync } from 'node:fs';
import { type AddressInfo, createServer, type Socket } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BuiltServer, startBuiltServer } from '../support/built-server.js';
import { basicHeader, formBody, send } from '../support/http.js';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../support/otlp-receiver.js';

/**
 * Traces (docs/internals/contract.md §13), from the built server as `npm start` runs it, exported by OpenTelemetry's
 * Node SDK over OTLP/HTTP (protobuf, its default) to a collector of the test's own on loopback: a span per
 * request continuing the caller's traceparent, a child span per SQL step holding its statement's text and no
 * value, the route and the reason as attributes, the trace id in the request's log line. Unset, nothing of
 * OpenTelemetry is loaded at all.
 */
const MODULES = path.resolve('test/.tmp/tracing-modules');
const LOADED = path.resolve('test/support/loaded-modules.mjs');
let receiver: OtlpReceiver;
let traced: BuiltServer;
let untraced: BuiltServer;

beforeAll(async () => {
  rmSync(MODULES, { recursive: true, force: true });
  receiver = await startOtlpReceiver();
  const loading = (name: string) => ({ nodeArgs: ['--import', LOADED], env: { LOADED_MODULES_FILE: `${MODULES}-${name}.txt` } });
  [traced, untraced] = await Promise.all([
    startBuiltServer({
      nodeArgs: loading('traced').nodeArgs,
      // The batch goes out every 100 ms instead of the SDK's 5 s, so that the test waits for nothing.
      env: {
        ...loading('traced').env,
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_BSP_SCHEDULE_DELAY: '100',
        OTEL_RESOURCE_ATTRIBUTES: 'service.name=shop-api,deployment.environment=test',
      },
    }),
    startBuiltServer(loading('untraced')),
  ]);
});

afterAll(async () => {
  await Promise.all([traced?.stop(), untraced?.stop()]);
  await receiver?.close();
  rmSync(`${MODULES}-traced.txt`, { force: true });
  rmSync(`${MODULES}-untraced.txt`, { force: true });
});

/** The spans of one trace, once its request's span has arrived. */
async function traceOf(traceId: string, requestSpanName: RegExp): Promise<ReceivedSpan[]> {
  await expect.poll(() => receiver.spans.some((span) => span.traceId === traceId && requestSpanName.test(span.name)), { timeout: 15_000 }).toBe(true);
  return receiver.spans.filter((span) => span.traceId === traceId);
}

/**
 * The request's access log line, once it has come: the server writes it before it answers, but the test reads
 * the server's stdout and the response on two different pipes, so the answer can arrive first.
 */
async function logLineOf(server: BuiltServer, requestId: string): Promise<Record<string, unknown>> {
  const line = () => server.logs.find((entry) => entry.msg === 'request' && entry.requestId === requestId);
  await expect.poll(line, { timeout: 5_000 }).toBeDefined();
  return line()!;
}

describe('traces, with OTEL_EXPORTER_OTLP_ENDPOINT set', () => {
  it('continues the caller’s traceparent: the request a server span, its SELECT a child with the statement’s text', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const callerSpan = '00f067aa0ba902b7';
    const before = BigInt(Date.now()) * 1_000_000n;
    const response = await send(`${traced.url}/shop/v2.0/products?max_price=30`, {
      headers: { traceparent: `00-${traceId}-${callerSpan}-01`, tracestate: 'shop=t61rcWkgMzE' },
    });
    const after = BigInt(Date.now()) * 1_000_000n;
    expect(response.status).toBe(200);
    const spans = await traceOf(traceId, /^GET /);
    const request = spans.find((span) => span.kind === 2)!;
    expect(request).toMatchObject({
      name: 'GET /shop/v2.0/products',
      parentSpanId: callerSpan,
      attributes: { 'http.route': '/shop/v2.0/products', 'http.request.method': 'GET', 'http.response.status_code': 200, 'xmlrest.backend': 'shop' },
      resource: { 'service.name': 'shop-api' },
    });
    const statement = spans.find((span) => span.parentSpanId === request.spanId)!;
    expect(statement).toMatchObject({ name: 'SELECT', kind: 3, attributes: { 'db.system.name': 'mysql', 'db.operation.name': 'SELECT' } });
    // As the SDK's spans carried them: the caller's trace state on both, the flags (sampled; the parent known
    // remote or local, 0x100, and remote, 0x200), the tracer's scope, and wall-clock times, the statement's
    // within the request's, the request's within the test's own readings (a second's slack for the clocks' grain).
    expect(request).toMatchObject({ traceState: 'shop=t61rcWkgMzE', flags: 0x301, scope: { name: 'xmlrest' } });
    expect(statement).toMatchObject({ traceState: 'shop=t61rcWkgMzE', flags: 0x101, scope: { name: 'xmlrest' } });
    const [start, end] = [BigInt(request.startTimeUnixNano), BigInt(request.endTimeUnixNano)];
    const [statementStart, statementEnd] = [BigInt(statement.startTimeUnixNano), BigInt(statement.endTimeUnixNano)];
    expect(start).toBeGreaterThan(before - 1_000_000_000n);
    expect(end).toBeLessThan(after + 1_000_000_000n);
    expect(statementStart).toBeGreaterThanOrEqual(start);
    expect(statementEnd).toBeGreaterThan(statementStart);
    expect(statementEnd).toBeLessThanOrEqual(end);
    const products = readFileSync('generated/shop/products@2.0.ts', 'utf8');
    expect(products).toContain(String(statement.attributes['db.query.text']));
    expect(statement.attributes['db.query.text']).toContain('where price <= ?');
    // The value stays a parameter: never in a span.
    expect(JSON.stringify(spans)).not.toContain('max_price=30');
    expect(await logLineOf(traced, String(response.headers['x-request-id']))).toMatchObject({ trace_id: traceId, status: 200 });
  });

  it('makes a transaction a span whose statements are its children, and never records a value', async () => {
    const token = await send(`${traced.url}/shop/v1.0/token`, { method: 'POST', ...formBody({ user: 'alice', pass: 'alice-pass' }) });
    expect(token.status).toBe(201);
    const secret = 'a review only alice wrote 8675309';
    const posted = await send(`${traced.url}/shop/v1.0/reviews`, {
      method: 'POST',
      ...formBody({ product_id: '1', stars: '5', body: secret }),
      headers: { ...formBody({}).headers, authorization: `Bearer ${(token.json() as { token: string }).token}` },
    });
    expect(posted.status).toBe(201);
    const traceId = String((await logLineOf(traced, String(posted.headers['x-request-id']))).trace_id);
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    const spans = await traceOf(traceId, /^POST /);
    const request = spans.find((span) => span.name === 'POST /shop/v1.0/reviews')!;
    expect(request.parentSpanId).toBe('');
    const transaction = spans.find((span) => span.name === 'transaction')!;
    expect(transaction.parentSpanId).toBe(request.spanId);
    const insert = spans.find((span) => span.name === 'INSERT')!;
    expect(insert.parentSpanId).toBe(transaction.spanId);
    expect(insert.attributes['db.query.text']).toBe('insert into reviews (user_id, product_id, stars, body) values (?, ?, ?, ?)');
    expect(JSON.stringify(spans)).not.toContain('8675309');
    expect(JSON.stringify(spans)).not.toContain('alice-pass');
    // Nor anywhere in what was sent, decoded or not (an event, a status message).
    expect(Buffer.concat(receiver.bodies).includes('8675309')).toBe(false);
    expect(Buffer.concat(receiver.bodies).includes('alice-pass')).toBe(false);
  });

  it('names a failed statement by its code, never by the database’s message, which quotes the value', async () => {
    // The second note with the same title breaks the unique key: MariaDB's message quotes the title.
    const secret = `a title only carol chose ${Date.now()}`;
    const post = () =>
      send(`${traced.url}/staff/v1.0/notes`, {
        method: 'POST',
        ...formBody({ title: secret, body: 'twice' }),
        headers: { ...formBody({}).headers, authorization: basicHeader('carol', 'carol-pass') },
      });
    expect((await post()).status).toBe(201);
    const failed = await post();
    expect(failed.status).toBeGreaterThanOrEqual(400);
    const traceId = String((await logLineOf(traced, String(failed.headers['x-request-id']))).trace_id);
    const spans = await traceOf(traceId, /^POST /);
    const insert = spans.find((span) => span.name === 'INSERT')!;
    expect(insert).toMatchObject({ attributes: { 'error.type': 'ER_DUP_ENTRY' }, status: { code: 2 } });
    // The bytes hold the statements' text as written (so that a value would be found in them too), and no message.
    expect(Buffer.concat(receiver.bodies).includes('insert into notes (user_id, title, body) values (?, ?, ?)')).toBe(true);
    expect(Buffer.concat(receiver.bodies).includes('Duplicate entry')).toBe(false);
    expect(Buffer.concat(receiver.bodies).includes(secret)).toBe(false);
  });

  it('names a refusal’s reason, and marks a refusal as no error of the server', async () => {
    // The caller says "not sampled": the server's sampler decides alone (all, by default), so the span still comes.
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    const refused = await send(`${traced.url}/shop/v1.0/orders`, { headers: { traceparent: `00-${traceId}-b7ad6b7169203331-00` } });
    expect(refused.status).toBe(403);
    expect((await logLineOf(traced, String(refused.headers['x-request-id']))).trace_id).toBe(traceId);
    const [request] = await traceOf(traceId, /^GET /);
    expect(request).toMatchObject({
      name: 'GET /shop/v1.0/orders',
      attributes: { 'http.response.status_code': 403, 'xmlrest.reason': 'no_credentials', 'xmlrest.resource': 'orders@1.0' },
      status: { code: 0 },
    });
    expect(receiver.contentTypes.every((type) => type === 'application/x-protobuf')).toBe(true);
  });
});

describe('traces, with the database down', () => {
  it('marks the request span an error (a 503), and its statement by the fault’s reason', async () => {
    const down = await startBuiltServer({
      env: { DATABASE_URL: 'mysql://nobody:pw@127.0.0.1:1/none', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '100' },
    });
    try {
      const response = await send(`${down.url}/shop/v1.0/products`);
      expect(response.status).toBe(503);
      const line = await logLineOf(down, String(response.headers['x-request-id']));
      const spans = await traceOf(String(line.trace_id), /^GET /);
      const request = spans.find((span) => span.kind === 2)!;
      expect(request).toMatchObject({ attributes: { 'http.response.status_code': 503, 'xmlrest.reason': line.reason }, status: { code: 2 } });
      const select = spans.find((span) => span.name === 'SELECT')!;
      expect(select).toMatchObject({ parentSpanId: request.spanId, attributes: { 'error.type': expect.stringMatching(/^db_/) }, status: { code: 2 } });
    } finally {
      await down.stop();
    }
  });
});

describe('traces, with a collector that takes the connection and never answers', () => {
  it('answers every request as usual, and a graceful stop still ends on its own', async () => {
    const sockets: Socket[] = [];
    const silent = createServer((socket) => sockets.push(socket.on('error', () => {})));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const stuck = await startBuiltServer({
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`, OTEL_BSP_SCHEDULE_DELAY: '50' },
    });
    try {
      for (let i = 0; i < 5; i++) expect((await send(`${stuck.url}/shop/v1.0/products`)).status).toBe(200);
      // The exporter has posted a batch and is waiting on it.
      await expect.poll(() => sockets.length, { timeout: 10_000 }).toBeGreaterThan(0);
      expect((await send(`${stuck.url}/shop/v1.0/products`)).status).toBe(200);
      // Its own exit (code 0), not the helper's SIGKILL 15 s on (code null): the flush waits 3 s at most.
      expect(await stuck.stop()).toBe(0);
    } finally {
      await stuck.stop();
      for (const socket of sockets) socket.destroy();
      silent.close();
    }
  });
});

describe('traces, with no OTLP endpoint', () => {
  it('loads nothing of OpenTelemetry, and its log lines carry no trace id', async () => {
    const response = await send(`${untraced.url}/shop/v1.0/products`, { headers: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' } });
    expect(response.status).toBe(200);
    const untracedModules = readFileSync(`${MODULES}-untraced.txt`, 'utf8');
    // The hook sees the server's own modules (so it works), and the traced server's OpenTelemetry.
    expect(untracedModules).toContain('/dist/runtime/tracing/index.js');
    expect(readFileSync(`${MODULES}-traced.txt`, 'utf8')).toContain('/node_modules/@opentelemetry/sdk-node/');
    expect(untracedModules).not.toContain('@opentelemetry');
    expect(untracedModules).not.toContain('/dist/runtime/tracing/open-telemetry.js');
    const line = await logLineOf(untraced, String(response.headers['x-request-id']));
    expect(line).toMatchObject({ status: 200 });
    expect(line).not.toHaveProperty('trace_id');
  });
});
