import { ROOT_CONTEXT, SpanKind, TraceFlags, trace } from '@opentelemetry/api';
import { tracing } from '@opentelemetry/sdk-node';
import { describe, expect, it } from 'vitest';
import { samplerOf } from '../../runtime/tracing/open-telemetry.js';

/** Whether a request whose caller sent `traceparent: 00-<traceId>-...-<flags>` is recorded. */
function decides(sampler: tracing.Sampler, traceId: string, flags: TraceFlags): tracing.SamplingDecision {
  const parent = trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId: '00f067aa0ba902b7', traceFlags: flags, isRemote: true });
  return sampler.shouldSample(parent, traceId, 'GET', SpanKind.SERVER, {}, []).decision;
}

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';

describe('sampling: a caller’s traceparent continues the trace, but its sampled flag decides nothing', () => {
  it('a ratio of 0 records no request, whatever flag the caller sends', () => {
    const sampler = samplerOf({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' })!;
    expect(decides(sampler, TRACE, TraceFlags.SAMPLED)).toBe(tracing.SamplingDecision.NOT_RECORD);
    expect(decides(sampler, TRACE, TraceFlags.NONE)).toBe(tracing.SamplingDecision.NOT_RECORD);
  });

  it('a ratio decides on the trace id alone: the caller’s flag cannot raise or lower it', () => {
    const sampler = samplerOf({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.5' })!;
    const ids = Array.from({ length: 64 }, (_, i) => `${(i * 0x9e3779b1 + 1).toString(16).padStart(8, '0')}${'5'.repeat(24)}`.slice(0, 32));
    const sampled = ids.filter((id) => decides(sampler, id, TraceFlags.NONE) === tracing.SamplingDecision.RECORD_AND_SAMPLED);
    // Both outcomes occur, so the check below compares something.
    expect(sampled.length).toBeGreaterThan(0);
    expect(sampled.length).toBeLessThan(ids.length);
    for (const id of ids) expect(decides(sampler, id, TraceFlags.SAMPLED), id).toBe(decides(sampler, id, TraceFlags.NONE));
  });

  it('by default every request is recorded, even one whose caller says not to', () => {
    expect(decides(samplerOf({})!, TRACE, TraceFlags.NONE)).toBe(tracing.SamplingDecision.RECORD_AND_SAMPLED);
    expect(decides(samplerOf({ OTEL_TRACES_SAMPLER: 'always_off' })!, TRACE, TraceFlags.SAMPLED)).toBe(tracing.SamplingDecision.NOT_RECORD);
  });

  it('leaves a sampler it does not know to the SDK', () => {
    expect(samplerOf({ OTEL_TRACES_SAMPLER: 'parentbased_jaeger_remote' })).toBeUndefined();
  });
});
