// The load generator: one autocannon run, its figures as JSON on stdout.
// bench/run.ts starts it pinned to its own core (taskset), away from the server's.
import autocannon from 'autocannon';

const config = JSON.parse(process.argv[2]);
const result = await autocannon({
  url: config.url,
  method: config.method,
  headers: config.headers,
  body: config.body,
  duration: config.duration,
  connections: config.connections,
  pipelining: 1,
});
process.stdout.write(
  JSON.stringify({
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    total: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  }) + '\n',
);
