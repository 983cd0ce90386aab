import { execFile } from 'node:child_process';
import { type AddressInfo, createServer, connect as dial, type Server, type Socket } from 'node:net';
import { promisify } from 'node:util';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connectTo } from '../../scripts/connection.js';
import { ownDatabase } from '../support/own-database.js';

/**
 * `xmlrest check` (docs/internals/contract.md §13): the project's statements against a database of the test's own, first
 * as generated/column-types.json describes it (exit 0), then drifted by hand as a production schema drifts: a
 * column's type changed, a column renamed, a table renamed. Each difference is named at its step's
 * file:line:col with the column; --json says the same as data.
 */
let databaseUrl = '';

beforeAll(async () => {
  databaseUrl = await ownDatabase('check');
});

async function check(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return checkWith({ DATABASE_URL: databaseUrl }, ...args);
}

async function checkWith(env: Record<string, string>, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    // A bound against a hang (the test then fails on a null code), not a speed test.
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['scripts/xmlrest.mjs', 'check', ...args], {
      env: { ...process.env, ...env },
      timeout: 45_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe('xmlrest check', () => {
  it('finds every statement as generated/ was made for it, and exits 0', async () => {
    const { code, stdout } = await check();
    expect({ code, stdout }).toEqual({ code: 0, stdout: 'xmlrest check: all 38 statements of 19 resources match the database\n' });
    expect(JSON.parse((await check('--json')).stdout)).toEqual({ ok: true, statements: 38, problems: [] });
  });

  it('names a change below the coarse types: a narrowed decimal, another character set, another collation', async () => {
    const connection = await connectTo(databaseUrl);
    const [[userName]] = (await connection.query(
      "select column_type as type, collation_name as collation from information_schema.columns where table_schema = database() and table_name = 'usr' and column_name = 'user_name'",
    )) as unknown as [{ type: string; collation: string }[]];
    // 24.99 would be served as 25; a review with an emoji would fail; a login would become case-insensitive.
    await connection.query('alter table products modify price decimal(5,0) not null');
    await connection.query('alter table reviews modify body varchar(2000) character set latin1 not null');
    await connection.query('alter table usr modify user_name varchar(190) character set utf8mb4 collate utf8mb4_general_ci not null');
    try {
      const { code, stdout } = await check();
      expect(code).toBe(1);
      expect(stdout.split('\n')).toEqual([
        // The desk backend's token request reads the same user table as shop's.
        'resources/desk/token.xml:10:5: POST step "authQuery": parameter user (usr.user_name) was varchar(190) utf8mb4_nopad_bin, now varchar(190) utf8mb4_general_ci',
        // What a read answers: the prepared statement's length and decimals.
        'resources/shop/products.xml:5:5: GET step "products": column price was decimal length 12 decimals 2, now decimal length 6',
        'resources/shop/products@2.0.xml:6:5: GET step "products": column price was decimal length 12 decimals 2, now decimal length 6',
        // What a parameter is written to or compared with: the column's type and collation, as information_schema has them.
        'resources/shop/products@2.0.xml:6:5: GET step "products": parameter max_price (products.price) was decimal(10,2), now decimal(5,0)',
        'resources/shop/products@3.0.xml:6:5: GET step "products": column price was decimal length 12 decimals 2, now decimal length 6',
        'resources/shop/products@3.0.xml:6:5: GET step "products": parameter max_price (products.price) was decimal(10,2), now decimal(5,0)',
        'resources/shop/reviews.xml:17:5: POST step "review": parameter body (reviews.body) was varchar(2000) utf8mb4_general_ci, now varchar(2000) latin1_swedish_ci',
        'resources/shop/token.xml:9:5: POST step "authQuery": parameter user (usr.user_name) was varchar(190) utf8mb4_nopad_bin, now varchar(190) utf8mb4_general_ci',
        'xmlrest check: 8 differences between the database and generated/column-types.json (38 statements)',
        '',
      ]);
    } finally {
      await connection.query('alter table products modify price decimal(10,2) not null');
      await connection.query('alter table reviews modify body varchar(2000) character set utf8mb4 collate utf8mb4_general_ci not null');
      await connection.query(`alter table usr modify user_name ${userName!.type} character set utf8mb4 collate ${userName!.collation} not null`);
      await connection.end();
    }
    expect((await check()).code).toBe(0);
  });

  it('names a changed type, a missing column and a missing table at file:line:col with the column, and exits 1', async () => {
    const connection = await connectTo(databaseUrl);
    await connection.query('alter table orders modify quantity varchar(20) not null');
    // Its check constraint names stock: once the table was altered (the test above), MariaDB refuses the rename with it.
    await connection.query('alter table products drop constraint products_stock_not_negative');
    await connection.query('alter table products change stock in_stock int not null');
    await connection.query('rename table reviews to reviews_old');
    await connection.end();
    const { code, stdout } = await check();
    expect(code).toBe(1);
    expect(stdout.split('\n')).toEqual([
      // One order, read under its version and changed under it: its select reads quantity, and its update sets it.
      'resources/shop/order.xml:9:5: GET step "order": column quantity was int (number), now varchar (string)',
      'resources/shop/order.xml:20:5: PUT step "changed": parameter quantity (orders.quantity) was integer, now string(20)',
      'resources/shop/orders.xml:6:5: GET step "orders": column quantity was int (number), now varchar (string)',
      "resources/shop/orders.xml:15:5: POST step \"stock\": column stock is missing (Unknown column 'stock' in 'SET')",
      'resources/shop/orders.xml:18:5: POST step "order": parameter quantity (orders.quantity) was integer, now string(20)',
      'resources/shop/orders.xml:21:5: POST step "placed": column quantity was int (number), now varchar (string)',
      // Version 2.0 lists the same orders a page at a time: its select reads quantity too.
      'resources/shop/orders@2.0.xml:6:5: GET step "orders": column quantity was int (number), now varchar (string)',
      "resources/shop/products.xml:5:5: GET step \"products\": column stock is missing (Unknown column 'stock' in 'SELECT')",
      "resources/shop/products@2.0.xml:6:5: GET step \"products\": column stock is missing (Unknown column 'stock' in 'SELECT')",
      "resources/shop/products@3.0.xml:6:5: GET step \"products\": column stock is missing (Unknown column 'stock' in 'SELECT')",
      // The report sums quantity: over a varchar, MariaDB's sum is a double.
      'resources/shop/report.xml:6:5: GET step "sales": column units_sold was decimal (string), now double (number)',
      expect.stringMatching(/^resources\/shop\/reviews\.xml:8:5: GET step "reviews": table reviews is missing \(Table '[^']+\.reviews' doesn't exist\)$/),
      // The GET's Validator is checked as its steps are (docs/internals/contract.md §15).
      expect.stringMatching(/^resources\/shop\/reviews\.xml:7:5: GET step "<Validator>": table reviews is missing/),
      expect.stringMatching(/^resources\/shop\/reviews\.xml:17:5: POST step "review": table reviews is missing/),
      expect.stringMatching(/^resources\/shop\/reviews\.xml:23:5: DELETE step "removed": table reviews is missing/),
      'xmlrest check: 15 differences between the database and generated/column-types.json (38 statements)',
      '',
    ]);
    const json = JSON.parse((await check('--json')).stdout) as { ok: boolean; problems: Record<string, unknown>[] };
    expect(json.ok).toBe(false);
    expect(json.problems).toContainEqual(
      expect.objectContaining({
        file: 'resources/shop/orders.xml',
        line: 18,
        col: 5,
        method: 'POST',
        step: 'order',
        kind: 'param-type',
        column: 'orders.quantity',
        was: 'integer',
        now: 'string(20)',
      }),
    );
    expect(json.problems).toContainEqual(
      expect.objectContaining({
        file: 'resources/shop/orders.xml',
        line: 6,
        kind: 'column-type',
        column: 'quantity',
        was: 'int (number)',
        now: 'varchar (string)',
      }),
    );
    expect(json.problems).toContainEqual(expect.objectContaining({ file: 'resources/shop/products.xml', kind: 'missing-column', column: 'stock' }));
    expect(json.problems).toContainEqual(expect.objectContaining({ file: 'resources/shop/reviews.xml', line: 8, kind: 'missing-table', column: 'reviews' }));
  });

  it('exits 2 when it cannot check: no database answers', async () => {
    const { code, stderr } = await promisify(execFile)(process.execPath, ['scripts/xmlrest.mjs', 'check'], {
      env: { ...process.env, DATABASE_URL: 'mysql://nobody:pw@127.0.0.1:1/none' },
    }).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => error,
    );
    expect(code).toBe(2);
    expect(stderr).toMatch(/^xmlrest check: cannot reach the database \(ECONNREFUSED\)/);
  });
});

