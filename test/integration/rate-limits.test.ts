import { rmSync } from 'node:fs';
import path from 'node:path';
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectTo } from '../../scripts/connection.js';
import { addUser } from '../../scripts/schema.js';
import { type BuiltServer, startBuiltServer } from '../support/built-server.js';
import { formBody, type RawResponse, send } from '../support/http.js';
import { buildScratchProject } from '../support/scratch-project.js';

/**
 * Rate limits (docs/internals/contract.md §10, issue 29) at the door of two built
 * servers on one database: a limit of 100 a minute admits no more than 100
 * (and the issue allows 110) across both, per user, per client address on a
 * public method; 429 with Retry-After and the RateLimit fields, which every
 * answer of a limited route carries; and a database that cannot count turns
 * no call into a 429 or a 500 (fail open).
 */
const ROOT = path.resolve('test/.tmp/rate-limits');
const USERS = ['rl-ann', 'rl-ben'];
let connection: mysql.Connection;
let servers: BuiltServer[] = [];

beforeAll(async () => {
  connection = await connectTo(inject('databaseUrl'));
  for (const user of USERS) await addUser(connection, user, `${user}-pass`, ['member']);
  await buildScratchProject(ROOT, {
    databaseUrl: inject('databaseUrl'),
    files: {
      'resources/lim/backend.xml': '<Backend xmlns="urn:xmlrest:resource:1.0" auth_scheme="Bearer"/>\n',
      'resources/lim/mine.xml': `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0" auth="member" rate_limit="100/m">
  <Request method="GET"><Sql id="me">select user_name from usr where user_id = $uid</Sql></Request>
  <Request method="POST" rate_limit="3/h"><Sql id="echo">select $note as note</Sql></Request>
</Resource>
`,
      'resources/lim/open.xml': `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0" rate_limit="20/m">
  <Request method="GET"><Sql id="hello">select 'hello' as greeting</Sql></Request>
</Resource>
`,
      'resources/lim/free.xml': `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0" auth="member">
  <Request method="GET"><Sql id="me">select $uid as uid</Sql></Request>
</Resource>
`,
    },
  });
  servers = await Promise.all([startBuiltServer({ root: ROOT, env: { ADMIN_PORT: '0' } }), startBuiltServer({ root: ROOT })]);
}, 180_000);

afterAll(async () => {
  await Promise.all(servers.map((server) => server.stop()));
  await connection?.end();
  rmSync(ROOT, { recursive: true, force: true });
});

async function tokenOf(user: string): Promise<string> {
  const response = await send(`${servers[0]!.url}/lim/`, { method: 'POST', ...formBody({ auth: 'bearer', userid: user, password: `${user}-pass` }) });
  expect(response.status).toBe(200);
  return (response.json() as { token: string }).token;
}

const get = (server: BuiltServer, route: string, token?: string, from?: string) =>
  send(`${server.url}${route}`, { headers: token ? { authorization: `Bearer ${token}` } : {}, ...(from ? { from } : {}) });

/** Waits for the next window when this one has too little time left for a burst to fit in it. */
async function freshWindow(probe: () => Promise<RawResponse>, seconds: number): Promise<void> {
  const reset = Number((await probe()).headers['ratelimit-reset']);
  if (reset < seconds) await new Promise((resolve) => setTimeout(resolve, (reset + 1) * 1000));
}

