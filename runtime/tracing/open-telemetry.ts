import type { IncomingHttpHeaders } from 'node:http';
import { type Context, propagation, ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, type Tracer, trace } from '@opentelemetry/api';
import { core, NodeSDK, resources, tracing } from '@opentelemetry/sdk-node';
import type { Queryable, SqlValue, TransactionOptions, WriteResult } from '../db/index.js';
import type { RequestTrace, TraceOutcome, Tracing, Transactional } from './trace.js';

/**
 * Tracing through OpenTelemetry's Node SDK, imported only when an OTLP endpoint is set (index.ts). The SDK
 * reads the OTEL_* variables itself: the endpoint, `OTEL_EXPORTER_OTLP_PROTOCOL` (`http/protobuf` by default,
 * or `http/json`), headers, the service name and resource attributes (`service.name` is `xmlrest` unless
 * OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES say), the batch processor's limits, OTEL_PROPAGATORS. Traces
 * only: no metrics (the server has /metrics) and no logs (its log is pino's).
 */
export function openTelemetry(env: NodeJS.ProcessEnv, version: string): Tracing {
  const sampler = samplerOf(env);
  const sdk = new NodeSDK({
    // The base resource: what the environment's detector finds (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES) is merged over it.
    resource: resources.defaultResource().merge(resources.resourceFromAttributes({ 'service.name': 'xmlrest' })),
    ...(sampler ? { sampler } : {}),
    // W3C trace context only, unless OTEL_PROPAGATORS asks for more: nothing here reads `baggage`, which the
    // SDK's default would parse on every request.
    ...(env.OTEL_PROPAGATORS ? {} : { textMapPropagator: new core.W3CTraceContextPropagator() }),
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [],
    // Each span is given its parent (the request's), never found in a context carried across awaits: no
    // context manager, so that no AsyncLocalStorage follows every promise of the process. `null` is the SDK's
    // own "none" (sdk-node setupContextManager), which its type does not name.
    contextManager: null as never,
  });
  sdk.start();
  const tracer = trace.getTracer('xmlrest', version);
  return {
    begin: (headers, method, path) => new OpenTelemetryTrace(tracer, headers, method, path),
    shutdown: () => sdk.shutdown(),
  };
}

/**
 * The sampler OTEL_TRACES_SAMPLER names, with one change: a caller's `traceparent` continues the trace (its ids
 * and parent), but its sampled flag decides nothing. Any client on the Internet can send `...-01`: trusted, it
 * would have every one of its requests recorded and exported whatever ratio the server keeps (a lever on the
 * server's cost), and `...-00` would hide its requests from the traces. So a request with a remote parent is
 * sampled as a request without one: by the ratio on its trace id, which is the same decision every service
 * with the same ratio takes for the same trace. Undefined (the SDK's own from the variables) for a sampler
 * named otherwise (jaeger_remote, ...), which the SDK configures itself.
 */
export function samplerOf(env: NodeJS.ProcessEnv): tracing.Sampler | undefined {
  const name = (env.OTEL_TRACES_SAMPLER ?? 'parentbased_always_on').trim().toLowerCase();
  let root: tracing.Sampler;
  if (name === 'always_on' || name === 'parentbased_always_on') root = new tracing.AlwaysOnSampler();
  else if (name === 'always_off' || name === 'parentbased_always_off') root = new tracing.AlwaysOffSampler();
  else if (name === 'traceidratio' || name === 'parentbased_traceidratio') {
    const ratio = Number(env.OTEL_TRACES_SAMPLER_ARG ?? '1');
    root = new tracing.TraceIdRatioBasedSampler(Number.isFinite(ratio) && ratio >= 0 && ratio <= 1 ? ratio : 1);
  } else return undefined;
  return new tracing.ParentBasedSampler({ root, remoteParentSampled: root, remoteParentNotSampled: root });
}

class OpenTelemetryTrace implements RequestTrace {
  private readonly span: Span;
  private readonly context: Context;

