import { Counter, collectDefaultMetrics, Gauge, type Registry as PromRegistry, Registry } from 'prom-client';

/** What the pool gauges read. */
export interface PoolStats {
  stats(): { inUse: number; idle: number; queued: number };
}

const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * The requests of one route and method, counted by status and timed. A
 * route's labels are known when it is mounted, so it gets its series then:
 * recording a request is a few additions, with none of the label hashing
 * prom-client does on every `inc` and `observe` (a tenth of a public GET's
 * own CPU time). The series are read only when /metrics is scraped.
 */
export class RouteSeries {
  private readonly statuses = new Map<number, number>();
  private readonly buckets = new Array<number>(DURATION_BUCKETS.length).fill(0);
  private sum = 0;
  private count = 0;

  constructor(readonly labels: { backend: string; resource: string; method: string }) {}

  record(status: number, seconds: number): void {
    // A status is one of the few the server answers: the map stays small.
    this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1);
    let bucket = 0;
    while (bucket < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[bucket]!) bucket++;
    if (bucket < DURATION_BUCKETS.length) this.buckets[bucket]!++;
    this.sum += seconds;
    this.count++;
  }

  /** Prometheus values of the request counter: one per status. */
  requestValues(metricName: string) {
    return [...this.statuses].map(([status, value]) => ({ metricName, labels: { ...this.labels, status }, value }));
  }

  /** Prometheus values of the duration histogram: cumulative buckets, +Inf, sum and count. */
  durationValues(name: string) {
    let cumulative = 0;
    const buckets = DURATION_BUCKETS.map((le, index) => {
      cumulative += this.buckets[index]!;
      return { metricName: `${name}_bucket`, labels: { le, ...this.labels }, value: cumulative };
    });
    return [
      ...buckets,
      { metricName: `${name}_bucket`, labels: { le: '+Inf', ...this.labels }, value: this.count },
      { metricName: `${name}_sum`, labels: this.labels, value: this.sum },
      { metricName: `${name}_count`, labels: this.labels, value: this.count },
    ];
  }
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
  /** Refusals by reason: a code of the server's own (bearer.ts, guard.ts, limiter.ts), so few. */
  private readonly refusals = new Map<string, number>();
  private readonly retries: Counter<'reason'>;
  private readonly keyFetches: Counter<'issuer' | 'outcome'>;
  private readonly failedOpen: Counter;
  /** Every route's series, kept across reloads so that counters never go back. */
  private readonly series = new Map<string, RouteSeries>();

  constructor(pool: PoolStats, hashing?: { readonly checked: number; readonly queued: number }) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    const all = () => [...this.series.values()];
    registerCustom(this.registry, 'xmlrest_http_requests_total', 'HTTP requests by backend, resource, method and status', 'counter', (name) =>
      all().flatMap((series) => series.requestValues(name)),
    );
    registerCustom(this.registry, 'xmlrest_http_request_duration_seconds', 'HTTP request duration by backend, resource and method', 'histogram', (name) =>
      all().flatMap((series) => series.durationValues(name)),
    );
    registerCustom(this.registry, 'xmlrest_auth_failures_total', 'Refused requests (401, 403, 429) by reason', 'counter', (name) =>
      [...this.refusals].map(([reason, value]) => ({ metricName: name, labels: { reason }, value })),
    );
    this.retries = new Counter({
      name: 'xmlrest_db_retries_total',
      help: 'Database operations run again (deadlock, Galera conflict, lock wait, lost connection) by reason',
      labelNames: ['reason'],
      registers,
    });
    // Issuers come from backend.xml and outcomes are the server's own words: the labels stay few.
    this.keyFetches = new Counter({
      name: 'xmlrest_idp_key_fetches_total',
      help: "Fetches of an outside issuer's keys (or discovery document) by issuer and outcome (ok, unreachable, timeout, status, ...)",
      labelNames: ['issuer', 'outcome'],
      registers,
    });
    this.failedOpen = new Counter({
      name: 'xmlrest_rate_limit_failed_open_total',
      help: 'Times the rate limits admitted calls without the database (it did not answer a lease): fail open',
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
    if (hashing !== undefined) {
      registerCustom(
        this.registry,
        'xmlrest_password_checks_total',
        'Password hashes checked (argon2id, or a plain-text row checked as slowly)',
        'counter',
        (name) => [{ metricName: name, labels: {}, value: hashing.checked }],
      );
      new Gauge({
        name: 'xmlrest_password_checks_waiting',
        help: 'Password checks waiting for a free core (past a bound, logins answer 503)',
        registers,
        collect() {
          this.set(hashing.queued);
        },
      });
    }
  }

  /** The series of a route and method (made once; a reloaded route keeps counting where it was). */
  route(backend: string, resource: string, method: string): RouteSeries {
    const key = `${backend} ${resource} ${method}`;
    let series = this.series.get(key);
    if (series === undefined) {
      series = new RouteSeries({ backend, resource, method });
      this.series.set(key, series);
    }
    return series;
  }

  retried(reason: string): void {
    this.retries.inc({ reason });
  }

  limitFailedOpen(): void {
    this.failedOpen.inc();
  }

  keyFetched(issuer: string, outcome: string): void {
    this.keyFetches.inc({ issuer, outcome });
  }

  /**
   * One finished request: its route's series (undefined for a request no route answered: 404, 405, health),
   * and why a 401, 403 or 429 happened. Positional, so that recording allocates nothing.
   */
  record(series: RouteSeries | undefined, method: string, status: number, seconds: number, reason: string | undefined): void {
    // A request no route answered counts under empty names; its method is one Node's parser knows, so bounded.
    (series ?? this.route('', '', method)).record(status, seconds);
    if (reason !== undefined && (status === 401 || status === 403 || status === 429)) this.refusals.set(reason, (this.refusals.get(reason) ?? 0) + 1);
  }
}

/** A metric whose values are computed when scraped (prom-client calls `get`). */
function registerCustom(
  registry: PromRegistry,
  name: string,
  help: string,
  type: 'counter' | 'histogram',
  values: (name: string) => { metricName: string; labels: object; value: number }[],
): void {
  registry.registerMetric({
    name,
    help,
    type,
    aggregator: 'sum',
    get: async () => ({ name, help, type, aggregator: 'sum', values: values(name) }),
    reset: () => {},
  } as unknown as Parameters<PromRegistry['registerMetric']>[0]);
}
