import { rmSync } from 'node:fs';
import path from 'node:path';
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { OUTBOX_ROUTINES } from '../../runtime/events/index.js';
import { main as xmlrestMain } from '../../scripts/cli/xmlrest.js';
import { connectTo } from '../../scripts/connection.js';
import { addUser } from '../../scripts/schema.js';
import { type BuiltServer, startBuiltServer } from '../support/built-server.js';
import { basicHeader, send } from '../support/http.js';
import { ownDatabase } from '../support/own-database.js';
import { buildScratchProject } from '../support/scratch-project.js';
import { newSecret, WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * Events and webhooks (docs/internals/contract.md §12, issue 32) over HTTP against
 * built servers: an event is delivered once its request's transaction
 * commits, signed as Standard Webhooks (verified by `standardwebhooks`, the
 * reference implementation); a rolled-back request, or the first run of a
 * deadlocked one, emits nothing; a receiver down for a while gets everything
 * once it is back; a 410 stops its webhook until a retry; a redirect is never
 * followed; an attempt is cut after EVENTS_TIMEOUT_MS; servers share the work
 * and a killed one loses nothing. The timings are shortened through EVENTS_*,
 * so that what takes minutes in production takes seconds here.
 */
const ROOT = path.resolve('test/.tmp/events');
const SECRET_NEW = newSecret();
const SECRET_OLD = newSecret();
const SECRET_B = newSecret();
const TOPICS = ['note', 'flaky', 'gone', 'moved', 'slow', 'shared', 'broken', 'ordered'] as const;
type Topic = (typeof TOPICS)[number];
const receivers = Object.fromEntries(TOPICS.map((topic) => [topic, new WebhookReceiver(topic === 'note' ? [SECRET_OLD] : [SECRET_B])])) as Record<
  Topic,
  WebhookReceiver
>;
const WRITER = basicHeader('ev-writer', 'ev-writer-pass');
let databaseUrl = '';
let connection: mysql.Connection;
let main: BuiltServer;
const others: BuiltServer[] = [];
const figures: string[] = [];

/** What every server of this file runs with: delivery timings in tenths of seconds, not minutes. */
const ENV = () => ({
  DATABASE_URL: databaseUrl,
  // Rotation: the note webhook's secret is two, both sign; its receiver knows only the old one.
  HOOKS_SECRET_A: `${SECRET_NEW} ${SECRET_OLD}`,
  HOOKS_SECRET_B: SECRET_B,
  EVENTS_POLL_MS: '100',
  EVENTS_LEASE_SECONDS: '3',
  EVENTS_TIMEOUT_MS: '1000',
  EVENTS_RETRY_BASE_MS: '200',
  EVENTS_RETRY_MAX_MS: '800',
  EVENTS_RETRY_SECONDS: '3',
  EVENTS_MAX_BYTES: '1024',
  ADMIN_PORT: '0',
});

const topicResource = (topic: Topic) => `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0" auth="writer">
  <Request method="POST" status="201">
    <Sql id="added" output="false">insert into ev_notes (topic, body) values ('${topic}', $body)</Sql>
    <Sql id="note">select note_id, topic, body from ev_notes where note_id = $[added][0].insertId</Sql>
    <Emit event="${topic}.added" step="note" key="$[added][0].insertId"/>${
      topic === 'note'
        ? `
    <Sql id="claimed" output="false">insert into ev_unique (k) values ($k)</Sql>`
        : ''
    }
  </Request>
</Resource>
`;

beforeAll(async () => {
  await Promise.all(TOPICS.map((topic) => receivers[topic].up()));
  databaseUrl = await ownDatabase('events');
  connection = await connectTo(databaseUrl);
  await connection.query(`create table ev_notes (note_id int unsigned not null auto_increment primary key, topic varchar(16) not null, body text not null)`);
  await connection.query('create table ev_unique (k varchar(40) not null primary key)');
  await connection.query('create table ev_pair (id int unsigned not null primary key, n int not null)');
  await connection.query('insert into ev_pair values (1, 0), (2, 0), (10, 0), (20, 0)');
  await addUser(connection, 'ev-writer', 'ev-writer-pass', ['writer']);
  const hooks = TOPICS.map(
    (topic) => `  <Webhook event="${topic}.*" url="${receivers[topic].url}" secret="${topic === 'note' ? 'HOOKS_SECRET_A' : 'HOOKS_SECRET_B'}"/>`,
  );
  await buildScratchProject(ROOT, {
    databaseUrl,
    files: {
      'resources/hooks/backend.xml': `<Backend xmlns="urn:xmlrest:resource:1.0" auth_scheme="Basic">\n${hooks.join('\n')}\n</Backend>\n`,
      ...Object.fromEntries(TOPICS.map((topic) => [`resources/hooks/${topic}.xml`, topicResource(topic)])),
      // An event per change of a pair row, keyed by the row: its events go out in order.
      'resources/hooks/tick.xml': `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0" auth="writer">
  <Request method="POST">
    <Sql id="ticked" output="false">update ev_pair set n = n + 1 where id = $id</Sql>
    <Sql id="pair">select id, n from ev_pair where id = $id</Sql>
    <Emit event="ordered.ticked" step="pair" key="$id"/>
  </Request>
</Resource>
`,
      // Two events of one change, keyed by its row: written together, in the order emitted, and delivered so.
      'resources/hooks/double.xml': `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0" auth="writer">
  <Request method="POST" status="201">
    <Sql id="added" output="false">insert into ev_notes (topic, body) values ('note', $body)</Sql>
    <Sql id="note">select note_id, topic, body from ev_notes where note_id = $[added][0].insertId</Sql>
    <Emit event="note.drafted" step="note" key="$[added][0].insertId"/>
    <Emit event="note.published" step="note" key="$[added][0].insertId"/>
  </Request>
</Resource>
`,
      // Two requests updating the same two rows in opposite order, a pause between: one deadlocks and runs again.
      'resources/hooks/swap.xml': `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0" auth="writer">
  <Request method="POST">
    <Sql id="first" output="false">update ev_pair set n = n + 1 where id = $a</Sql>
    <Sql id="pause" output="false">select sleep(0.3) as slept</Sql>
    <Sql id="second">update ev_pair set n = n + 1 where id = $b</Sql>
    <Emit event="note.swapped" step="second"/>
  </Request>
</Resource>
`,
    },
  });
  main = await startBuiltServer({ root: ROOT, env: ENV() });
}, 180_000);

afterAll(async () => {
  await Promise.all([main, ...others].map((server) => server?.stop('SIGKILL')));
  await Promise.all(TOPICS.map((topic) => receivers[topic].down()));
  await connection?.end();
  rmSync(ROOT, { recursive: true, force: true });
  process.stdout.write(`events figures:\n  ${figures.join('\n  ')}\n`);
});

async function post(topic: Topic, body: string, extra: Record<string, string> = {}, server = main) {
  return send(`${server.url}/hooks/v1.0/${topic}`, {
    method: 'POST',
    headers: { authorization: WRITER, 'content-type': 'application/json' },
    body: JSON.stringify({ body, ...(topic === 'note' ? { k: body } : {}), ...extra }),
  });
}

async function until<T>(what: string, read: () => Promise<T> | T, done: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms (last: ${JSON.stringify(value)?.slice(0, 300)})`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function rows(where: string, values: unknown[] = []) {
  const [found] = await connection.query(
    `select id, msg_id, event, state, attempts, last_status, last_error, payload from xmlrest_outbox where ${where} order by id`,
    values,
  );
  return found as {
    id: number;
    msg_id: string;
    event: string;
    state: string;
    attempts: number;
    last_status: number | null;
    last_error: string | null;
    payload: string;
  }[];
}

/**
 * An `xmlrest` command, run in this process (its code, not its start: commands.test.ts runs the bin itself), on
 * this file's database; what it printed, and its exit code (2 for a usage error, as the bin exits).
 */
async function xmlrest(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const printed: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((...parts: unknown[]) => void printed.push(`${parts.join(' ')}\n`));
  const shared = process.env.DATABASE_URL;
  process.env.DATABASE_URL = databaseUrl;
  try {
    return { code: await xmlrestMain(args), stdout: printed.join(''), stderr: '' };
  } catch (error) {
    return { code: (error as { exitCode?: number }).exitCode ?? 1, stdout: printed.join(''), stderr: (error as Error).message };
  } finally {
    log.mockRestore();
    if (shared === undefined) delete process.env.DATABASE_URL;
    else process.env.DATABASE_URL = shared;
  }
}

describe('an event', () => {
  it('is delivered once its transaction commits, as the module types it, signed so that standardwebhooks verifies it', async () => {
    const answer = await post('note', 'first note');
    expect(answer.status).toBe(201);
    const noteId = (answer.json() as { note: { note_id: number }[] }).note[0]!.note_id;
    const [delivery] = await until(
      'the delivery',
      () => receivers.note.deliveries,
      (list) => list.length >= 1,
    );
    // Verified by the reference implementation, with the old one of the two secrets the server signs with.
    expect(delivery!.refused).toBeUndefined();
    expect(delivery!.signature.split(' ')).toHaveLength(2);
    expect(delivery!.id).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(Math.abs(delivery!.timestamp - Date.now() / 1000)).toBeLessThan(30);
    expect(delivery!.payload).toEqual({
      type: 'note.added',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      // Which row it is about: the Emit's key.
      key: noteId,
      data: { note: [{ note_id: noteId, topic: 'note', body: 'first note' }] },
    });
    // The body sent is the body stored, byte for byte (the signature covers it).
    const [row] = await until(
      'delivered',
      () => rows("event = 'note.added'"),
      (found) => found[0]?.state === 'delivered',
    );
    expect(row).toMatchObject({ msg_id: delivery!.id, attempts: 1, last_status: 204, payload: delivery!.body });
    // The log line of the delivery names the event id.
    await until(
      'the log line',
      () => main.logs,
      (logs) => logs.some((line) => line.msg === 'event delivered' && line.eventId === delivery!.id),
    );
    // A signature the receiver cannot verify would have been refused: a wrong secret does not verify.
    const stranger = new WebhookReceiver([newSecret()]);
    expect(() =>
      (stranger as unknown as { verifiers: { verify(body: string, headers: object): unknown }[] }).verifiers[0]!.verify(delivery!.body, {
        'webhook-id': delivery!.id,
        'webhook-timestamp': String(delivery!.timestamp),
        'webhook-signature': delivery!.signature,
      }),
    ).toThrow('No matching signature found');
  });

  it('is not emitted by a request that rolled back', async () => {
    expect((await post('note', 'taken')).status).toBe(201);
    // The same key again: the last step fails (409) after the Emit step ran, and the whole transaction rolls back.
    const refused = await post('note', 'taken');
    expect(refused.status).toBe(409);
    await until(
      'the first delivery',
      () => receivers.note.deliveries,
      (list) => list.filter((delivery) => delivery.body.includes('"taken"')).length >= 1,
    );
    // One row in the outbox, delivered: the rolled-back request left none that could still go out.
    const taken = await until(
      'the event delivered',
      () => rows("event = 'note.added' and payload like '%\"taken\"%'"),
      (found) => found.every((row) => row.state === 'delivered'),
    );
    expect(taken).toHaveLength(1);
    expect(receivers.note.deliveries.filter((delivery) => delivery.body.includes('"taken"'))).toHaveLength(1);
  });

  it('is not sent when the write before it changed nothing (a row the caller cannot reach), and says which row it is about', async () => {
    // Row 999 does not exist: the update finds nothing, and no one gets a signed "ticked" about it.
    const missed = await send(`${main.url}/hooks/v1.0/tick`, {
      method: 'POST',
      headers: { authorization: WRITER, 'content-type': 'application/json' },
      body: JSON.stringify({ id: 999 }),
    });
    expect(missed.status, missed.text).toBe(200);
    expect(await rows("event = 'ordered.ticked' and payload like '%\"key\":999,%'")).toEqual([]);
  });

  it('set aside the events behind a retrying head of their key, so that claims do not walk them again, and emitting requests go on', async () => {
    // A head of its key whose next attempt is an hour away, and 1,000 events of that key behind it, all due now.
    const url = receivers.note.url;
    const key = `note:backlog-${Date.now()}`;
    const row = (due: string) => `(concat('msg_', replace(uuid(), '-', '')), 'hooks', 'note.added', ?, ?, '{}', 'pending', ${due})`;
    await connection.query(
      `insert into xmlrest_outbox (msg_id, backend, event, url, order_key, payload, state, due) values ${row('now(3) + interval 1 hour')}`,
      [url, key],
    );
    const behind = Array.from({ length: 1000 }, () => row('now(3)'));
    await connection.query(
      `insert into xmlrest_outbox (msg_id, backend, event, url, order_key, payload, state, due) values ${behind.join(', ')}`,
      behind.flatMap(() => [url, key]),
    );
    try {
      // A request emitting meanwhile is answered, and its event delivered.
      expect((await post('note', 'beside the backlog')).status).toBe(201);
      await until(
        'the event beside the backlog delivered',
        () => receivers.note.deliveries,
        (list) => list.some((delivery) => delivery.body.includes('"beside the backlog"')),
      );
      // Every event behind the head is parked until the head's next attempt: no claim walks them again meanwhile.
      const [[waiting]] = (await connection.query('select count(*) as n from xmlrest_outbox where order_key = ? and due <= now(3) + interval 30 minute', [
        key,
      ])) as unknown as [{ n: number }[]];
      expect(Number(waiting!.n)).toBe(0);
      expect(receivers.note.deliveries.some((delivery) => delivery.body === '{}')).toBe(false);
    } finally {
      await connection.query('delete from xmlrest_outbox where order_key = ?', [key]);
    }
  });

  it('is never cut: a body over EVENTS_MAX_BYTES fails its request, which rolls back, and the log says why', async () => {
    const big = 'x'.repeat(1500);
    const answer = await post('note', big, { k: 'too big' });
    // The size is the client's doing: a 4xx that says so, never a 500.
    expect(answer.status, answer.text).toBe(413);
    expect(answer.json()).toMatchObject({ message: expect.stringContaining('too large to be sent as an event') });
    const [notes] = await connection.query('select count(*) as n from ev_notes where body = ?', [big]);
    expect(Number((notes as { n: number }[])[0]!.n)).toBe(0);
    expect(await rows('length(payload) > 1024')).toEqual([]);
    expect(
      main.logs.some(
        (line) =>
          line.event === 'note.added' && Number(line.bytes) > 1024 && String(line.msg).startsWith('an event over EVENTS_MAX_BYTES refused its request (413)'),
      ),
    ).toBe(true);
  });

  it('goes with its request in the order emitted: two events of one change are both written, and delivered so', async () => {
    const answer = await send(`${main.url}/hooks/v1.0/double`, {
      method: 'POST',
      headers: { authorization: WRITER, 'content-type': 'application/json' },
      body: JSON.stringify({ body: 'twice' }),
    });
    expect(answer.status, answer.text).toBe(201);
    const written = await until(
      'both delivered',
      () => rows("event in ('note.drafted', 'note.published')"),
      (found) => found.length === 2 && found.every((row) => row.state === 'delivered'),
    );
    expect(written.map((row) => row.event)).toEqual(['note.drafted', 'note.published']);
    const received = receivers.note.deliveries.filter((delivery) => delivery.body.includes('"twice"')).map((delivery) => delivery.payload?.type);
    expect(received).toEqual(['note.drafted', 'note.published']);
  });

  it('is written with its COMMIT in one call; where xmlrest db init has not made that call yet, apart from it, and the log says to run it', async () => {
    const procedure = () =>
      connection
        .query("select routine_name from information_schema.routines where routine_schema = database() and routine_name = 'xmlrest_outbox_commit'")
        .then(([found]) => (found as unknown[]).length);
    expect(await procedure()).toBe(1);
    // A database of the version before it: the table, not the procedure.
    await connection.query('drop procedure xmlrest_outbox_commit');
    const older = await startBuiltServer({ root: ROOT, env: ENV() });
    try {
      for (const body of ['before init 1', 'before init 2']) expect((await post('note', body, {}, older)).status).toBe(201);
      await until(
        'both delivered',
        () => rows("payload like '%before init%'"),
        (found) => found.length === 2 && found.every((row) => row.state === 'delivered'),
      );
      // Said once, not per request.
      const said = older.logs.filter((line) => String(line.msg).includes('run xmlrest db init'));
      expect(said).toHaveLength(1);
      expect(said[0]).toMatchObject({ level: 'warn', procedure: 'xmlrest_outbox_commit' });
    } finally {
      await older.stop();
    }
    expect(await xmlrest('db', 'init')).toMatchObject({ code: 0 });
    expect(await procedure()).toBe(1);
    // The server calls this database's procedure: here one that also counts its calls in a table of this file's
    // own (the run's MariaDB counts every file's calls together, and another file emits too), then db init's again.
    await connection.query('create table ev_calls (n int unsigned not null auto_increment primary key)');
    await connection.query('drop procedure xmlrest_outbox_commit');
    await connection.query(OUTBOX_ROUTINES[1]!.replace('begin\n', 'begin\n  insert into ev_calls () values ();\n'));
    expect((await post('note', 'after init')).status).toBe(201);
    const [called] = await connection.query('select count(*) as n from ev_calls');
    expect(Number((called as { n: number }[])[0]!.n)).toBe(1);
    await until(
      'delivered',
      () => rows("payload like '%after init%'"),
      (found) => found.length === 1 && found[0]!.state === 'delivered',
    );
    expect(await xmlrest('db', 'init')).toMatchObject({ code: 0 });
    const [body] = await connection.query(
      "select routine_definition as body from information_schema.routines where routine_schema = database() and routine_name = 'xmlrest_outbox_commit'",
    );
    expect(String((body as { body: string }[])[0]!.body)).not.toContain('ev_calls');
  });

  it('is emitted once by a transaction that deadlocked and ran again', async () => {
    const swap = (a: number, b: number) =>
      send(`${main.url}/hooks/v1.0/swap`, {
        method: 'POST',
        headers: { authorization: WRITER, 'content-type': 'application/json' },
        body: JSON.stringify({ a, b }),
      });
    const retriedBefore = main.logs.filter((line) => line.msg === 'database operation run again').length;
    const answers = await Promise.all([swap(1, 2), swap(2, 1)]);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
    // InnoDB chose one to roll back (1213), and the server ran it again: its first run's event went with it.
    expect(main.logs.filter((line) => line.msg === 'database operation run again' && line.reason === 'db_conflict').length).toBeGreaterThan(retriedBefore);
    const swapped = await until(
      'two deliveries',
      () => rows("event = 'note.swapped'"),
      (found) => found.length === 2 && found.every((row) => row.state === 'delivered'),
    );
    expect(new Set(swapped.map((row) => row.msg_id)).size).toBe(2);
    expect(receivers.note.deliveries.filter((delivery) => delivery.payload?.type === 'note.swapped')).toHaveLength(2);
  });
});

describe('deliveries', () => {
  it('go out in order per key: an event waits until the one before it of the same row is delivered; other rows do not wait', async () => {
    // Every event's first attempt is refused: without the order, a later event's first retry could overtake an earlier one's.
    receivers.ordered.mode = 'fail-first';
    const tick = (id: number) =>
      send(`${main.url}/hooks/v1.0/tick`, {
        method: 'POST',
        headers: { authorization: WRITER, 'content-type': 'application/json' },
        body: JSON.stringify({ id }),
      });
    const [before] = await rows("event = 'ordered.ticked'").then((found) => [found.length]);
    for (let i = 0; i < 5; i++) expect((await tick(10)).status).toBe(200);
    expect((await tick(20)).status).toBe(200);
    await until(
      'all six',
      () => rows("event = 'ordered.ticked'"),
      (found) => found.length === before! + 6 && found.every((row) => row.state === 'delivered'),
    );
    const attempts = receivers.ordered.deliveries.map((delivery) => {
      const [pair] = delivery.payload!.data.pair as { id: number; n: number }[];
      return { id: pair!.id, n: pair!.n, answered: delivery.answered, at: delivery.receivedAt };
    });
    // Row 10's events, in the order they were sent: each refused once, then delivered, before the next is tried at all.
    const ten = attempts.filter((attempt) => attempt.id === 10).map((attempt) => `${attempt.n}:${attempt.answered}`);
    const firstN = Number(ten[0]!.split(':')[0]);
    expect(ten).toEqual([0, 1, 2, 3, 4].flatMap((i) => [`${firstN + i}:503`, `${firstN + i}:204`]));
    // Row 20's event was emitted last, and went out before row 10's last one: it waited for nobody.
    const twenty = attempts.find((attempt) => attempt.id === 20 && attempt.answered === 204)!;
    const lastOfTen = attempts.filter((attempt) => attempt.id === 10 && attempt.answered === 204).at(-1)!;
    expect(twenty.at).toBeLessThan(lastOfTen.at);
  });

  it('go on through a receiver that is down for a while: once it is back, retries deliver everything', async () => {
    await receivers.flaky.down();
    for (let i = 0; i < 5; i++) expect((await post('flaky', `flaky ${i}`)).status).toBe(201);
    // Refused connections, tried again with backoff (attempts count up), never given up within the window.
    await until(
      'retries',
      () => rows("event = 'flaky.added'"),
      (found) => found.length === 5 && found.every((row) => row.attempts >= 2),
    );
    expect(main.logs.some((line) => line.msg === 'event delivery failed; it will be tried again' && String(line.error).includes('ECONNREFUSED'))).toBe(true);
    await receivers.flaky.up();
    await until(
      'every event',
      () => rows("event = 'flaky.added'"),
      (found) => found.every((row) => row.state === 'delivered'),
    );
    expect(receivers.flaky.ids().size).toBe(5);
    expect(receivers.flaky.deliveries.every((delivery) => delivery.refused === undefined)).toBe(true);
    // In order per key: each note is its own row, so any order; the bodies all came.
    expect(new Set(receivers.flaky.deliveries.map((delivery) => (delivery.payload!.data.note as { body: string }[])[0]!.body))).toEqual(
      new Set(['flaky 0', 'flaky 1', 'flaky 2', 'flaky 3', 'flaky 4']),
    );
  });

  it('not answered with a 2xx within the retry window are kept as failed, listed, and sent again by xmlrest events retry', async () => {
    receivers.broken.mode = 'fail';
    expect((await post('broken', 'never taken')).status).toBe(201);
    const [failed] = await until(
      'failed',
      () => rows("event = 'broken.added'"),
      (found) => found[0]?.state === 'failed',
      20_000,
    );
    expect(failed!.last_status).toBe(503);
    figures.push(`a receiver answering 503: ${failed!.attempts} attempts in the 3 s window, then failed`);
    expect(failed!.attempts).toBeGreaterThanOrEqual(3);
    expect(
      main.logs.some(
        (line) => line.msg === 'event not delivered within the retry window: kept as failed (xmlrest events retry)' && line.eventId === failed!.msg_id,
      ),
    ).toBe(true);
    const listed = await xmlrest('events', 'list', '--failed');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(`${failed!.id}  failed  broken.added  ${failed!.msg_id}  ${receivers.broken.url}`);
    expect(listed.stdout).toContain(`  ${failed!.attempts}  the receiver answered 503  `);
    receivers.broken.mode = 'ok';
    const retried = await xmlrest('events', 'retry', String(failed!.id));
    expect(retried).toMatchObject({ code: 0, stdout: '1 event due again: every server delivers them at its next poll\n' });
    await until(
      'delivered',
      () => rows("event = 'broken.added'"),
      (found) => found[0]?.state === 'delivered',
    );
    expect(receivers.broken.deliveries.at(-1)!.id).toBe(failed!.msg_id);
    expect(await xmlrest('events', 'retry', String(failed!.id))).toMatchObject({ code: 2 });
  }, 40_000);

  it('stop at a 410 Gone: later events wait for the webhook, and a retry resumes it', async () => {
    receivers.gone.mode = 'gone';
    expect((await post('gone', 'gone 1')).status).toBe(201);
    const [first] = await until(
      'failed by 410',
      () => rows("event = 'gone.added'"),
      (found) => found[0]?.state === 'failed',
    );
    expect(first).toMatchObject({ last_status: 410, attempts: 1 });
    expect(main.logs.some((line) => String(line.msg).startsWith('webhook stopped: its receiver answered 410 Gone'))).toBe(true);
    expect((await post('gone', 'gone 2')).status).toBe(201);
    // Another webhook's event committed after it and delivered: the worker has looked at every webhook since.
    expect((await post('note', 'after gone 2')).status).toBe(201);
    await until(
      'a later event of another webhook delivered',
      () => receivers.note.deliveries,
      (list) => list.some((delivery) => delivery.body.includes('"after gone 2"')),
    );
    // Held: pending, and nothing sent to the stopped webhook.
    expect((await rows("event = 'gone.added'")).map((row) => row.state)).toEqual(['failed', 'pending']);
    expect(receivers.gone.deliveries).toHaveLength(1);
    const listed = await xmlrest('events', 'list', '--backend', 'hooks');
    expect(listed.stdout).toContain(`stopped: ${receivers.gone.url} (backend hooks) answered 410 Gone at`);
    expect(listed.stdout).toContain(`xmlrest events retry ${first!.id} resumes it`);
    expect(listed.stdout).toContain('pending (held: webhook stopped)  gone.added');
    receivers.gone.mode = 'ok';
    expect((await xmlrest('events', 'retry', '--all-failed', '--backend', 'hooks')).code).toBe(0);
    await until(
      'both delivered',
      () => rows("event = 'gone.added'"),
      (found) => found.every((row) => row.state === 'delivered'),
    );
    expect(receivers.gone.ids().size).toBe(2);
  });

  it('never follow a redirect: a 3xx is a failed attempt, its Location never asked for', async () => {
    receivers.moved.mode = 'redirect';
    expect((await post('moved', 'moved')).status).toBe(201);
    await until(
      'two attempts',
      () => receivers.moved.deliveries,
      (list) => list.length >= 2,
    );
    expect(receivers.moved.others).toEqual([]);
    const [row] = await rows("event = 'moved.added'");
    expect(row!.last_status).toBe(302);
    expect(row!.last_error).toContain('a redirect (never followed');
    receivers.moved.mode = 'ok';
    await until(
      'delivered',
      () => rows("event = 'moved.added'"),
      (found) => found[0]?.state === 'delivered',
    );
    expect(receivers.moved.others).toEqual([]);
  });

  it('cut an attempt that gets no answer within EVENTS_TIMEOUT_MS, and try again', async () => {
    receivers.slow.mode = 'hang';
    const started = Date.now();
    expect((await post('slow', 'slow')).status).toBe(201);
    await until(
      'a second attempt',
      () => receivers.slow.deliveries,
      (list) => list.length >= 2,
    );
    const [first, second] = receivers.slow.deliveries;
    // Cut after 1 s, then tried again after the backoff (at most 0.8 s here) and a poll.
    expect(second!.receivedAt - first!.receivedAt).toBeGreaterThanOrEqual(1000);
    expect(second!.receivedAt - started).toBeLessThan(5000);
    expect(second!.id).toBe(first!.id);
    expect(main.logs.some((line) => line.msg === 'event delivery failed; it will be tried again' && line.error === 'no answer within 1000 ms: cut off')).toBe(
      true,
    );
    receivers.slow.mode = 'ok';
    await until(
      'delivered',
      () => rows("event = 'slow.added'"),
      (found) => found[0]?.state === 'delivered',
    );
  });

  it('are counted in /metrics: outbox depth, deliveries by outcome, the oldest pending event', async () => {
    const text = await (await fetch(`${main.adminUrl}/metrics`)).text();
    expect(text).toMatch(/^xmlrest_events_outbox_depth \d+$/m);
    expect(text).toMatch(/^xmlrest_events_oldest_pending_seconds [0-9.e+-]+$/m);
    expect(Number(/^xmlrest_events_deliveries_total\{outcome="delivered"\} (\d+)$/m.exec(text)?.[1])).toBeGreaterThan(5);
    expect(Number(/^xmlrest_events_deliveries_total\{outcome="retry"\} (\d+)$/m.exec(text)?.[1])).toBeGreaterThan(0);
    expect(Number(/^xmlrest_events_deliveries_total\{outcome="gone"\} (\d+)$/m.exec(text)?.[1])).toBe(1);
    expect(Number(/^xmlrest_events_deliveries_total\{outcome="failed"\} (\d+)$/m.exec(text)?.[1])).toBe(1);
  });
});

describe('servers', () => {
  it('share the work, and one killed in the middle of deliveries loses nothing', async () => {
    // A receiver that takes 400 ms an answer: deliveries stay in flight, and each server holds some.
    receivers.shared.delayMs = 400;
    const more = await Promise.all([
      startBuiltServer({ root: ROOT, env: { ...ENV(), EVENTS_CONCURRENCY: '3' } }),
      startBuiltServer({ root: ROOT, env: { ...ENV(), EVENTS_CONCURRENCY: '3' } }),
    ]);
    others.push(...more);
    const [victim, survivor] = more as [BuiltServer, BuiltServer];
    for (let i = 0; i < 30; i++) expect((await post('shared', `shared ${i}`, {}, more[i % 2])).status).toBe(201);
    const delivered = (server: BuiltServer) => server.logs.filter((line) => line.msg === 'event delivered' && line.event === 'shared.added').length;
    await until(
      'the victim delivering',
      () => delivered(victim),
      (count) => count >= 1,
    );
    await until(
      'deliveries in flight',
      () => receivers.shared.inFlight,
      (count) => count >= 3,
    );
    await victim.stop('SIGKILL');
    const all = await until(
      'every event',
      () => rows("event = 'shared.added'"),
      (found) => found.length === 30 && found.every((row) => row.state === 'delivered'),
      20_000,
    );
    expect(receivers.shared.ids()).toEqual(new Set(all.map((row) => row.msg_id)));
    const counts = [main, victim, survivor].map(delivered);
    figures.push(
      `30 events on 3 servers, one killed: delivered by each ${counts.join(', ')}; ${receivers.shared.deliveries.length - 30} sent twice (at least once: the killed server's in flight)`,
    );
    // Each server took a share; the killed one's leased events went to the others after its lease.
    expect(counts.filter((count) => count > 0).length).toBeGreaterThanOrEqual(2);
    expect(receivers.shared.deliveries.every((delivery) => delivery.refused === undefined)).toBe(true);
  }, 45_000);

  it('restarted lose nothing, and prune delivered events after the retention', async () => {
    receivers.shared.delayMs = 0;
    await receivers.shared.down();
    // Servers whose retry window (a minute) outlasts a restart on a busy machine: the file's 3 s would count from
    // the first failed attempt, and a slow restart would see these events failed for good, not lost.
    const WINDOW = { EVENTS_RETRY_SECONDS: '60' };
    await Promise.all([main, ...others].map((server) => server.stop()));
    others.length = 0;
    main = await startBuiltServer({ root: ROOT, env: { ...ENV(), ...WINDOW } });
    others.push(await startBuiltServer({ root: ROOT, env: { ...ENV(), ...WINDOW } }));
    for (let i = 0; i < 5; i++) expect((await post('shared', `after ${i}`)).status).toBe(201);
    // Every delivering server dies with those events pending.
    await Promise.all([main, ...others].map((server) => server.stop('SIGKILL')));
    await receivers.shared.up();
    main = await startBuiltServer({ root: ROOT, env: { ...ENV(), ...WINDOW, EVENTS_RETENTION_SECONDS: '1' } });
    // Nothing lost: the receiver gets every one (the outbox rows may be pruned by then: retention 1 s).
    const bodies = () =>
      new Set(
        receivers.shared.deliveries.flatMap((delivery) => (delivery.payload?.data.note as { body: string }[] | undefined)?.map((note) => note.body) ?? []),
      );
    await until('delivered after the restart', bodies, (seen) => [0, 1, 2, 3, 4].every((i) => seen.has(`after ${i}`)));
    // Within the retention's second and the next idle poll, every delivered row goes; failed rows stay.
    await until(
      'pruned',
      () => rows("state = 'delivered'"),
      (found) => found.length === 0,
    );
    expect(main.logs.some((line) => line.msg === 'delivered events pruned')).toBe(true);
  }, 45_000);

  it('refuse to start when a webhook secret is missing or malformed, naming the variable, never printing the value', async () => {
    for (const value of [undefined, 'whsec_dG9vIHNob3J0', 'not-a-secret-at-all']) {
      const env: Record<string, string> = { ...ENV() };
      if (value === undefined) delete env.HOOKS_SECRET_B;
      else env.HOOKS_SECRET_B = value;
      const failed = await startBuiltServer({ root: ROOT, env }).then(
        () => undefined,
        (error: Error) => error.message,
      );
      expect(failed, value).toContain('exited with code 1');
      expect(failed, value).toContain(value === undefined ? 'HOOKS_SECRET_B is not set' : 'HOOKS_SECRET_B is not a Standard Webhooks secret');
      if (value !== undefined) expect(failed).not.toContain(value);
    }
  });
});
