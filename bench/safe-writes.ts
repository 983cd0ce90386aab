import type mysql from 'mysql2/promise';
import { BATCH_SCENARIO, BATCH_SIZE, ETAG_SCENARIO, NOT_MODIFIED_SCENARIO, type ServerName, VALIDATOR_SCENARIO } from './report.js';

/**
 * Issue 44's Speed in the bench (docs/internals/contract.md §15), on bench/resources/safe: a GET's ETag against the
 * same GET of a second server with ETAGS=off; a 304 against the 200 it replaces on a 10 KB answer, its tag a digest
 * of the answer's bytes or made by a cheaper `<Validator>`; and a batch of 50 inserts against 50 POSTs of the same
 * insert, one after another on one kept-alive connection.
 */

/** Rows of the 10 KB answer (bench/resources/safe/page.xml: `item_id <= 100` of bench_pages). */
const PAGE_ROWS = 100;

/**
 * bench_batch_items, the batch scenario's table, emptied of what a run stopped midway left; bench_lists, the
 * version a `<Validator>` reads (one row by its primary key). Idempotent: CI's smoke may meet a database seeded before.
 */
export async function seedSafeWrites(connection: mysql.Connection): Promise<void> {
  await connection.query(`create table if not exists bench_batch_items (
    item_id int unsigned not null auto_increment primary key,
    user_id int unsigned not null,
    title varchar(100) not null,
    price decimal(10, 2) not null,
    created_on timestamp not null default current_timestamp
  ) engine = InnoDB default charset = utf8mb4`);
  await connection.query('truncate table bench_batch_items');
  await connection.query(`create table if not exists bench_lists (
    list_id int unsigned not null primary key,
    version bigint unsigned not null
  ) engine = InnoDB`);
  await connection.query('insert ignore into bench_lists (list_id, version) values (1, 1)');
}

/** What the scenarios send and expect, filled in once the servers answer. */
const state = {
  /** bench-1's token from the safe backend. */
  token: '',
  /** The ETag of page.xml's answer (a digest of its bytes) and of page-validated.xml's (its Validator's). */
  pageTag: '',
  validatedTag: '',
  /** The ETag of the same page from bench/raw-http.ts (its own JSON.stringify, its own digest). */
  rawPageTag: '',
  /** The bench's own connection: the batch's rows checked and removed. */
  connection: undefined as mysql.Connection | undefined,
};

/** bench-1's token, and the tags each page answers now (read from the generated server's first 200). */
export async function prepareSafeWrites(
  connection: mysql.Connection,
  token: (path: string) => Promise<string>,
  etagOf: (path: string, server?: ServerName) => Promise<string>,
): Promise<void> {
  state.connection = connection;
  state.token = await token('/safe/');
  state.pageTag = await etagOf('/safe/v1.0/page');
  state.validatedTag = await etagOf('/safe/v1.0/page-validated');
  state.rawPageTag = await etagOf(RAW_PAGE, 'raw-tag-200');
}

/** The servers' names of these scenarios, each the generated server (ETAGS=off is a process of its own). */
export const SAFE_WRITE_SERVERS = ['tag-200', 'tag-304', 'validated-200', 'validated-304', 'posts-50', 'batch-50'] as const satisfies readonly ServerName[];
/** The same page from the ceiling with the contract's duties (bench/raw-http.ts), its 200 and its 304. */
export const RAW_TAG_SERVERS = ['raw-tag-200', 'raw-tag-304'] as const satisfies readonly ServerName[];
const RAW_PAGE = '/api/v1.0/duties/page';

/** After each load of the batch scenario: its rows gone, so that the table does not grow for the next slice. */
export async function emptyBatchTable(): Promise<void> {
  await state.connection!.query('truncate table bench_batch_items');
}

const bearer = () => ({ authorization: `Bearer ${state.token}` });
/** The headers of a GET of the page: its tag in If-None-Match, or none. */
const ifNoneMatch = (tag: string | undefined): Record<string, string> => (tag === undefined ? {} : { 'if-none-match': tag });
const DIGEST = /^"[A-Za-z0-9_-]{27}"$/;

/** The 10 KB page as a 200 with the tag it is known by, or as a 304 with no body repeating that tag. */
const page = (server: ServerName, status: number, body: any, headers: Headers) => {
  const tag = server.startsWith('validated') ? state.validatedTag : server.startsWith('raw') ? state.rawPageTag : state.pageTag;
  if (server.endsWith('304')) return status === 304 && body === '' && headers.get('etag') === tag;
  return status === 200 && Array.isArray(body.rows) && body.rows.length === PAGE_ROWS && JSON.stringify(body).length >= 9000 && headers.get('etag') === tag;
};

