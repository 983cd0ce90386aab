import { rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import path from 'node:path';
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { digestKey } from '../../runtime/auth/digest.js';
import { connectTo } from '../../scripts/connection.js';
import { addPlainTextUser } from '../../scripts/schema.js';
import { type BuiltServer, startBuiltServer } from '../support/built-server.js';
import { basicHeader, formBody, type RawResponse, send } from '../support/http.js';
import { buildScratchProject } from '../support/scratch-project.js';

/**
 * Issue 39: correct logins fired together were counted as failures while they ran (each attempt counted before
 * its check, taken back after), so one user's concurrent logins passed `perUser` (10) with not one wrong: 429s,
 * then a backoff of seconds for the name. Against the built server, with the seed's default AuthQuery (the
 * password compared in SQL, so no remembered verdict short-cuts the limits): only failures count, and parallel
 * guessing stays bounded by `perUser` checks. One server keeps the counts in memory (the default), two share them
 * in the database (LOGIN_COUNTERS=database).
 */
const ROOT = path.resolve('test/.tmp/concurrent-logins');
const PER_USER = 10;
/** The backoff's cap, long enough that a request that met it cannot pass for one that did not. */
const BACKOFF_MAX_MS = 20_000;

/** The seed's queries (docs/internals/seed.md §5.3), exactly: the SQL compares the password, on plain-text rows. */
const SEED_JOIN = `from usr_role r inner join usr u on r.user_id = u.user_id
    where u.user_name = $user and u.pass_word = $pass`;
const RESOURCES = {
  'resources/seedb/backend.xml': `<Backend xmlns="urn:xmlrest:resource:1.0" auth_scheme="Basic">
  <AuthQuery>
    select r.user_id, r.role_name
    ${SEED_JOIN}
  </AuthQuery>
</Backend>
`,
  'resources/seedb/mine.xml': `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0" auth="member">
  <Request method="GET"><Sql id="me">select $uid as uid</Sql></Request>
</Resource>
`,
  'resources/seeda/backend.xml': `<Backend xmlns="urn:xmlrest:resource:1.0" auth_scheme="Bearer">
  <AuthQuery>
    select cast(r.user_id as char) as sub, r.role_name as aud
    ${SEED_JOIN}
  </AuthQuery>
</Backend>
`,
  // The seed's token resource (§4.2, shape B): the query compares the password, then the token generator begins
  // the login and says it succeeded, or says nothing (a failure, counted when the request ends).
  'resources/seeda/token.xml': `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0">
  <Request method="POST" status="201">
    <Sql id="authQuery" output="false">
      select cast(r.user_id as char) as sub, r.role_name as aud
      ${SEED_JOIN}
    </Sql>
    <Execute id="token" output="true" classname="xmlrest.auth.TokenGenerator">
      <Arg name="aud" value="$[authQuery][0].aud"/>
      <Arg name="sub" value="$[authQuery][0].sub"/>
      <Arg name="user" value="$user"/>
    </Execute>
  </Request>
</Resource>
`,
  'resources/seeda/mine.xml': `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0" auth="member">
  <Request method="GET"><Sql id="me">select $uid as uid</Sql></Request>
</Resource>
`,
};
const USERS = [
  'cl-tokens',
  'cl-tokens-db',
  'cl-shape-b',
  'cl-shape-b-guess',
  'cl-basic',
  'cl-basic-db',
  'cl-guess',
  'cl-guess-db',
  'cl-burst',
  'cl-burst-db',
  'cl-hangup-db',
];
const password = (user: string) => `${user}-pass`;

let connection: mysql.Connection;
/** Counts in memory. */
let server: BuiltServer;
/** Two servers sharing their counts in the database. */
let shared: BuiltServer[] = [];

beforeAll(async () => {
  connection = await connectTo(inject('databaseUrl'));
  await connection.query(`delete from usr where user_name in (${USERS.map(() => '?').join(', ')})`, USERS);
  for (const user of USERS) await addPlainTextUser(connection, user, password(user), ['member']);
  await buildScratchProject(ROOT, { files: RESOURCES, databaseUrl: inject('databaseUrl') });
  const env = { LOGIN_BACKOFF_MAX_MS: String(BACKOFF_MAX_MS) };
  [server, ...shared] = await Promise.all([
    startBuiltServer({ root: ROOT, env }),
    startBuiltServer({ root: ROOT, env: { ...env, LOGIN_COUNTERS: 'database' } }),
    startBuiltServer({ root: ROOT, env: { ...env, LOGIN_COUNTERS: 'database' } }),
  ]);
}, 180_000);

afterAll(async () => {
  await Promise.all([server, ...shared].map((one) => one?.stop()));
  await connection?.query(`delete from usr where user_name in (${USERS.map(() => '?').join(', ')})`, USERS);
  await connection?.end();
  rmSync(ROOT, { recursive: true, force: true });
});

/** One client's keep-alive connections: `size` at most, as a load generator holds them. */
const connections = (size: number) => new Agent({ keepAlive: true, maxSockets: size });

const basicGet = (at: BuiltServer, user: string, pass: string, options: { from?: string; agent?: Agent } = {}) =>
  send(`${at.url}/seedb/v1.0/mine`, { headers: { authorization: basicHeader(user, pass) }, ...options });

const shapeA = (at: BuiltServer, user: string, pass: string, agent?: Agent) =>
  send(`${at.url}/seeda/`, { method: 'POST', ...formBody({ auth: 'bearer', userid: user, password: pass }), agent });

/**
 * `size` connections to each server opened beforehand (by requests that check no password), so that the requests
 * then sent at once arrive at once, not one connection's set-up after another.
 */
async function opened(at: BuiltServer[], size: number): Promise<Agent[]> {
  const agents = at.map(() => connections(size));
  await Promise.all(at.flatMap((one, i) => Array.from({ length: size }, () => send(`${one.url}/seeda/v1.0/mine`, { agent: agents[i] }))));
  return agents;
}

/** How many answers had each status. */
function statuses(responses: RawResponse[]): Record<number, number> {
  const counted: Record<number, number> = {};
  for (const { status } of responses) counted[status] = (counted[status] ?? 0) + 1;
  return counted;
}

/** The failures the database counters hold for a user of the Basic backend: by name, and by name from each client. */
async function storedFailures(user: string, clients: string[]): Promise<number[]> {
  const keys = [digestKey('name', 'backend:seedb', user), ...clients.map((client) => digestKey('account', 'backend:seedb', user, client))];
  const [rows] = await connection.query(
    `select failures from xmlrest_login_failure where counter in (${keys.map(() => '?').join(', ')}) and failures > 0 and reset_at > now(3)`,
    keys,
  );
  return (rows as { failures: number }[]).map((row) => Number(row.failures));
}

describe('correct logins fired together (issue 39)', () => {
  it('20 shape-A token requests with the right password, sent at once, get 20 tokens', async () => {
    const [agent] = await opened([server], 20);
    try {
      const answers = await Promise.all(Array.from({ length: 20 }, () => shapeA(server, 'cl-tokens', password('cl-tokens'), agent)));
      expect(statuses(answers)).toEqual({ 200: 20 });
      expect(answers.every((answer) => typeof (answer.json() as { token?: unknown }).token === 'string')).toBe(true);
    } finally {
      agent!.destroy();
    }
  });

  it('20 at once at each of two servers sharing their counts in the database get 40 tokens', async () => {
    const agents = await opened(shared, 20);
    try {
      const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => shapeA(shared[i % 2]!, 'cl-tokens-db', password('cl-tokens-db'), agents[i % 2])));
      expect(statuses(answers)).toEqual({ 200: 40 });
    } finally {
      for (const agent of agents) agent.destroy();
    }
  });

  it('a Basic GET under 32 connections of one user answers only 2xx', async () => {
    const agent = connections(32);
    try {
      const answers: RawResponse[] = [];
      for (let wave = 0; wave < 10; wave++) {
        answers.push(...(await Promise.all(Array.from({ length: 32 }, () => basicGet(server, 'cl-basic', password('cl-basic'), { agent })))));
      }
      expect(statuses(answers)).toEqual({ 200: 320 });
    } finally {
      agent.destroy();
    }
  });

  it('the same with the counts in the database, 32 connections over two servers', async () => {
    const agents = [connections(16), connections(16)];
    try {
      const answers: RawResponse[] = [];
      for (let wave = 0; wave < 4; wave++) {
        answers.push(
          ...(await Promise.all(
            Array.from({ length: 32 }, (_, i) => basicGet(shared[i % 2]!, 'cl-basic-db', password('cl-basic-db'), { agent: agents[i % 2]! })),
          )),
        );
      }
      expect(statuses(answers)).toEqual({ 200: 128 });
      expect(await storedFailures('cl-basic-db', ['127.0.0.1'])).toEqual([]);
    } finally {
      for (const agent of agents) agent.destroy();
    }
  });

  it('leaves the name no backoff: a request of that user during and after a burst from several clients is not slowed', async () => {
    // Thirty at once from three clients: each client within its limit, the name's thirty past it. Counted while they
    // ran, the name "failed" thirty times and every later check of it waited up to BACKOFF_MAX_MS.
    const clients = ['127.0.0.2', '127.0.0.3', '127.0.0.4'];
    let answered = 0;
    let tenAnswered: () => void = () => undefined;
    const ten = new Promise<void>((resolve) => {
      tenAnswered = resolve;
    });
    const burst = Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        basicGet(server, 'cl-burst', password('cl-burst'), { from: clients[i % 3] }).then((answer) => {
          if (++answered === 10) tenAnswered();
          return answer;
        }),
      ),
    );
    // Once the burst has reached the server (a third of it answered), while the rest runs.
    await ten;
    const started = Date.now();
    const single = await basicGet(server, 'cl-burst', password('cl-burst'), { from: '127.0.0.5' });
    // Not a speed figure: a request that met the backoff would take the better part of BACKOFF_MAX_MS.
    expect(Date.now() - started).toBeLessThan(BACKOFF_MAX_MS / 2);
    expect(single.status).toBe(200);
    expect(statuses(await burst)).toEqual({ 200: 30 });
    // And after it: the right password, at once, from any client.
    expect((await basicGet(server, 'cl-burst', password('cl-burst'), { from: '127.0.0.6' })).status).toBe(200);
  });

  it('counts no failure for a burst of right passwords (the counts in the database say so)', async () => {
    const clients = ['127.0.0.2', '127.0.0.3'];
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => basicGet(shared[i % 2]!, 'cl-burst-db', password('cl-burst-db'), { from: clients[i % 2] })),
    );
    expect(statuses(answers)).toEqual({ 200: 40 });
    expect(await storedFailures('cl-burst-db', clients)).toEqual([]);
    const started = Date.now();
    expect((await basicGet(shared[0]!, 'cl-burst-db', password('cl-burst-db'), { from: '127.0.0.7' })).status).toBe(200);
    expect(Date.now() - started).toBeLessThan(BACKOFF_MAX_MS / 2);
  });
});

