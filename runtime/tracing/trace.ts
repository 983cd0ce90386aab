// The shapes of a trace the request path and OpenTelemetry both use: apart, so that neither imports the other.
import type { IncomingHttpHeaders } from 'node:http';
import type { Queryable, TransactionOptions } from '../db/index.js';

export interface Tracing {
  /**
   * A request's trace, continuing an incoming W3C `traceparent`: a span when the sampler keeps it, else its trace
   * id alone. `started` is the performance.now() reading the access log took as the request began (the span's
   * start), so that a request reads no clock of its own for its trace.
   */
  begin(headers: IncomingHttpHeaders, method: string, path: string, started: number): RequestTrace;
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
