// The load generator: one autocannon run, its figures as JSON on stdout.
// bench/run.ts starts it pinned to its own core (taskset), away from the server's.
// With `tokensFile` (a JSON array of tokens) each connection sends its own share of them, one after another,
// as Bearer tokens: a flood of distinct tokens, never the same one from two connections at once.
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';

const config = JSON.parse(process.argv[2]);
const tokens = config.tokensFile ? JSON.parse(readFileSync(config.tokensFile, 'utf8')) : undefined;
let client = 0;
// With `refreshTokens` (one per connection), each connection rotates its own session: it posts its refresh token
// and keeps the one the answer gives, as a client refreshing its session does.
const currents = config.refreshTokens ? [...config.refreshTokens] : [];
const rotating = config.refreshTokens
  ? {
      setupClient: (connection) => {
        const mine = client++ % currents.length;
        connection.setRequests([
          {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            setupRequest: (request) => ({ ...request, body: `refresh_token=${currents[mine]}` }),
            onResponse: (status, body) => {
              if (status === 201) currents[mine] = JSON.parse(body).refresh_token;
            },
          },
        ]);
      },
    }
  : {};
const result = await autocannon({
  url: config.url,
  method: config.method,
  headers: config.headers,
  body: config.body,
  duration: config.duration,
  connections: config.connections,
  ...(config.overallRate ? { overallRate: config.overallRate } : {}),
  ...(tokens
    ? {
        setupClient: (connection) => {
          const share = Math.floor(tokens.length / config.connections);
          const mine = tokens.slice(client * share, (client + 1) * share);
          client++;
          connection.setRequests(mine.map((token) => ({ method: config.method, headers: { ...config.headers, authorization: `Bearer ${token}` } })));
        },
      }
    : {}),
  ...rotating,
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
    // Each connection's refresh token at the end: the next run goes on from them.
    ...(config.refreshTokens ? { refreshTokens: currents } : {}),
  }) + '\n',
);
