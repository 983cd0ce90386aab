import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { backends as demo } from '../../generated/index.js';
import { demoTargets, type ScanTarget, scan } from '../../scripts/sqlmap.js';
import { backends as lab } from '../golden/lab/expected/index.js';
import { startServer, type TestServer } from '../support/server.js';

/**
 * sqlmap against every demo resource parameter (and the lab echo),
 * with valid credentials, on loopback; any injectable parameter fails the
 * test. The login limits are off for this server: sqlmap's wrong guesses at
 * the token endpoints would otherwise be answered 429 and prove nothing.
 */
let server: TestServer;
const LOGS = 'test/.artifacts/sqlmap';

function keepLog(name: string, text: string): string {
  mkdirSync(LOGS, { recursive: true });
  const file = `${LOGS}/${name
    .replace(/[^a-z0-9]+/gi, '-')
    .replace(/^-|-$/g, '')
    .toLowerCase()}.log`;
  writeFileSync(file, text);
  return file;
}

beforeAll(async () => {
  server = await startServer([...demo, ...lab], { loginLimits: { perUser: 0, perAddress: 0, windowSeconds: 60 } });
});
afterAll(() => server.close());

describe('sqlmap', () => {
  it('finds no injectable parameter in any demo resource, nor in the lab echo', async () => {
    const targets: ScanTarget[] = [
      ...(await demoTargets(server.url)),
      { name: 'lab echo (untyped parameters)', method: 'GET', path: '/lab/v1.0/echo?a=1&b=x', params: ['a', 'b'] },
    ];
    for (const target of targets) {
      const result = await scan(server.url, target, 240);
      // sqlmap words "found nothing" as an [ERROR]: its whole output goes to a log of its own, read on failure.
      const log = keepLog(target.name, result.log);
      process.stdout.write(`sqlmap ${result.target}: ${result.clean ? 'not injectable' : 'NOT CLEAN'} (${log})\n`);
      expect(result.injectable, `${target.name}: see ${log}`).toEqual([]);
      expect(result.clean, `${target.name}: ${result.verdict} (see ${log})`).toBe(true);
    }
  }, 600_000);
});

describe('the scan itself', () => {
  it('reports an injectable parameter when there is one (a deliberately vulnerable server)', async () => {
    // NOT xmlrest: SQL built by concatenation, the mistake the generator makes impossible.
    const pool = mysql.createPool(inject('databaseUrl'));
    const vulnerable: Server = createServer((request, response) => {
      const title = new URL(request.url ?? '/', 'http://x').searchParams.get('title') ?? '';
      pool.query(`select note_id, title from notes where title = '${title}'`).then(
        ([rows]) => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(rows)),
        () => response.writeHead(500).end('error'),
      );
    });
    await new Promise<void>((resolve) => vulnerable.listen(0, '127.0.0.1', resolve));
    try {
      const port = (vulnerable.address() as AddressInfo).port;
      const result = await scan(`http://127.0.0.1:${port}`, { name: 'vulnerable', method: 'GET', path: '/?title=x', params: ['title'] }, 240);
      expect(result.injectable, `see ${keepLog('vulnerable control', result.log)}`).toEqual(['title']);
      expect(result.clean).toBe(false);
    } finally {
      vulnerable.close();
      await pool.end();
    }
  }, 300_000);
});
