import { execFile } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { socketUser } from '../../scripts/mariadb.js';
import { type BuiltServer, startBuiltServer } from '../support/built-server.js';
import { formBody, type RawResponse, send } from '../support/http.js';
import { buildScratchProject } from '../support/scratch-project.js';
import { newSecret, WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * docs/operations/database-grants.md, run as written (issue 42 point 5): its SQL blocks, read from the page, make
 * the owner and the server's user on a fresh database; `xmlrest db init` runs as the owner; a built project is
 * served as the server's user, and a read, a write, a token, a session, an API key, a rate limit, an event and
 * an audit row all work with no refusal in the log. The server's user may not change the schema, and a grant
 * the page lists and the deployment lacks breaks what needs it.
 */
const PAGE = 'docs/operations/database-grants.md';
const ROOT = path.resolve('test/.tmp/database-grants');
const DATABASE = 'xmlrest_test_grants';
/** The page's users and passwords, as it writes them. */
const OWNER = { user: 'xmlrest_owner', password: 'owner-password-change-me' };
const APP = { user: 'xmlrest_app', password: 'app-password-change-me' };
const HOOK_SECRET = newSecret();
const receiver = new WebhookReceiver([HOOK_SECRET]);
const socket = inject('databaseSocket');
const shared = new URL(inject('databaseUrl'));
const exec = (file: string, args: string[], options: { env: NodeJS.ProcessEnv; cwd?: string; stdin?: string }) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const child = execFile(file, args, { env: options.env, cwd: options.cwd }, (error, stdout, stderr) =>
      resolve({ code: error ? Number((error as { code?: number }).code) : 0, stdout, stderr }),
    );
    child.stdin!.end(options.stdin ?? '');
  });

/** The page's ```sql blocks, in order, each as its statements, the database named as this test's. */
function pageBlocks(): string[][] {
  const text = readFileSync(PAGE, 'utf8');
  return [...text.matchAll(/```sql\n([\s\S]*?)```/g)].map((match) =>
    match[1]!
      .split('\n')
      .filter((line) => !line.trimStart().startsWith('--'))
      .join('\n')
      .replace(/\bapp\./g, `${DATABASE}.`)
      .split(/;\s*\n/)
      .map((statement) => statement.trim())
      .filter((statement) => statement !== ''),
  );
}

function urlOf(who: { user: string; password: string }): string {
  const url = new URL(shared);
  url.username = who.user;
  url.password = who.password;
  url.pathname = `/${DATABASE}`;
  return url.toString();
}

const xmlrest = (who: { user: string; password: string }, args: string[], stdin?: string) =>
  exec(process.execPath, [path.resolve('scripts/xmlrest.mjs'), ...args], {
    env: { ...process.env, DATABASE_URL: urlOf(who) },
    // In the project once it is built (key create reads its backends); before, in this checkout.
    cwd: existsSync(ROOT) ? ROOT : undefined,
    stdin,
  });

