import type { IncomingHttpHeaders } from 'node:http';
import type { Queryable, TransactionOptions } from '../db/index.js';

/**
 * Traces (docs/contract.md §13): the one seam the request path calls. The front door begins a request's trace
 * and ends it with its outcome; a generated handler's statements go through the trace's database, each a child
 * span holding its statement's text, never its values. With OTEL_EXPORTER_OTLP_ENDPOINT (or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) set, `startTracing` loads OpenTelemetry's Node SDK (open-telemetry.ts),
 * which exports over OTLP/HTTP as the OTEL_* variables say; unset, it loads nothing and answers undefined, and
 * the request path pays one check of an undefined field.
 */
export interface Tracing {
  /** A request's span, continuing an incoming W3C `traceparent`. */
  begin(headers: IncomingHttpHeaders, method: string, path: string): RequestTrace;
  /** Sends the spans still queued, then stops (a graceful stop calls it last). */
  shutdown(): Promise<void>;
}

/** What a transaction needs of the database: `Database.transaction`. */
export interface Transactional {
  transaction<T>(work: (db: Queryable) => Promise<T>, options?: TransactionOptions): Promise<T>;
}

export interface RequestTrace {
  /** The trace's id, in hex, for the request's log line. */
  readonly traceId: string;
  /** `db`, each statement run through it a child span of the request's. */
  statements(db: Queryable): Queryable;
  /** `db.transaction(work, options)` as a child span, each statement of `work` (and of `options.commit`) a child of it. */
  transaction<T>(db: Transactional, work: (db: Queryable) => Promise<T>, options?: TransactionOptions): Promise<T>;
  end(outcome: TraceOutcome): void;
}

/** How a request ended, as the access log has it (request-log.ts `RequestState`). */
export interface TraceOutcome {
  status: number;
  /** The served path of the route it reached, such as `/shop/v1.0/orders`. */
  route: string | undefined;
  backend: string | undefined;
  resource: string | undefined;
  /** Why it was refused (`role_not_held`, `rate_limited`, ...), or a database fault's reason. */
  reason: string | undefined;
  requestId: string;
}

/**
 * Where spans go, when anywhere: the OTLP endpoint, for traces or for every signal. OpenTelemetry reads it
 * itself and exports nothing, silently, to a malformed one: so one throws here, at start (config.ts, and
 * startTracing for npm run dev), naming the variable but not its value, which often carries a collector's token.
 */
export function tracingEndpoint(env: NodeJS.ProcessEnv): string | undefined {
  for (const name of ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'OTEL_EXPORTER_OTLP_ENDPOINT'] as const) {
    const value = env[name];
    if (!value) continue;
    let url: URL | undefined;
    try {
      url = new URL(value);
    } catch {}
    if (url?.protocol !== 'http:' && url?.protocol !== 'https:') throw new Error(`${name} is an http:// or https:// URL (an OTLP/HTTP collector)`);
    return value;
  }
  return undefined;
}

/** Tracing as the environment asks: OpenTelemetry, imported now, when an endpoint is set; else none. */
export async function startTracing(env: NodeJS.ProcessEnv = process.env, version = '0'): Promise<Tracing | undefined> {
  if (tracingEndpoint(env) === undefined || /^(true|1)$/i.test(env.OTEL_SDK_DISABLED ?? '')) return undefined;
  const { openTelemetry } = await import('./open-telemetry.js');
  return openTelemetry(env, version);
}