describe('shape B, the seed token resource (a plug-in that begins the login itself)', () => {
  const shapeB = (user: string, pass: string, agent: Agent) => send(`${server.url}/seeda/v1.0/token`, { method: 'POST', ...formBody({ user, pass }), agent });

  it('20 right ones at once get 20 tokens; 20 wrong ones at once get no more than perUser checks', async () => {
    const [agent] = await opened([server], 20);
    try {
      const right = await Promise.all(Array.from({ length: 20 }, () => shapeB('cl-shape-b', password('cl-shape-b'), agent!)));
      expect(statuses(right)).toEqual({ 201: 20 });
      // Each failure is counted when its request ends: those waiting hear 429 then, none 503.
      const wrong = await Promise.all(Array.from({ length: 20 }, (_, i) => shapeB('cl-shape-b-guess', `wrong-${i}`, agent!)));
      expect(statuses(wrong)).toEqual({ 401: PER_USER, 429: 20 - PER_USER });
    } finally {
      agent!.destroy();
    }
  });
});

describe('wrong passwords fired together', () => {
  it(`20 at once from one client get ${PER_USER} password checks (401) and ${20 - PER_USER} refusals (429)`, async () => {
    const agent = connections(20);
    try {
      // The connections opened first, as above, from one client address.
      await Promise.all(Array.from({ length: 20 }, () => send(`${server.url}/seedb/v1.0/mine`, { agent })));
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => basicGet(server, 'cl-guess', `wrong-${i}`, { agent })));
      expect(statuses(answers)).toEqual({ 401: PER_USER, 429: 20 - PER_USER });
    } finally {
      agent.destroy();
    }
    // The right password from that client is refused too, until the window ends.
    expect((await basicGet(server, 'cl-guess', password('cl-guess'))).status).toBe(429);
  });

  it(`20 at once over two servers sharing their counts get no more than ${PER_USER} checks between them`, async () => {
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => basicGet(shared[i % 2]!, 'cl-guess-db', `wrong-${i}`, { from: '127.0.0.8' })));
    const counted = statuses(answers);
    expect(counted[401]).toBeLessThanOrEqual(PER_USER);
    expect((counted[401] ?? 0) + (counted[429] ?? 0)).toBe(20);
    expect(await storedFailures('cl-guess-db', [])).toEqual([counted[401]]);
  });
});

