/**
 * The benchmark's OTLP/HTTP collector: a process of its own on loopback that takes every export the traced
 * server posts to /v1/traces and answers it as a collector does (200, an empty ExportTraceServiceResponse),
 * decoding nothing, so that the bench measures what exporting costs the server, not what a collector does.
 * GET /stats answers how many exports and bytes it took.
 */
import { createServer } from 'node:http';

let exports = 0;
let bytes = 0;
const server = createServer((request, response) => {
  if (request.method === 'GET' && request.url === '/stats') {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ exports, bytes }));
    return;
  }
  request.on('data', (chunk: Buffer) => (bytes += chunk.length));
  request.on('end', () => {
    exports++;
    response.writeHead(200, { 'content-type': 'application/x-protobuf' });
    response.end();
  });
});
server.listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write('ready\n'));
