import { type Attributes, ProxyTracer, propagation, ROOT_CONTEXT, SpanKind, trace } from '@opentelemetry/api';
import { core, NodeSDK, resources, tracing } from '@opentelemetry/sdk-node';
import type { Queryable, SqlValue, TransactionOptions, WriteResult } from '../db/index.js';
import { ids, RecordedSpan, type SpanSink } from './spans.js';
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
  const spans = sinkOf(trace.getTracer('xmlrest', version));
  // W3C trace context alone reads nothing but `traceparent` (and `tracestate` beside it): without one, the root.
  const w3cOnly = !env.OTEL_PROPAGATORS;
  return {
    begin: (headers, method, path, started) => {
      // The sampler decides first, on the caller's trace id or a new one: a request it drops makes no span.
      const parent = w3cOnly && headers.traceparent === undefined ? ROOT_CONTEXT : propagation.extract(ROOT_CONTEXT, headers);
      const remote = trace.getSpanContext(parent);
      const traceId = remote?.traceId ?? ids.traceId();
      if (spans === undefined) return new UnsampledTrace(traceId);
      const attributes: Attributes = { 'http.request.method': method, 'url.path': path };
      const decision = spans.sampler.shouldSample(parent, traceId, method, SpanKind.SERVER, attributes, []);
      if (decision.decision !== tracing.SamplingDecision.RECORD_AND_SAMPLED) return new UnsampledTrace(traceId);
      if (decision.attributes) Object.assign(attributes, decision.attributes);
      const span = new RecordedSpan(spans, method, SpanKind.SERVER, traceId, remote, attributes, started, decision.traceState ?? remote?.traceState);
      return new SampledTrace(span, method);
    },
    shutdown: () => sdk.shutdown(),
  };
}

/**
 * What the SDK made of the OTEL_* variables, read from the tracer it registered: its span processor (the batch
 * processor and exporter), resource, sampler and limits, which this module's spans use in place of its Tracer's.
 * Undefined when the SDK registered no tracer (OTEL_TRACES_EXPORTER=none): nothing is sampled. The fields are
 * the SDK's own, not its API: a version that renamed them stops the start here rather than exporting nothing.
 */
function sinkOf(tracer: unknown): (SpanSink & { sampler: tracing.Sampler }) | undefined {
  const sdkTracer = tracer as {
    _spanProcessor?: tracing.SpanProcessor;
    _resource?: resources.Resource;
    _sampler?: tracing.Sampler;
    _spanLimits?: tracing.SpanLimits;
    instrumentationScope?: SpanSink['scope'];
  };
  // The API's own stand-in: no provider registered (OTEL_TRACES_EXPORTER=none). Any other shape is the SDK's
  // tracer, whose fields must all be found: one renamed would otherwise trace nothing, or cut no attribute, silently.
  if (tracer instanceof ProxyTracer) return undefined;
  const { _spanProcessor: processor, _resource: resource, _sampler: sampler, _spanLimits: limits, instrumentationScope: scope } = sdkTracer;
  if (
    typeof processor?.onEnd !== 'function' ||
    resource === undefined ||
    typeof sampler?.shouldSample !== 'function' ||
    scope === undefined ||
    limits === undefined
  ) {
    throw new Error('OpenTelemetry: this version of @opentelemetry/sdk-node is not the one runtime/tracing/open-telemetry.ts knows');
  }
  return { processor, resource, sampler, scope, valueLengthLimit: limits.attributeValueLengthLimit ?? Number.POSITIVE_INFINITY };
}

/**
 * The sampler OTEL_TRACES_SAMPLER names, with one change: a caller's `traceparent` continues the trace (its ids
 * and parent), but its sampled flag decides nothing. Any client on the Internet can send `...-01`: trusted, it
 * would have every one of its requests recorded and exported whatever ratio the server keeps (a lever on the
 * server's cost), and `...-00` would hide its requests from the traces. Nor does its trace id: the ratio
 * sampler decides on the id's low bits, which the caller chooses (ids `...0001` to `...03e8` were all sampled at a
 * ratio of 0.1), so a request with a remote parent is sampled at the ratio by chance alone (`CallerRatioSampler`).
 * This gives up the one decision for a whole trace that services of the same ratio would otherwise take. A request
 * without a caller's trace keeps the ratio on its own random id. Undefined (the SDK's own from the variables) for
 * a sampler named otherwise (jaeger_remote, ...), which the SDK configures itself.
 */