/**
 * A TCP proxy in front of the test's database that passes the handshake, then, at the client's `at`-th prepare
 * (a COM_STMT_PREPARE packet), either stops passing anything either way (a database that stopped answering, as
 * one SIGSTOPped) or closes both sockets (a connection lost).
 */
const proxies: Server[] = [];

async function failingProxy(at: number, how: 'hang' | 'drop'): Promise<string> {
  const target = new URL(databaseUrl);
  const sockets: Socket[] = [];
  let prepares = 0;
  const server = createServer((client) => {
    const database = dial(Number(target.port), target.hostname);
    sockets.push(client, database);
    let failed = false;
    database.on('data', (chunk) => failed || client.write(chunk));
    client.on('data', (chunk: Buffer) => {
      // A command packet: sequence number 0, then its command byte (0x16 COM_STMT_PREPARE); the handshake's are 1 and up.
      if (!failed && chunk[3] === 0 && chunk[4] === 0x16 && ++prepares >= at) {
        failed = true;
        if (how === 'drop') for (const socket of sockets) socket.destroy();
        return;
      }
      if (!failed) database.write(chunk);
    });
    for (const socket of [client, database]) socket.on('error', () => {});
    client.on('close', () => database.destroy());
  });
  server.on('close', () => {
    for (const socket of sockets) socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxies.push(server);
  const url = new URL(databaseUrl);
  url.host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return url.toString();
}

describe('xmlrest check when the database goes away', () => {
  afterEach(() => {
    for (const proxy of proxies.splice(0)) proxy.close();
  });

  it('exits 2 when the database stops answering, past QUERY_TIMEOUT_MS, and reports no statement as refused', async () => {
    const result = await checkWith({ DATABASE_URL: await failingProxy(1, 'hang'), QUERY_TIMEOUT_MS: '1000' });
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'xmlrest check: the database stopped answering (nothing within 1000 ms, QUERY_TIMEOUT_MS) after 0 statements: run xmlrest check again when it answers\n',
    });
  });

  it('exits 2 when the connection is lost on the way, and reports none of the statements after it as refused', async () => {
    // The 20th prepare: after a statement or more was checked (each statement's, its tables' columns, and a tenant
    // backend's facts: crm's statements come first).
    const result = await checkWith({ DATABASE_URL: await failingProxy(20, 'drop') });
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toMatch(
      /^xmlrest check: the connection to the database was lost \(PROTOCOL_CONNECTION_LOST\) after [1-9]\d* statements?: run xmlrest check again when it answers\n$/,
    );
    const json = await checkWith({ DATABASE_URL: await failingProxy(20, 'drop') }, '--json');
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toEqual({ ok: false, error: expect.stringMatching(/^the connection to the database was lost/) });
  });
});