let admin: mysql.Connection;
let asApp: mysql.Connection;
let server: BuiltServer;

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const started = Date.now();
  for (;;) {
    const found = await probe();
    if (found !== undefined) return found;
    if (Date.now() - started > 20_000) throw new Error(`waited 20 s for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

// The page's users are the server's own (CREATE USER): a database of DATABASE_URL's may not let a test make them.
describe.skipIf(socket === null)('docs/operations/database-grants.md, run as written', () => {
  beforeAll(async () => {
    admin = await mysql.createConnection({ socketPath: socket!, user: socketUser(), multipleStatements: false });
    await admin.query(`drop database if exists ${DATABASE}`);
    await admin.query(`drop user if exists '${OWNER.user}'@'%', '${APP.user}'@'%'`);
    rmSync(ROOT, { recursive: true, force: true });
    await admin.query(`create database ${DATABASE} character set utf8mb4 collate utf8mb4_unicode_ci`);
    const [owner, server_, resources] = pageBlocks();
    expect(
      [owner, server_, resources].every((block) => block !== undefined && block.length > 0),
      `${PAGE} holds three sql blocks`,
    ).toBe(true);
    for (const statement of owner!) await admin.query(statement);
    // As the page says: db init as the owner, then the owner's migrations make the application's tables.
    const init = await xmlrest(OWNER, ['db', 'init']);
    expect(init, init.stderr).toMatchObject({ code: 0 });
    const migrations = await mysql.createConnection({ uri: urlOf(OWNER), multipleStatements: true });
    await migrations.query(`create table products (product_id int unsigned not null primary key, name varchar(80) not null);
      create table orders (order_id int unsigned not null auto_increment primary key, user_id int unsigned not null, product_id int unsigned not null);
      insert into products values (1, 'Teapot'), (2, 'Cup');`);
    await migrations.end();
    for (const statement of [...server_!, ...resources!]) await admin.query(statement);
    asApp = await mysql.createConnection({ uri: urlOf(APP) });

    await receiver.up();
    await buildScratchProject(ROOT, {
      databaseUrl: urlOf(APP),
      files: {
        'resources/gr/backend.xml': `<Backend xmlns="urn:xmlrest:resource:1.0" auth_scheme="Bearer" refresh_lifetime="3600" api_keys="on">
  <Webhook event="order.*" url="${receiver.url}" secret="GR_HOOK_SECRET"/>
</Backend>
`,
        'resources/gr/products.xml': `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0" auth="buyer" rate_limit="100/m">
  <Request method="GET"><Sql id="products">select product_id, name from products order by product_id</Sql></Request>
</Resource>
`,
        'resources/gr/orders.xml': `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0" auth="buyer" audit="true">
  <Request method="GET"><Sql id="orders">select order_id, product_id from orders where user_id = $uid order by order_id</Sql></Request>
  <Request method="POST" status="201">
    <Sql id="order">insert into orders (user_id, product_id) values ($uid, $product_id)</Sql>
    <Emit event="order.placed" step="order"/>
  </Request>
</Resource>
`,
      },
    });
    // The day-to-day commands run as the server's user too.
    const added = await xmlrest(APP, ['user', 'add', 'gr-buyer', '--password-stdin', '--role', 'buyer'], 'gr-buyer-pass\n');
    expect(added, added.stderr).toMatchObject({ code: 0 });
    server = await startBuiltServer({
      root: ROOT,
      env: { DATABASE_URL: urlOf(APP), GR_HOOK_SECRET: HOOK_SECRET, EVENTS_POLL_MS: '100', ADMIN_PORT: '0', LOGIN_COUNTERS: 'database' },
    });
  }, 240_000);

  afterAll(async () => {
    await server?.stop();
    await receiver.down();
    await asApp?.end();
    if (admin) {
      await admin.query(`drop database if exists ${DATABASE}`);
      await admin.query(`drop user if exists '${OWNER.user}'@'%', '${APP.user}'@'%'`);
      await admin.end();
    }
    rmSync(ROOT, { recursive: true, force: true });
  });

  const post = (route: string, fields: Record<string, string>, headers: Record<string, string> = {}) => {
    const form = formBody(fields);
    return send(`${server.url}${route}`, { method: 'POST', body: form.body, headers: { ...form.headers, ...headers } });
  };

  it('serves a read, a write with its event and audit row, a session, an API key and a rate limit as the server user, with no refusal in the log', async () => {
    expect((await send(`${server.adminUrl}/readyz`)).status).toBe(200);
    const signedIn = await post('/gr/', { auth: 'bearer', userid: 'gr-buyer', password: 'gr-buyer-pass' });
    expect(signedIn.status, signedIn.text).toBe(200);
    const { token, refresh_token } = signedIn.json() as { token: string; refresh_token: string };
    const bearer = { authorization: `Bearer ${token}` };

    const products = await send(`${server.url}/gr/v1.0/products`, { headers: bearer });
    expect(products.status, products.text).toBe(200);
    expect(products.headers['ratelimit-limit']).toBe('100');
    expect(products.json()).toEqual({
      products: [
        { product_id: 1, name: 'Teapot' },
        { product_id: 2, name: 'Cup' },
      ],
    });

    const placed = await post('/gr/v1.0/orders', { product_id: '2' }, bearer);
    expect(placed.status, placed.text).toBe(201);
    const requestId = String(placed.headers['x-request-id']);
    await until('the event delivered', async () => (receiver.ids().size > 0 ? true : undefined));
    const [outbox] = await asApp.query("select state from xmlrest_outbox where event = 'order.placed'");
    await until('the outbox row delivered', async () => {
      const [rows] = await asApp.query("select state from xmlrest_outbox where event = 'order.placed'");
      return (rows as { state: string }[])[0]?.state === 'delivered' ? true : undefined;
    });
    expect(outbox).toHaveLength(1);
    await until('the audit row', async () => {
      const [rows] = await asApp.query('select status from xmlrest_api_audit where request_id = ?', [requestId]);
      return (rows as { status: number }[])[0]?.status === 201 ? true : undefined;
    });

    const refreshed = await post('/gr/v1.0/token/refresh', { refresh_token });
    expect(refreshed.status, refreshed.text).toBe(201);
    const wrong = await post('/gr/', { auth: 'bearer', userid: 'gr-buyer', password: 'not-the-password' });
    expect(wrong.status).toBe(401);
    const [failures] = await asApp.query('select count(*) as n from xmlrest_login_failure');
    expect((failures as { n: number }[])[0]!.n).toBeGreaterThan(0);

    const key = await xmlrest(APP, ['key', 'create', '--backend', 'gr', '--user', 'gr-buyer', '--name', 'grants', '--role', 'buyer']);
    expect(key, key.stderr).toMatchObject({ code: 0 });
    const byKey = await send(`${server.url}/gr/v1.0/orders`, { headers: { 'x-api-key': key.stdout.trim() } });
    expect(byKey.status, byKey.text).toBe(200);
    expect(byKey.json()).toMatchObject({ orders: [{ product_id: 2 }] });

    const newBearer = { authorization: `Bearer ${(refreshed.json() as { token: string }).token}` };
    const loggedOut = await post('/gr/v1.0/logout', {}, newBearer);
    expect(loggedOut.status, loggedOut.text).toBe(200);
    expect((await send(`${server.url}/gr/v1.0/orders`, { headers: newBearer })).status).toBe(401);

    const refusals = server.logs.filter((line) => /denied|command denied|ACCESS_DENIED/i.test(JSON.stringify(line)));
    expect(refusals).toEqual([]);
    expect(server.logs.filter((line) => line.status === 500 || line.level === 50)).toEqual([]);
  });

  it('xmlrest check runs as the server user; xmlrest doctor as the server user says it cannot check the triggers, as the owner checks them', async () => {
    const checked = await xmlrest(APP, ['check']);
    expect(checked, checked.stderr).toMatchObject({ code: 0 });
    const doctorAsApp = await xmlrest(APP, ['doctor']);
    expect(doctorAsApp.stdout).toMatch(/^ok {3}default tables: usr, usr_role and xmlrest's own \d+ tables and 4 triggers$/m);
    expect(doctorAsApp.stdout).toMatch(/^WARN default tables: this database user may not read the triggers' bodies \(it lacks TRIGGER\)/m);
    expect(doctorAsApp.stdout).toMatch(/^ok {3}grants that end: the database user may delete from usr_role/m);
    expect(doctorAsApp.stdout).not.toMatch(/not reachable/);
    const doctorAsOwner = await xmlrest(OWNER, ['doctor']);
    expect(doctorAsOwner.stdout).toMatch(/^ok {3}default tables: usr, usr_role and xmlrest's own \d+ tables and 4 triggers$/m);
    expect(doctorAsOwner.stdout).not.toMatch(/^WARN default tables/m);
  });

  it('the server user may not change the schema, read another database, or rewrite the secret and the history', async () => {
    const refused = async (statement: string) => {
      const error = await asApp.query(statement).then(
        () => undefined,
        (caught: { code?: string }) => caught.code,
      );
      return error;
    };
    expect(await refused('create table gr_new (id int)')).toBe('ER_TABLEACCESS_DENIED_ERROR');
    expect(await refused('drop table orders')).toBe('ER_TABLEACCESS_DENIED_ERROR');
    expect(await refused('alter table usr add column gr_extra int')).toBe('ER_TABLEACCESS_DENIED_ERROR');
    expect(await refused('create index gr_name on products (name)')).toBe('ER_TABLEACCESS_DENIED_ERROR');
    expect(await refused('create trigger gr_t before insert on orders for each row set new.product_id = 1')).toBe('ER_TABLEACCESS_DENIED_ERROR');
    expect(await refused('create procedure gr_p() select 1')).toBe('ER_DBACCESS_DENIED_ERROR');
    expect(await refused('drop procedure xmlrest_outbox_commit')).toBe('ER_PROCACCESS_DENIED_ERROR');
    expect(await refused('select user from mysql.user')).toBe('ER_TABLEACCESS_DENIED_ERROR');
    expect(await refused("update xmlrest_secret set value = 'x'")).toBe('ER_TABLEACCESS_DENIED_ERROR');
    expect(await refused('delete from xmlrest_console_audit')).toBe('ER_TABLEACCESS_DENIED_ERROR');
    expect(await refused('delete from products')).toBe('ER_TABLEACCESS_DENIED_ERROR');
  });

  it('a grant the page lists and the deployment lacks breaks what needs it: without EXECUTE on the procedure no event, and no order, is written', async () => {
    await admin.query(`revoke execute on procedure ${DATABASE}.xmlrest_outbox_commit from '${APP.user}'@'%'`);
    const signedIn = await post('/gr/', { auth: 'bearer', userid: 'gr-buyer', password: 'gr-buyer-pass' });
    const bearer = { authorization: `Bearer ${(signedIn.json() as { token: string }).token}` };
    const [before] = await asApp.query('select count(*) as n from orders');
    const placed: RawResponse = await post('/gr/v1.0/orders', { product_id: '1' }, bearer);
    expect(placed.status).toBe(500);
    const [after] = await asApp.query('select count(*) as n from orders');
    expect((after as { n: number }[])[0]!.n).toBe((before as { n: number }[])[0]!.n);
    expect(JSON.stringify(server.logs)).toMatch(/execute command denied/i);
  });
});