const OPERATION = { method: 'POST', path: '/safe/v1.0/batch-items', body: { title: 'bench', price: '9.99' } };
const BATCH_BODY = JSON.stringify({ operations: Array.from({ length: BATCH_SIZE }, () => OPERATION) });
/** One insert's answer, alone or in a batch's results. */
const inserted = (status: number, body: any) => status === 201 && body?.added?.affectedRows === 1 && Number(body.added.insertId) > 0;

/**
 * The batch's inserts (or the POST's one) as the answer says, then found in the table from another connection,
 * so committed, then removed: a batch answering 200 whose rows are not there fails.
 */
async function committed(status: number, body: any, server: ServerName): Promise<boolean> {
  const answers: { status: number; body: any }[] =
    server === 'batch-50' ? (status === 200 && Array.isArray(body.results) ? body.results : []) : [{ status, body }];
  if (answers.length !== (server === 'batch-50' ? BATCH_SIZE : 1) || !answers.every((answer) => inserted(answer.status, answer.body))) return false;
  const ids = answers.map((answer) => answer.body.added.insertId);
  const [rows] = await state.connection!.query('select count(*) as n from bench_batch_items where item_id in (?)', [ids]);
  await state.connection!.query('delete from bench_batch_items where item_id in (?)', [ids]);
  return new Set(ids).size === ids.length && Number((rows as { n: string }[])[0]!.n) === ids.length;
}

/** The scenarios, each server first the one the others are read against. */
export const safeWriteScenarios = [
  {
    // The same one-row Bearer GET, the same build: a tag (a digest of the answer) on every answer, or none.
    name: ETAG_SCENARIO,
    servers: ['etags-off', 'etags-on'] as ServerName[],
    cpu: true,
    request: () => ({ method: 'GET' as const, path: '/safe/v1.0/one-item', headers: bearer() }),
    check: (status: number, body: any, server: ServerName, headers: Headers) =>
      status === 200 && body.item?.length === 1 && (server === 'etags-off' ? headers.get('etag') === null : DIGEST.test(headers.get('etag') ?? '')),
  },
  {
    name: NOT_MODIFIED_SCENARIO,
    // And the same page from bench/raw-http.ts with the same duties: what a digest's 304 saves with nothing else.
    servers: ['tag-200', 'tag-304', 'raw-tag-200', 'raw-tag-304'] as ServerName[],
    cpu: true,
    status: (server: ServerName) => (server.endsWith('304') ? 304 : undefined),
    request: (server: ServerName) => ({
      method: 'GET' as const,
      path: server.startsWith('raw') ? RAW_PAGE : '/safe/v1.0/page',
      headers: ifNoneMatch({ 'tag-304': state.pageTag, 'raw-tag-304': state.rawPageTag }[server as string]),
    }),
    check: (status: number, body: any, server: ServerName, headers: Headers) => page(server, status, body, headers),
  },
  {
    // The same answer with the list's version as its validator: a 304 runs no statement but the validator's.
    // Beside the digest's 304 (scenario above) in the same slices. Its tag is not the digest of the answer's bytes.
    name: VALIDATOR_SCENARIO,
    servers: ['tag-304', 'validated-304', 'validated-200'] as ServerName[],
    cpu: true,
    status: (server: ServerName) => (server.endsWith('304') ? 304 : undefined),
    request: (server: ServerName) => ({
      method: 'GET' as const,
      path: server === 'tag-304' ? '/safe/v1.0/page' : '/safe/v1.0/page-validated',
      headers: ifNoneMatch({ 'tag-304': state.pageTag, 'validated-304': state.validatedTag }[server as string]),
    }),
    check: (status: number, body: any, server: ServerName, headers: Headers) =>
      DIGEST.test(state.validatedTag) && state.validatedTag !== state.pageTag && page(server, status, body, headers),
  },
  {
    // One kept-alive connection, one request after another: 50 POSTs of an insert against one batch of 50.
    name: BATCH_SCENARIO,
    servers: ['posts-50', 'batch-50'] as ServerName[],
    connections: () => 1,
    // One connection waits on each answer: its req/s are latency, which this busy machine moves most. CPU an insert
    // (the server's and MariaDB's) is the steadier figure.
    cpu: true,
    inserts: (server: ServerName) => (server === 'batch-50' ? BATCH_SIZE : 1),
    after: emptyBatchTable,
    request: (server: ServerName) =>
      server === 'batch-50'
        ? { method: 'POST' as const, path: '/safe/batch', headers: { 'content-type': 'application/json', ...bearer() }, body: BATCH_BODY }
        : {
            method: 'POST' as const,
            path: OPERATION.path,
            headers: { 'content-type': 'application/x-www-form-urlencoded', ...bearer() },
            body: 'title=bench&price=9.99',
          },
    check: committed,
  },
];
