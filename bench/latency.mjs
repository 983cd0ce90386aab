// One request after another on one kept-alive connection, each timed from its write to its answer's last byte:
// the median and the 90th percentile in milliseconds, to the microsecond, as JSON on stdout (autocannon's
// percentiles are whole milliseconds). bench/run.ts starts it pinned to the load generator's core.
import http from 'node:http';

const config = JSON.parse(process.argv[2]);
const url = new URL(config.url);
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function once() {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const request = http.request(url, { method: config.method, headers: config.headers, agent }, (response) => {
      const chunks = [];
      response.on('data', (chunk) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode, ms: Number(process.hrtime.bigint() - started) / 1e6, body: Buffer.concat(chunks) }));
    });
    request.on('error', reject);
    request.end(config.body);
  });
}

for (let i = 0; i < config.warmup; i++) await once();
const times = [];
let failed = 0;
for (let i = 0; i < config.count; i++) {
  const answer = await once();
  if (answer.status !== 200) failed++;
  times.push(answer.ms);
}
agent.destroy();
times.sort((a, b) => a - b);
const at = (share) => times[Math.min(times.length - 1, Math.floor(share * times.length))];
process.stdout.write(`${JSON.stringify({ median: at(0.5), p90: at(0.9), count: times.length, failed })}\n`);