describe('a limit of 100 a minute, per user, on two servers', () => {
  it('admits at most 100 calls of a user in the window across both servers, then 429 with Retry-After', async () => {
    const ann = await tokenOf('rl-ann');
    const ben = await tokenOf('rl-ben');
    // A probe of ben's: the window is the same wall-clock minute for every caller.
    await freshWindow(() => get(servers[0]!, '/lim/v1.0/mine', ben), 25);
    const answers: RawResponse[] = [];
    for (let batch = 0; batch < 15; batch++) {
      answers.push(...(await Promise.all(Array.from({ length: 10 }, (_, i) => get(servers[(batch + i) % 2]!, '/lim/v1.0/mine', ann)))));
    }
    const admitted = answers.filter((answer) => answer.status === 200).length;
    const refused = answers.filter((answer) => answer.status === 429);
    expect(admitted + refused.length).toBe(150);
    expect(admitted).toBeLessThanOrEqual(100);
    // A server may end the window with part of its lease (5 calls) unused: the other refuses a little early.
    expect(admitted).toBeGreaterThanOrEqual(90);
    const last = refused.at(-1)!;
    expect(last.json()).toEqual({ message: 'Too many requests: the rate limit of this route is reached', status: 429 });
    expect(Number(last.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(last.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(last.headers['ratelimit-limit']).toBe('100');
    expect(last.headers['ratelimit-remaining']).toBe('0');
    // Every answer of the limited route carries the three fields.
    for (const answer of answers)
      for (const field of ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']) expect(answer.headers[field]).toBeDefined();
    // Another user has a count of its own.
    expect((await get(servers[1]!, '/lim/v1.0/mine', ben)).status).toBe(200);
    // A route without rate_limit carries none of it.
    const free = await get(servers[0]!, '/lim/v1.0/free', ann);
    expect(free.status).toBe(200);
    expect(free.headers['ratelimit-limit']).toBeUndefined();
    expect(servers[0]!.logs.some((line) => line.reason === 'rate_limited') || servers[1]!.logs.some((line) => line.reason === 'rate_limited')).toBe(true);
  }, 120_000);

  it("counts a method's own limit apart: POST 3 an hour", async () => {
    const ben = await tokenOf('rl-ben');
    const post = (server: BuiltServer) =>
      send(`${server.url}/lim/v1.0/mine`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ben}`, 'content-type': 'application/json' },
        body: '{"note":"x"}',
      });
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await post(servers[i % 2]!)).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
  });
});

describe('a public method, limited per client address', () => {
  it('gives each address its own 20 a minute', async () => {
    await freshWindow(() => get(servers[0]!, '/lim/v1.0/open', undefined, '127.0.0.9'), 15);
    const statuses: number[] = [];
    for (let i = 0; i < 25; i++) statuses.push((await get(servers[i % 2]!, '/lim/v1.0/open', undefined, '127.0.0.7')).status);
    expect(statuses.filter((status) => status === 200).length).toBeLessThanOrEqual(20);
    expect(statuses.filter((status) => status === 200).length).toBeGreaterThanOrEqual(18);
    expect(statuses.at(-1)).toBe(429);
    expect((await get(servers[0]!, '/lim/v1.0/open', undefined, '127.0.0.8')).status).toBe(200);
  });
});

describe('when the database cannot count', () => {
  it('admits every call (fail open), never 429 or 500, and says so in the log and the metrics', async () => {
    const ann = await tokenOf('rl-ann');
    await connection.query('rename table xmlrest_rate_limit to xmlrest_rate_limit_away');
    try {
      // A user and an address never counted before: their first call needs a lease, which fails.
      const statuses: number[] = [];
      for (let i = 0; i < 30; i++) statuses.push((await get(servers[i % 2]!, '/lim/v1.0/open', undefined, '127.0.0.33')).status);
      expect(new Set(statuses)).toEqual(new Set([200]));
      const logged = () =>
        servers.some((server) => server.logs.some((line) => String(line.msg).includes('the table xmlrest_rate_limit is missing (run xmlrest db init)')));
      for (let waited = 0; !logged() && waited < 5000; waited += 100) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(logged()).toBe(true);
      const metrics = await (await fetch(`${servers[0]!.adminUrl}/metrics`)).text();
      expect(Number(/^xmlrest_rate_limit_failed_open_total (\d+)/m.exec(metrics)?.[1] ?? 0)).toBeGreaterThan(0);
      expect((await get(servers[0]!, '/lim/v1.0/mine', ann)).status).not.toBe(500);
    } finally {
      await connection.query('rename table xmlrest_rate_limit_away to xmlrest_rate_limit');
    }
  });
});
