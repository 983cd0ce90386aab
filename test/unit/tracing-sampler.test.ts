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

  it('a caller cannot choose trace ids that are always recorded: its trace is sampled at the ratio by chance', () => {
    // The ratio sampler decides on an id's low bits: these thousand ids, chosen low, were all recorded at 0.1.
    const sampler = samplerOf({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' })!;
    const ids = Array.from({ length: 1000 }, (_, i) => (i + 1).toString(16).padStart(32, '0'));
    for (const flags of [TraceFlags.SAMPLED, TraceFlags.NONE]) {
      const sampled = ids.filter((id) => decides(sampler, id, flags) === tracing.SamplingDecision.RECORD_AND_SAMPLED).length;
      // About 100 of 1,000 (a binomial's 3 standard deviations are 28): never all, nor most.
      expect(sampled).toBeGreaterThan(20);
      expect(sampled).toBeLessThan(300);
    }
  });

  it('by default every request is recorded, even one whose caller says not to', () => {
    expect(decides(samplerOf({})!, TRACE, TraceFlags.NONE)).toBe(tracing.SamplingDecision.RECORD_AND_SAMPLED);
    expect(decides(samplerOf({ OTEL_TRACES_SAMPLER: 'always_off' })!, TRACE, TraceFlags.SAMPLED)).toBe(tracing.SamplingDecision.NOT_RECORD);
  });

  it('leaves a sampler it does not know to the SDK', () => {
    expect(samplerOf({ OTEL_TRACES_SAMPLER: 'parentbased_jaeger_remote' })).toBeUndefined();
  });
});