export function samplerOf(env: NodeJS.ProcessEnv): tracing.Sampler | undefined {
  const name = (env.OTEL_TRACES_SAMPLER ?? 'parentbased_always_on').trim().toLowerCase();
  let root: tracing.Sampler;
  if (name === 'always_on' || name === 'parentbased_always_on') root = new tracing.AlwaysOnSampler();
  else if (name === 'always_off' || name === 'parentbased_always_off') root = new tracing.AlwaysOffSampler();
  else if (name === 'traceidratio' || name === 'parentbased_traceidratio') {
    const ratio = Number(env.OTEL_TRACES_SAMPLER_ARG ?? '1');
    const kept = Number.isFinite(ratio) && ratio >= 0 && ratio <= 1 ? ratio : 1;
    const remote = new CallerRatioSampler(kept);
    return new tracing.ParentBasedSampler({ root: new tracing.TraceIdRatioBasedSampler(kept), remoteParentSampled: remote, remoteParentNotSampled: remote });
  } else return undefined;
  return new tracing.ParentBasedSampler({ root, remoteParentSampled: root, remoteParentNotSampled: root });
}

/** A caller's trace sampled at the ratio by chance, never by its id or flag, which the caller chooses. */
class CallerRatioSampler implements tracing.Sampler {
  constructor(private readonly ratio: number) {}

  shouldSample(): tracing.SamplingResult {
    return { decision: Math.random() < this.ratio ? tracing.SamplingDecision.RECORD_AND_SAMPLED : tracing.SamplingDecision.NOT_RECORD };
  }

  toString(): string {
    return `CallerRatioSampler{${this.ratio}}`;
  }
}

/** A request the sampler dropped: its trace id for the log line, and nothing else. */
class UnsampledTrace implements RequestTrace {
  constructor(readonly traceId: string) {}

  statements(db: Queryable): Queryable {
    return db;
  }

  transaction<T>(db: Transactional, work: (db: Queryable) => Promise<T>, options?: TransactionOptions): Promise<T> {
    return db.transaction(work, options);
  }

  end(): void {}
}

/** A sampled request: its server span, a client span for each statement, and one for a transaction. */
class SampledTrace implements RequestTrace {
  constructor(
    private readonly span: RecordedSpan,
    private readonly method: string,
  ) {}

  get traceId(): string {
    return this.span.spanContext().traceId;
  }

  statements(db: Queryable): Queryable {
    return new TracedStatements(this.span, db);
  }

  /**
   * A span of its own around its statements: what it holds (BEGIN to COMMIT, the wait for a lock, a run again
   * after a deadlock, each run's statements under it) is in no statement's span.
   */
  transaction<T>(db: Transactional, work: (db: Queryable) => Promise<T>, options?: TransactionOptions): Promise<T> {
    const span = this.span.child('transaction', SpanKind.INTERNAL, {});
    const commit = options?.commit;
    return traced(
      span,
      db.transaction((connection) => work(new TracedStatements(span, connection)), {
        ...options,
        commit: commit && ((connection) => commit(new TracedStatements(span, connection))),
      }),
    );
  }

  end(outcome: TraceOutcome): void {
    const span = this.span;
    if (outcome.route !== undefined) {
      span.name = `${this.method} ${outcome.route}`;
      span.set('http.route', outcome.route);
    }
    span.set('http.response.status_code', outcome.status);
    span.set('xmlrest.request_id', outcome.requestId);
    if (outcome.backend !== undefined) span.set('xmlrest.backend', outcome.backend);
    if (outcome.resource !== undefined) span.set('xmlrest.resource', outcome.resource);
    if (outcome.reason !== undefined) span.set('xmlrest.reason', outcome.reason);
    // A server span fails on the server's fault only: a refusal (4xx) is the server doing its job.
    if (outcome.status >= 500) span.fail();
    span.end();
  }
}

/** Statements, each a client span holding its text: the values stay in the statement's parameters, never in the span. */
class TracedStatements implements Queryable {
  constructor(
    private readonly parent: RecordedSpan,
    private readonly db: Queryable,
  ) {}

  select<Row>(sql: string, values: readonly SqlValue[]): Promise<Row[]> {
    return traced(this.statementSpan(sql), this.db.select<Row>(sql, values));
  }

  write(sql: string, values: readonly SqlValue[]): Promise<WriteResult> {
    return traced(this.statementSpan(sql), this.db.write(sql, values));
  }

  private statementSpan(sql: string): RecordedSpan {
    const operation = /^\s*([A-Za-z]+)/.exec(sql)?.[1]?.toUpperCase() ?? 'SQL';
    return this.parent.child(operation, SpanKind.CLIENT, { 'db.system.name': 'mysql', 'db.operation.name': operation, 'db.query.text': sql });
  }
}

/** Ends `span` when `work` settles; a failure is named by its code (`ER_DUP_ENTRY`, `db_timeout`), never by its message, which may quote a value. */
function traced<T>(span: RecordedSpan, work: Promise<T>): Promise<T> {
  return work.then(
    (result) => {
      span.end();
      return result;
    },
    (error: unknown) => {
      const detail = error as { code?: unknown; reason?: unknown } | null;
      const type = typeof detail?.reason === 'string' ? detail.reason : typeof detail?.code === 'string' ? detail.code : 'error';
      span.set('error.type', type);
      span.fail();
      span.end();
      throw error;
    },
  );
}