/** Sends a request from `from` and hangs up `afterMs` later, unless answered first. */
function hangUp(url: string, form: { body: string; headers: Record<string, string> }, from: string, afterMs: number): Promise<void> {
  return new Promise((resolve) => {
    const req = request(url, {
      method: 'POST',
      headers: { ...form.headers, 'content-length': String(Buffer.byteLength(form.body)) },
      localAddress: from,
      agent: false,
    });
    req.on('error', () => resolve());
    req.on('response', (res) => {
      res.resume();
      resolve();
    });
    req.end(form.body);
    setTimeout(() => {
      req.destroy();
      resolve();
    }, afterMs);
  });
}

describe('a client that hangs up while its login waits (the review of issue 39)', () => {
  it('leaves no place held for the name: its attempt ends as failed once admitted, so the name is never locked', async () => {
    const user = 'cl-hangup-db';
    const at = shared[0]!;
    // The name fails perUser times, each from a client of its own, so that every further check of it first waits the
    // backoff (250 ms, doubling): from any client, the real user's included.
    for (let i = 0; i < PER_USER; i++) {
      const answer = await send(`${at.url}/seeda/v1.0/token`, { method: 'POST', ...formBody({ user, pass: `wrong-${i}` }), from: `127.0.1.${i + 1}` });
      expect(answer.status).toBe(401);
    }
    // Five more, each hanging up during that wait. A place each left held for good would, once the failures' window
    // ends, make every login of the name wait 5 s and answer 503, from any address.
    for (let i = 0; i < 5; i++) {
      await hangUp(`${at.url}/seeda/v1.0/token`, formBody({ user, pass: `wrong-h${i}` }), `127.0.2.${i + 1}`, 100);
    }
    const places = digestKey('name', 'backend:seeda', user);
    let held = -1;
    for (let waited = 0; waited < 45_000 && held !== 0; waited += 500) {
      const [rows] = await connection.query('select failures from xmlrest_login_failure where counter = ? and reset_at > now(3)', [`h:${places}`]);
      held = Number((rows as { failures: number }[])[0]?.failures ?? 0);
      if (held !== 0) await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(held).toBe(0);
  }, 90_000);
});
