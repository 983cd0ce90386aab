import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import protobuf from 'protobufjs';

/**
 * A loopback OTLP/HTTP collector of the test's own: it takes what OpenTelemetry's exporter posts to
 * /v1/traces in the exporter's default protocol, protobuf (`ExportTraceServiceRequest`, decoded with
 * protobufjs from the fields of opentelemetry-proto's trace messages that the tests read), and keeps the spans,
 * and every body as it came: what the decoder leaves out (events, links, trace state, a status message) is still
 * in the bytes, where a test looking for a value that must never be sent finds it.
 */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, string | number | boolean>;
  status: { code: number };
  /** Start and end, nanoseconds since the epoch in decimal (a double loses them: `BigInt()` them to compare). */
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  /** The W3C trace flags and whether the parent is remote (0x100 known, 0x200 remote). */
  flags: number;
  traceState: string;
  /** The instrumentation scope's name and version. */
  scope: { name: string; version: string };
  /** The resource's attributes (service.name, ...). */
  resource: Record<string, string | number | boolean>;
}

export interface OtlpReceiver {
  /** The collector's base URL, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  spans: ReceivedSpan[];
  /** The content types of the requests it took. */
  contentTypes: string[];
  /** Every request's body, undecoded. */
  bodies: Buffer[];
  close(): Promise<void>;
}

/** opentelemetry-proto's trace request, as far as the tests read it (field numbers as in trace.proto and common.proto). */
const TRACE_PROTO = {
  nested: {
    ExportTraceServiceRequest: { fields: { resourceSpans: { rule: 'repeated', type: 'ResourceSpans', id: 1 } } },
    ResourceSpans: { fields: { resource: { type: 'Resource', id: 1 }, scopeSpans: { rule: 'repeated', type: 'ScopeSpans', id: 2 } } },
    Resource: { fields: { attributes: { rule: 'repeated', type: 'KeyValue', id: 1 } } },
    ScopeSpans: { fields: { scope: { type: 'Scope', id: 1 }, spans: { rule: 'repeated', type: 'Span', id: 2 } } },
    Scope: { fields: { name: { type: 'string', id: 1 }, version: { type: 'string', id: 2 } } },
    Span: {
      fields: {
        traceId: { type: 'bytes', id: 1 },
        spanId: { type: 'bytes', id: 2 },
        traceState: { type: 'string', id: 3 },
        parentSpanId: { type: 'bytes', id: 4 },
        name: { type: 'string', id: 5 },
        kind: { type: 'int32', id: 6 },
        startTimeUnixNano: { type: 'fixed64', id: 7 },
        endTimeUnixNano: { type: 'fixed64', id: 8 },
        attributes: { rule: 'repeated', type: 'KeyValue', id: 9 },
        status: { type: 'Status', id: 15 },
        flags: { type: 'fixed32', id: 16 },
      },
    },
    Status: { fields: { message: { type: 'string', id: 2 }, code: { type: 'int32', id: 3 } } },
    KeyValue: { fields: { key: { type: 'string', id: 1 }, value: { type: 'AnyValue', id: 2 } } },
    AnyValue: {
      oneofs: { value: { oneof: ['stringValue', 'boolValue', 'intValue', 'doubleValue'] } },
      fields: {
        stringValue: { type: 'string', id: 1 },
        boolValue: { type: 'bool', id: 2 },
        intValue: { type: 'int64', id: 3 },
        doubleValue: { type: 'double', id: 4 },
      },
    },
  },
};
const REQUEST = protobuf.Root.fromJSON(TRACE_PROTO).lookupType('ExportTraceServiceRequest');

interface KeyValue {
  key: string;
  value?: { stringValue?: string; boolValue?: boolean; intValue?: number | string; doubleValue?: number };
}
const attributesOf = (list: KeyValue[] = []) =>
  Object.fromEntries(
    list.map(({ key, value }) => [
      key,
      value?.stringValue ?? (value?.intValue === undefined ? undefined : Number(value.intValue)) ?? value?.doubleValue ?? value?.boolValue ?? '',
    ]),
  ) as Record<string, string | number | boolean>;
const hex = (bytes: Uint8Array | undefined) => Buffer.from(bytes ?? []).toString('hex');

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const bodies: Buffer[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      contentTypes.push(String(request.headers['content-type']));
      bodies.push(Buffer.concat(chunks));
      if (request.url === '/v1/traces' && request.headers['content-type'] === 'application/x-protobuf') {
        const decoded = REQUEST.toObject(REQUEST.decode(Buffer.concat(chunks)), { longs: String }) as {
          resourceSpans?: {
            resource?: { attributes?: KeyValue[] };
            scopeSpans?: { scope?: { name?: string; version?: string }; spans?: Record<string, unknown>[] }[];
          }[];
        };
        for (const resourceSpans of decoded.resourceSpans ?? []) {
          const resource = attributesOf(resourceSpans.resource?.attributes);
          for (const scope of resourceSpans.scopeSpans ?? []) {
            for (const span of scope.spans ?? []) {
              spans.push({
                traceId: hex(span.traceId as Uint8Array),
                spanId: hex(span.spanId as Uint8Array),
                parentSpanId: hex(span.parentSpanId as Uint8Array | undefined),
                name: String(span.name),
                kind: Number(span.kind ?? 0),
                attributes: attributesOf(span.attributes as KeyValue[]),
                status: { code: Number((span.status as { code?: number } | undefined)?.code ?? 0) },
                startTimeUnixNano: String(span.startTimeUnixNano ?? 0),
                endTimeUnixNano: String(span.endTimeUnixNano ?? 0),
                flags: Number(span.flags ?? 0),
                traceState: String(span.traceState ?? ''),
                scope: { name: scope.scope?.name ?? '', version: scope.scope?.version ?? '' },
                resource,
              });
            }
          }
        }
      }
      // An empty ExportTraceServiceResponse: everything accepted.
      response.writeHead(200, { 'content-type': 'application/x-protobuf' });
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    contentTypes,
    bodies,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
