import { trace } from '@opentelemetry/api';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Queryable } from '../../runtime/db/index.js';
import type { Tracing } from '../../runtime/tracing/index.js';
import { openTelemetry } from '../../runtime/tracing/open-telemetry.js';

/**
 * A request the sampler drops (docs/internals/contract.md §17): no span is made for it, not even one that records
 * nothing, and no clock is read for it; its trace id (the caller's, or a new one) is still there for its log line.
 * OpenTelemetry's SDK as the server starts it, with a ratio of 0; the collector is a port nothing listens on,
 * which no span reaches anyway.
 */
const ENV = {
  OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9',
  OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
  OTEL_TRACES_SAMPLER_ARG: '0',
};
let tracing: Tracing;

beforeAll(() => {
  // The SDK reads its OTEL_* variables from process.env itself.
  Object.assign(process.env, ENV);
  tracing = openTelemetry(process.env, 'test');
});

afterAll(async () => {
  await tracing.shutdown();
  for (const name of Object.keys(ENV)) delete process.env[name];
});

afterEach(() => {
  vi.restoreAllMocks();
});

const db: Queryable = {
  select: () => Promise.resolve([]),
  write: () => Promise.resolve({ affectedRows: 0, insertId: 0 }),
};
const outcome = { status: 200, route: '/shop/v1.0/products', backend: 'shop', resource: 'products@1.0', reason: undefined, requestId: 'r-1' };

/** Every way the process reads a clock, and the SDK's way of making a span, each counted. */
function watch() {
  return [
    vi.spyOn(performance, 'now'),
    vi.spyOn(Date, 'now'),
    vi.spyOn(process, 'hrtime'),
    vi.spyOn(process.hrtime, 'bigint'),
    vi.spyOn(trace.getTracer('xmlrest', 'test'), 'startSpan'),
  ];
}

describe('a request the sampler drops', () => {
  it('makes no span and reads no clock, from its begin to its end, its statements run as they are', () => {
    const spies = watch();
    const dropped = tracing.begin({}, 'GET', '/shop/v1.0/products', 1234.5);
    expect(dropped.statements(db)).toBe(db);
    dropped.end(outcome);
    for (const spy of spies) expect(spy).not.toHaveBeenCalled();
    // A new trace id for the log line: 32 hex digits, not all zeros (invalid in W3C trace context).
    expect(dropped.traceId).toMatch(/^(?!0{32})[0-9a-f]{32}$/);
    expect(tracing.begin({}, 'GET', '/shop/v1.0/products', 1234.5).traceId).not.toBe(dropped.traceId);
  });

  it('keeps the caller’s trace id for its log line, whatever flag the caller sends', () => {
    const spies = watch();
    for (const flags of ['01', '00']) {
      const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
      const dropped = tracing.begin({ traceparent: `00-${traceId}-00f067aa0ba902b7-${flags}` }, 'GET', '/shop/v1.0/products', 1234.5);
      expect(dropped.traceId).toBe(traceId);
      expect(dropped.statements(db)).toBe(db);
      dropped.end(outcome);
    }
    for (const spy of spies) expect(spy).not.toHaveBeenCalled();
  });

  it('runs a transaction as the database runs it, with no span around it', async () => {
    const spies = watch();
    const dropped = tracing.begin({}, 'POST', '/shop/v1.0/reviews', 1234.5);
    let given: Queryable | undefined;
    const answer = await dropped.transaction({ transaction: (work) => work(db) }, async (inside) => {
      given = inside;
      return 'done';
    });
    expect(answer).toBe('done');
    expect(given).toBe(db);
    for (const spy of spies) expect(spy).not.toHaveBeenCalled();
  });
});