  constructor(
    private readonly tracer: Tracer,
    headers: IncomingHttpHeaders,
    private readonly method: string,
    path: string,
  ) {
    // An incoming traceparent (and tracestate) makes this request's span a child of the caller's.
    const parent = propagation.extract(ROOT_CONTEXT, headers);
    this.span = tracer.startSpan(method, { kind: SpanKind.SERVER, attributes: { 'http.request.method': method, 'url.path': path } }, parent);
    this.context = trace.setSpan(parent, this.span);
  }

  get traceId(): string {
    return this.span.spanContext().traceId;
  }

  statements(db: Queryable): Queryable {
    // A request its sampler left out records nothing, and its statements need no spans either.
    return this.span.isRecording() ? new TracedStatements(this.tracer, this.context, db) : db;
  }

  transaction<T>(db: Transactional, work: (db: Queryable) => Promise<T>, options?: TransactionOptions): Promise<T> {
    if (!this.span.isRecording()) return db.transaction(work, options);
    const span = this.tracer.startSpan('transaction', { kind: SpanKind.INTERNAL }, this.context);
    const inside = trace.setSpan(this.context, span);
    const commit = options?.commit;
    // A transaction run again (a deadlock) shows each run's statements.
    return traced(
      span,
      db.transaction((connection) => work(new TracedStatements(this.tracer, inside, connection)), {
        ...options,
        commit: commit && ((connection) => commit(new TracedStatements(this.tracer, inside, connection))),
      }),
    );
  }

  end(outcome: TraceOutcome): void {
    const span = this.span;
    if (outcome.route !== undefined) {
      span.updateName(`${this.method} ${outcome.route}`);
      span.setAttribute('http.route', outcome.route);
    }
    span.setAttribute('http.response.status_code', outcome.status);
    span.setAttribute('xmlrest.request_id', outcome.requestId);
    if (outcome.backend !== undefined) span.setAttribute('xmlrest.backend', outcome.backend);
    if (outcome.resource !== undefined) span.setAttribute('xmlrest.resource', outcome.resource);
    if (outcome.reason !== undefined) span.setAttribute('xmlrest.reason', outcome.reason);
    // A server span fails on the server's fault only: a refusal (4xx) is the server doing its job.
    if (outcome.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  }
}

/** Statements, each a client span holding its text: the values stay in the statement's parameters, never in the span. */
class TracedStatements implements Queryable {
  constructor(
    private readonly tracer: Tracer,
    private readonly parent: Context,
    private readonly db: Queryable,
  ) {}

  select<Row>(sql: string, values: readonly SqlValue[]): Promise<Row[]> {
    return traced(this.statementSpan(sql), this.db.select<Row>(sql, values));
  }

  write(sql: string, values: readonly SqlValue[]): Promise<WriteResult> {
    return traced(this.statementSpan(sql), this.db.write(sql, values));
  }

  private statementSpan(sql: string): Span {
    const operation = /^\s*([A-Za-z]+)/.exec(sql)?.[1]?.toUpperCase() ?? 'SQL';
    return this.tracer.startSpan(
      operation,
      { kind: SpanKind.CLIENT, attributes: { 'db.system.name': 'mysql', 'db.operation.name': operation, 'db.query.text': sql } },
      this.parent,
    );
  }
}

/** Ends `span` when `work` settles; a failure is named by its code (`ER_DUP_ENTRY`, `db_timeout`), never by its message, which may quote a value. */
function traced<T>(span: Span, work: Promise<T>): Promise<T> {
  return work.then(
    (result) => {
      span.end();
      return result;
    },
    (error: unknown) => {
      const detail = error as { code?: unknown; reason?: unknown } | null;
      const type = typeof detail?.reason === 'string' ? detail.reason : typeof detail?.code === 'string' ? detail.code : 'error';
      span.setAttribute('error.type', type);
      span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
      throw error;
    },
  );
}
