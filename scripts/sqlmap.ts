import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { promisify } from 'node:util';
import { ensurePackages, SQLMAP } from './system-packages.js';

/**
 * Runs sqlmap (Debian's package, installed when missing) against a running
 * server's resources on loopback, with valid credentials, one bounded run per
 * target, and reports every parameter it finds injectable. `npm run sqlmap`
 * scans the demo at BASE_URL; test/integration/sqlmap.test.ts scans a server of its own.
 */
export interface ScanTarget {
  name: string;
  method: 'GET' | 'POST';
  /** Path and query string; for GET the parameters to test live here. */
  path: string;
  /** Form body of a POST. */
  body?: string;
  authorization?: string;
  /** The parameters to test. */
  params: string[];
}

export interface ScanResult {
  target: string;
  injectable: string[];
  /** sqlmap's own closing verdict line (it words "nothing found" as an [ERROR]). */
  verdict: string;
  /** sqlmap concluded that no tested parameter is injectable. */
  clean: boolean;
  /** Everything sqlmap printed: for a log of its own, not for the test runner's output. */
  log: string;
}

const run = promisify(execFile);

export function ensureSqlmap(): string {
  ensurePackages([SQLMAP]);
  return SQLMAP.binaries[0]!;
}

export async function scan(base: string, target: ScanTarget, seconds = 180): Promise<ScanResult> {
  const sqlmap = ensureSqlmap();
  const output = '.xmlrest/sqlmap';
  mkdirSync(output, { recursive: true });
  const args = [
    '-u',
    `${base}${target.path}`,
    '--batch',
    '--flush-session',
    '--disable-coloring',
    `--output-dir=${output}`,
    '--dbms=MySQL',
    '--level=1',
    '--risk=1',
    '--technique=BEUST',
    '--time-sec=2',
    '--timeout=10',
    '--retries=0',
    '--threads=1',
    // Wrong credentials are an answer, not a reason to stop: the token endpoints say 401 to most probes.
    '--ignore-code=401',
    `-p`,
    target.params.join(','),
    `--method=${target.method}`,
  ];
  if (target.body !== undefined) args.push(`--data=${target.body}`);
  if (target.authorization) args.push(`--headers=Authorization: ${target.authorization}`);
  let text: string;
  try {
    text = (await run(sqlmap, args, { timeout: seconds * 1000, maxBuffer: 64 * 1024 * 1024 })).stdout;
  } catch (error) {
    const failed = error as { stdout?: string; killed?: boolean };
    if (failed.killed) throw new Error(`sqlmap ran past ${seconds} s on ${target.name}`);
    text = failed.stdout ?? '';
  }
  // Only sqlmap's confirmed findings count: it reports candidates along the way, then tests them for false positives.
  const confirmed = text.includes('sqlmap identified the following injection point');
  const injectable = confirmed ? [...text.matchAll(/^Parameter: (\S+) \(/gm)].map((match) => match[1]!) : [];
  const verdict =
    text
      .split('\n')
      .find((line) => /all tested parameters do not appear to be injectable|is vulnerable|sqlmap identified the following injection point/i.test(line))
      ?.trim() ??
    text
      .trim()
      .split('\n')
      .filter((line) => line.includes('[CRITICAL]') || line.includes('[WARNING]'))
      .at(-1)
      ?.trim() ??
    'no verdict';
  const clean = !confirmed && /all tested parameters do not appear to be injectable/i.test(text);
  return { target: target.name, injectable: [...new Set(injectable)], verdict, clean, log: text };
}

/** Every parameter of the demo's resources, with the demo users' credentials. */
export async function demoTargets(base: string): Promise<ScanTarget[]> {
  const response = await fetch(`${base}/shop/`, { method: 'POST', body: new URLSearchParams({ auth: 'bearer', userid: 'bob', password: 'bob-pass' }) });
  if (!response.ok) throw new Error(`cannot get a demo token from ${base}/shop/ (${response.status})`);
  const bearer = `Bearer ${((await response.json()) as { token: string }).token}`;
  const carol = `Basic ${Buffer.from('carol:carol-pass').toString('base64')}`;
  const bob = `Basic ${Buffer.from('bob:bob-pass').toString('base64')}`;
  // A cursor of the paged catalog's, for the page after its first product by price.
  const page = (await (await fetch(`${base}/shop/v3.0/products?limit=1&sort=price`)).json()) as { next: string };
  return [
    { name: 'products v2.0 (public GET)', method: 'GET', path: '/shop/v2.0/products?max_price=30', params: ['max_price'] },
    {
      name: 'products v3.0 (a list: a text filter, the sort, the cursor)',
      method: 'GET',
      path: `/shop/v3.0/products?q=e&sort=price&limit=5&after=${page.next}`,
      params: ['q', 'sort', 'after'],
    },
    { name: 'token shape B', method: 'POST', path: '/shop/v1.0/token', body: 'user=alice&pass=alice-pass', params: ['user', 'pass'] },
    { name: 'token shape A', method: 'POST', path: '/shop/', body: 'auth=bearer&userid=alice&password=alice-pass', params: ['userid', 'password'] },
    // Product 1 only: the scan's orders may use up its stock.
    {
      name: 'orders (Bearer POST, 3-step transaction)',
      method: 'POST',
      path: '/shop/v1.0/orders',
      body: 'product_id=1&quantity=1',
      authorization: bearer,
      params: ['product_id', 'quantity'],
    },
    { name: 'notes (Basic POST)', method: 'POST', path: '/staff/v1.0/notes', body: 'title=scan&body=text', authorization: carol, params: ['title', 'body'] },
    { name: 'reviews (public GET of a protected resource)', method: 'GET', path: '/shop/v1.0/reviews?product_id=2', params: ['product_id'] },
    {
      name: 'reviews (Bearer POST)',
      method: 'POST',
      path: '/shop/v1.0/reviews',
      body: 'product_id=2&stars=4&body=scan',
      authorization: bearer,
      params: ['product_id', 'stars', 'body'],
    },
    { name: 'board (Basic POST, admins)', method: 'POST', path: '/staff/v1.0/board', body: 'title=scan', authorization: bob, params: ['title'] },
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  // npm run sqlmap -- http://127.0.0.1:PORT   (the demo, run with LOGIN_MAX_FAILURES=0 and LOGIN_MAX_FAILURES_PER_ADDRESS=0)
  const base = process.argv[2] ?? process.env.BASE_URL;
  if (!base || !/^https?:\/\/(127\.|localhost|\[::1\])/.test(base)) {
    process.stderr.write('usage: npm run sqlmap -- http://127.0.0.1:PORT (loopback only)\n');
    process.exit(2);
  }
  let injectable = 0;
  for (const target of await demoTargets(base)) {
    const result = await scan(base, target);
    injectable += result.injectable.length;
    process.stdout.write(
      `${target.name}: ${result.injectable.length > 0 ? `INJECTABLE ${result.injectable.join(', ')}` : result.clean ? 'not injectable' : result.verdict}\n`,
    );
  }
  process.stdout.write(`${injectable} injectable parameters\n`);
  process.exit(injectable > 0 ? 1 : 0);
}
