import { Metrics } from '../../runtime/metrics.js';
import { byText, code, page, table } from './markdown.js';
import { type MetricRegistration, scanMetrics } from './scans.js';
import { readSources } from './source-scan.js';

/**
 * docs/reference/metrics.md: every metric the server registers with prom-client, read from the registrations in
 * runtime/ (scans.ts). The labels of the metrics `Metrics` computes when scraped are read from a real `Metrics`
 * that has recorded one of each, so that no label is written by hand.
 */
export function metricsRegistered(): MetricRegistration[] {
  const found = scanMetrics(readSources(['runtime']));
  const live = liveLabels();
  return found.map((metric) => ({ ...metric, labels: metric.labels.length > 0 ? metric.labels : (live.get(metric.name) ?? []) }));
}

/** The label names of each metric of a `Metrics` that has recorded one request, refusal, retry and key fetch. */
export async function liveLabelsOf(metrics: Metrics): Promise<Map<string, string[]>> {
  const labels = new Map<string, string[]>();
  for (const metric of await metrics.registry.getMetricsAsJSON()) {
    const names = new Set<string>();
    for (const value of metric.values) for (const name of Object.keys(value.labels)) if (name !== 'le') names.add(name);
    labels.set(metric.name, [...names].sort());
  }
  return labels;
}

let computed: Map<string, string[]> | undefined;
/** Filled by `prepareMetrics` before a page is made (getMetricsAsJSON is asynchronous; the pages are not). */
function liveLabels(): Map<string, string[]> {
  if (computed === undefined) throw new Error('prepareMetrics() first');
  return computed;
}

export function sampleMetrics(): Metrics {
  const metrics = new Metrics({ stats: () => ({ inUse: 0, idle: 0, queued: 0 }) }, { checked: 0, queued: 0 });
  metrics.record(metrics.route('shop', 'orders', 'GET'), 'GET', 401, 0.01, 'bad_password');
  metrics.retried('db_conflict');
  metrics.keyFetched('https://idp.example', 'ok');
  return metrics;
}

export async function prepareMetrics(): Promise<void> {
  computed ??= await liveLabelsOf(sampleMetrics());
}

export function metricsPage(): string {
  const rows = metricsRegistered()
    .sort(byText((metric) => metric.name))
    .map((metric) => [code(metric.name), metric.type, metric.labels.map(code).join(', '), metric.help]);
  return page('Metrics', 'the prom-client registrations in runtime/', [
    "Prometheus metrics, served at `/metrics` on ADMIN_PORT only (never on the public port). Labels come from the routes and the server's own codes, " +
      "never from a request's text, so their number stays bounded. Node's process metrics (`process_*`, `nodejs_*`) are served too (prom-client's defaults).",
    table(['metric', 'type', 'labels', 'what it counts'], rows),
  ]);
}
