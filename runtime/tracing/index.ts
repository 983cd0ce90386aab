import type { Tracing } from './trace.js';

/**
 * Traces (docs/internals/contract.md §13): the one seam the request path calls. The front door begins a request's trace
 * and ends it with its outcome; a generated handler's statements go through the trace's database, each a child
 * span holding its statement's text, never its values. With OTEL_EXPORTER_OTLP_ENDPOINT (or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) set, `startTracing` loads OpenTelemetry's Node SDK (open-telemetry.ts),
 * which exports over OTLP/HTTP as the OTEL_* variables say; unset, it loads nothing and answers undefined, and
 * the request path pays one check of an undefined field.
 */
export type { RequestTrace, TraceOutcome, Tracing, Transactional } from './trace.js';

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
