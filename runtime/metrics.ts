import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/** What the pool gauges read. */
export interface PoolStats {
  stats(): { inUse: number; idle: number; queued: number };
}

/** One finished request, as the access log sees it. */
export interface RequestRecord {
  backend: string;
  resource: string;
  method: string;
  status: number;
  seconds: number;
  /** Why a 401, 403 or 429 (or a database fault) happened. */
  reason: string | undefined;
}

/**
 * Prometheus metrics of one server (prom-client), served at `/metrics` on
 * ADMIN_PORT: requests by backend, resource, method and status, their
 * duration, refusals by reason, the pool, and Node's process metrics. Labels
 * come from the route, never from the request's own text, so that their
 * number stays bounded whatever clients send.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'backend' | 'resource' | 'method' | 'status'>;
  private readonly duration: Histogram<'backend' | 'resource' | 'method'>;
  private readonly refusals: Counter<'reason'>;
  private readonly retries: Counter<'reason'>;

  constructor(pool: PoolStats) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.requests = new Counter({
      name: 'xmlrest_http_requests_total',
      help: 'HTTP requests by backend, resource, method and status',
      labelNames: ['backend', 'resource', 'method', 'status'],
      registers,
    });
    this.duration = new Histogram({
      name: 'xmlrest_http_request_duration_seconds',
      help: 'HTTP request duration by backend, resource and method',
      labelNames: ['backend', 'resource', 'method'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.refusals = new Counter({ name: 'xmlrest_auth_failures_total', help: 'Refused requests (401, 403, 429) by reason', labelNames: ['reason'], registers });
    this.retries = new Counter({
      name: 'xmlrest_db_retries_total',
      help: 'Database operations run again (deadlock, Galera conflict, lock wait, lost connection) by reason',
      labelNames: ['reason'],
      registers,
    });
    const gauge = (name: string, help: string, read: (stats: ReturnType<PoolStats['stats']>) => number) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(read(pool.stats()));
        },
      });
    gauge('xmlrest_db_pool_connections_in_use', 'Database connections running a statement', (stats) => stats.inUse);
    gauge('xmlrest_db_pool_connections_idle', 'Database connections open and idle', (stats) => stats.idle);
    gauge('xmlrest_db_pool_requests_queued', 'Requests waiting for a database connection', (stats) => stats.queued);
  }

  retried(reason: string): void {
    this.retries.inc({ reason });
  }

  record(request: RequestRecord): void {
    this.requests.inc({ backend: request.backend, resource: request.resource, method: request.method, status: request.status });
    this.duration.observe({ backend: request.backend, resource: request.resource, method: request.method }, request.seconds);
    if (request.reason !== undefined && (request.status === 401 || request.status === 403 || request.status === 429))
      this.refusals.inc({ reason: request.reason });
  }
}
