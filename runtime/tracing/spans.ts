import { randomFillSync } from 'node:crypto';
import { type Attributes, type HrTime, type SpanContext, type SpanKind, SpanStatusCode, TraceFlags, type TraceState } from '@opentelemetry/api';
import type { resources, tracing } from '@opentelemetry/sdk-node';

/**
 * A sampled request's spans, made here rather than by the SDK's Tracer (docs/internals/contract.md §17): the SDK's
 * span reads the wall clock and the monotonic one at each start and end, checks every attribute as it is set, and
 * goes through a multi-processor and a metrics hook, work a request pays for twice (its span and its statement's).
 * A `RecordedSpan` is the SDK's `ReadableSpan` as its exporters read it, handed to the SDK's own span processor
 * (the batch processor and the OTLP exporter the OTEL_* variables configure) when it ends: what reaches a
 * collector is field for field what the SDK's span gave.
 */

/** What every span of the process shares: where it goes, whose it is, the attribute value length limit. */
export interface SpanSink {
  processor: tracing.SpanProcessor;
  resource: resources.Resource;
  scope: { name: string; version?: string; schemaUrl?: string };
  /** OTEL_(SPAN_)ATTRIBUTE_VALUE_LENGTH_LIMIT: longer strings are cut, as the SDK cuts them. */
  valueLengthLimit: number;
}

const NO_EVENTS: tracing.TimedEvent[] = [];
const NO_LINKS: [] = [];
const UNSET = { code: SpanStatusCode.UNSET };
const ERROR = { code: SpanStatusCode.ERROR };

export class RecordedSpan implements tracing.ReadableSpan {
  readonly startTime: HrTime;
  endTime: HrTime = [0, 0];
  ended = false;
  status: { code: SpanStatusCode } = UNSET;
  readonly events = NO_EVENTS;
  readonly links = NO_LINKS;
  readonly droppedAttributesCount = 0;
  readonly droppedEventsCount = 0;
  readonly droppedLinksCount = 0;
  private readonly context: SpanContext;

  constructor(
    private readonly sink: SpanSink,
    public name: string,
    readonly kind: SpanKind,
    traceId: string,
    /** The caller's span (remote) or this request's (local); undefined for a root. */
    readonly parentSpanContext: SpanContext | undefined,
    readonly attributes: Attributes,
    /** performance.now() when it began. */
    started: number,
    traceState: TraceState | undefined = parentSpanContext?.traceState,
  ) {
    this.context = { traceId, spanId: ids.spanId(), traceFlags: TraceFlags.SAMPLED, traceState };
    this.startTime = clock.hrTime(started);
    if (sink.valueLengthLimit !== Number.POSITIVE_INFINITY) for (const key in attributes) this.set(key, attributes[key] as string | number);
  }

  /** A span of this one's, begun now. */
  child(name: string, kind: SpanKind, attributes: Attributes): RecordedSpan {
    return new RecordedSpan(this.sink, name, kind, this.context.traceId, this.context, attributes, performance.now());
  }

  spanContext(): SpanContext {
    return this.context;
  }

  get resource(): resources.Resource {
    return this.sink.resource;
  }

  get instrumentationScope() {
    return this.sink.scope;
  }

  get duration(): HrTime {
    const nanos = (this.endTime[0] - this.startTime[0]) * 1e9 + this.endTime[1] - this.startTime[1];
    return [Math.trunc(nanos / 1e9), nanos % 1e9];
  }

  /** An attribute, a string cut to the limit as the SDK cuts it. */
  set(key: string, value: string | number): void {
    this.attributes[key] = typeof value === 'string' && value.length > this.sink.valueLengthLimit ? value.slice(0, this.sink.valueLengthLimit) : value;
  }

  fail(): void {
    this.status = ERROR;
  }

  /** Ends it now (a performance.now() reading) and hands it to the span processor, which queues it for export. */
  end(now = performance.now()): void {
    if (this.ended) return;
    this.endTime = clock.hrTime(now);
    this.ended = true;
    this.sink.processor.onEnd(this);
  }
}

/**
 * Span times: a performance.now() reading (the one the access log takes when a request begins, for its span)
 * as wall-clock time. The monotonic clock and the wall clock drift apart over days: like the SDK, which reads
 * both at every span, a span's time is corrected by their difference, here read again at most once a second
 * and taken only when it moved by more than the wall clock's millisecond grain, so that a statement's span
 * never seems to begin before its request's.
 */
const clock = {
  origin: performance.timeOrigin,
  offset: 0,
  synced: Number.NEGATIVE_INFINITY,
  hrTime(now: number): HrTime {
    if (now - clock.synced > 1000) {
      clock.synced = now;
      const offset = Date.now() - (clock.origin + now);
      if (Math.abs(offset - clock.offset) > 2) clock.offset = offset;
    }
    // The origin and the reading apart, as the SDK adds them: their sum in milliseconds loses sub-microsecond digits.
    const originSeconds = Math.trunc(clock.origin / 1000);
    const millis = clock.origin - originSeconds * 1000 + now + clock.offset;
    const seconds = Math.floor(millis / 1000);
    const nanos = Math.round((millis - seconds * 1000) * 1e6);
    return nanos < 1e9 ? [originSeconds + seconds, nanos] : [originSeconds + seconds + 1, nanos - 1e9];
  },
};

/**
 * Trace and span ids: random bytes from the system's generator, drawn 4 KB at a time (one call for 170 requests'
 * ids), never all zeros (an invalid id in W3C trace context).
 */
const INVALID: Record<number, string> = { 8: '0'.repeat(16), 16: '0'.repeat(32) };
export const ids = {
  pool: Buffer.alloc(4096),
  at: 4096,
  take(bytes: number): string {
    if (ids.at + bytes > ids.pool.length) {
      randomFillSync(ids.pool);
      ids.at = 0;
    }
    const id = ids.pool.toString('hex', ids.at, (ids.at += bytes));
    return id === INVALID[bytes] ? ids.take(bytes) : id;
  },
  traceId: () => ids.take(16),
  spanId: () => ids.take(8),
};
