import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTo } from '../../scripts/connection.js';
import { type BuiltServer, startBuiltServer } from '../support/built-server.js';
import { formBody, send } from '../support/http.js';
import { ownDatabase } from '../support/own-database.js';

/**
 * Issue 43 over HTTP against the built server: the demo's tenant backend (resources/crm), whose statements
 * `generate` proved keep to the caller's organisation. Two organisations' users call every method of every
 * resource, and neither ever sees, changes or learns the count of the other's rows: Acme (organisation 1) is erin
 * and frank, Globex (2) is grace (scripts/schema.ts). Each test writes rows of its own, so that it reads the same
 * whichever runs first.
 */
let url = '';
let db: mysql.Connection;
let server: BuiltServer;

const basic = (user: string) => `Basic ${Buffer.from(`${user}:${user}-pass`).toString('base64')}`;
const ERIN = basic('erin');
const FRANK = basic('frank');
const GRACE = basic('grace');

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

async function call(method: string, path: string, authorization: string, fields?: Record<string, string>): Promise<Answer> {
  const body = fields === undefined ? undefined : formBody(fields);
  const answer = await send(`${server.url}${path}`, {
    method,
    headers: { authorization, ...(body?.headers ?? {}) },
    ...(body ? { body: body.body } : {}),
  });
  return { status: answer.status, body: answer.text === '' ? {} : (answer.json() as Record<string, unknown>) };
}

type Contact = { contact_id: number; name: string; email: string };

/** Every contact a caller's list gives, page after page, `limit` at a time. */
async function allContacts(authorization: string, query = '', limit = 2): Promise<Contact[]> {
  const rows: Contact[] = [];
  let after = '';
  for (let page = 0; page < 100; page++) {
    const answer = await call('GET', `/crm/v1.0/contacts?limit=${limit}${query}${after}`, authorization);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    rows.push(...(answer.body.contacts as Contact[]));
    if (answer.body.next === null) return rows;
    after = `&after=${answer.body.next as string}`;
  }
  throw new Error('more than 100 pages');
}

async function orgOfContact(id: number): Promise<number | undefined> {
  const [rows] = await db.query('select org_id from crm_contact where contact_id = ?', [id]);
  return (rows as { org_id: number }[])[0]?.org_id;
}

/** A contact of `authorization`'s organisation, made through the API. */
async function added(authorization: string, name: string): Promise<number> {
  const email = `${name.toLowerCase().replace(/\W/g, '.')}.${Date.now()}.${Math.random().toString(36).slice(2)}@example.com`;
  const answer = await call('POST', '/crm/v1.0/contacts', authorization, { name, email });
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return (answer.body.added as Contact[])[0]!.contact_id;
}

beforeAll(async () => {
  url = await ownDatabase('tenants');
  db = await connectTo(url);
  server = await startBuiltServer({ env: { DATABASE_URL: url } });
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await db?.end();
});

describe('the demo tenant backend (resources/crm), two organisations calling every method', () => {
  it("GET org: each caller's own organisation, never the other", async () => {
    expect((await call('GET', '/crm/v1.0/org', ERIN)).body).toEqual({ org: [{ org_id: 1, name: 'Acme' }] });
    expect((await call('GET', '/crm/v1.0/org', GRACE)).body).toEqual({ org: [{ org_id: 2, name: 'Globex' }] });
  });

  it('GET contacts: pages, filters and sorts of one organisation only, and counts that are its own', async () => {
    const mine = await added(ERIN, 'Zed Acme');
    const theirs = await added(GRACE, 'Zed Globex');
    const acme = await allContacts(ERIN);
    const globex = await allContacts(GRACE);
    const [counts] = await db.query('select org_id, count(*) as n from crm_contact group by org_id order by org_id');
    const [one, two] = counts as { org_id: number; n: number }[];
    expect(acme).toHaveLength(Number(one!.n));
    expect(globex).toHaveLength(Number(two!.n));
    for (const contact of acme) expect(await orgOfContact(contact.contact_id)).toBe(1);
    for (const contact of globex) expect(await orgOfContact(contact.contact_id)).toBe(2);
    expect(acme.map((contact) => contact.contact_id)).toContain(mine);
    expect(globex.map((contact) => contact.contact_id)).toContain(theirs);
    // A filter matching both organisations' rows, sorted, a page at a time: still only the caller's.
    const zedsOfAcme = await allContacts(ERIN, '&q=Zed&sort=-email', 1);
    expect(zedsOfAcme.map((contact) => contact.contact_id)).toContain(mine);
    expect(zedsOfAcme.map((contact) => contact.contact_id)).not.toContain(theirs);
    expect(zedsOfAcme.map((contact) => contact.email)).toEqual(
      zedsOfAcme
        .map((contact) => contact.email)
        .sort()
        .reverse(),
    );
    // frank is of Acme too: he sees what erin sees.
    expect((await allContacts(FRANK)).map((contact) => contact.contact_id)).toEqual(acme.map((contact) => contact.contact_id));
  });

  it("a cursor one organisation's user was given is refused to the other's (400), and served to its own", async () => {
    await added(ERIN, 'Cursor One');
    await added(ERIN, 'Cursor Two');
    const first = await call('GET', '/crm/v1.0/contacts?limit=1', ERIN);
    const next = first.body.next as string;
    expect(next).toEqual(expect.any(String));
    const replayed = await call('GET', `/crm/v1.0/contacts?limit=1&after=${next}`, GRACE);
    expect(replayed.status).toBe(400);
    expect(JSON.stringify(replayed.body)).not.toMatch(/Acme|Cursor/);
    expect((await call('GET', `/crm/v1.0/contacts?limit=1&after=${next}`, ERIN)).status).toBe(200);
  });

  it("POST contacts: a contact is made in the caller's organisation, whatever org_id the body sends", async () => {
    const email = `sent.org.${Date.now()}@example.com`;
    const answer = await call('POST', '/crm/v1.0/contacts', GRACE, { name: 'Sent Org', email, org_id: '1' });
    expect(answer.status).toBe(201);
    const id = (answer.body.added as Contact[])[0]!.contact_id;
    expect(await orgOfContact(id)).toBe(2);
    expect((await allContacts(ERIN)).map((contact) => contact.contact_id)).not.toContain(id);
  });

  it("PUT contacts: another organisation's contact is not renamed, and the answer tells nothing of it", async () => {
    const theirs = await added(GRACE, 'Keep This Name');
    const missing = 4_000_000_000;
    const across = await call('PUT', '/crm/v1.0/contacts', ERIN, { contact_id: String(theirs), name: 'Taken' });
    const nowhere = await call('PUT', '/crm/v1.0/contacts', ERIN, { contact_id: String(missing), name: 'Taken' });
    expect(across.status).toBe(200);
    // The same answer as for an id that does not exist: the caller learns not even that the row is there.
    expect(across.body).toEqual(nowhere.body);
    expect(across.body.renamed).toMatchObject({ affectedRows: 0 });
    const [rows] = await db.query('select name, org_id from crm_contact where contact_id = ?', [theirs]);
    expect(rows).toEqual([{ name: 'Keep This Name', org_id: 2 }]);
    const own = await call('PUT', '/crm/v1.0/contacts', GRACE, { contact_id: String(theirs), name: 'Renamed' });
    expect(own.body.renamed).toMatchObject({ affectedRows: 1 });
  });

  it("DELETE contacts: another organisation's contact and its notes stay", async () => {
    const theirs = await added(GRACE, 'Not Yours');
    expect((await call('POST', '/crm/v1.0/notes', GRACE, { contact_id: String(theirs), body: 'kept' })).status).toBe(201);
    const across = await call('DELETE', `/crm/v1.0/contacts?contact_id=${theirs}`, ERIN);
    expect(across.status).toBe(200);
    expect(across.body.deleted).toMatchObject({ affectedRows: 0 });
    expect(await orgOfContact(theirs)).toBe(2);
    const [notes] = await db.query('select body from crm_note where contact_id = ?', [theirs]);
    expect(notes).toEqual([{ body: 'kept' }]);
    const own = await call('DELETE', `/crm/v1.0/contacts?contact_id=${theirs}`, GRACE);
    expect(own.body.deleted).toMatchObject({ affectedRows: 1 });
    expect(await orgOfContact(theirs)).toBeUndefined();
  });

  it("GET and POST notes: another organisation's contact has no notes to the caller, and takes none from it", async () => {
    const theirs = await added(GRACE, 'Noted');
    expect((await call('POST', '/crm/v1.0/notes', GRACE, { contact_id: String(theirs), body: 'Globex only' })).status).toBe(201);
    expect((await call('GET', `/crm/v1.0/notes?contact_id=${theirs}`, ERIN)).body).toEqual({ notes: [] });
    const planted = await call('POST', '/crm/v1.0/notes', ERIN, { contact_id: String(theirs), body: 'planted by Acme' });
    expect(planted.status).toBe(201);
    expect(planted.body.note).toMatchObject({ affectedRows: 0 });
    const seen = await call('GET', `/crm/v1.0/notes?contact_id=${theirs}`, GRACE);
    expect((seen.body.notes as { body: string }[]).map((note) => note.body)).toEqual(['Globex only']);
    const [notes] = await db.query('select org_id from crm_note where contact_id = ?', [theirs]);
    expect(notes).toEqual([{ org_id: 2 }]);
  });

  it('GET report: the one statement that crosses organisations (tenant="all") serves its operators only', async () => {
    const report = await call('GET', '/crm/v1.0/report', ERIN);
    expect(report.status).toBe(200);
    expect((report.body.orgs as { org_id: number }[]).map((org) => org.org_id)).toEqual([1, 2]);
    expect((await call('GET', '/crm/v1.0/report', GRACE)).status).toBe(403);
  });

  it('a user without an organisation is refused every route of the backend (403 no_tenant), never served as every organisation', async () => {
    // heidi holds crm-user, and no organisation (scripts/schema.ts).
    const heidi = basic('heidi');
    for (const [method, path] of [
      ['GET', '/crm/v1.0/org'],
      ['GET', '/crm/v1.0/contacts'],
      ['GET', '/crm/v1.0/notes?contact_id=1'],
    ] as const) {
      const answer = await call(method, path, heidi);
      expect(answer.status, `${method} ${path}`).toBe(403);
    }
    const refused = await call('POST', '/crm/v1.0/contacts', heidi, { name: 'No Org', email: 'no.org@example.com' });
    expect(refused.status).toBe(403);
    const [rows] = await db.query("select count(*) as n from crm_contact where email = 'no.org@example.com'");
    expect(rows).toEqual([{ n: 0 }]);
    expect(server.logs.some((line) => line.reason === 'no_tenant')).toBe(true);
  });

  it("?for=me lists crm's operations to a caller it serves, and none to one it would refuse for want of an organisation", async () => {
    const crmPaths = async (authorization: string) => {
      const answer = await send(`${server.url}/openapi.json?for=me`, { headers: { authorization } });
      expect(answer.status).toBe(200);
      return Object.keys((answer.json() as { paths: Record<string, unknown> }).paths).filter((path) => path.startsWith('/crm/'));
    };
    expect((await crmPaths(ERIN)).sort()).toEqual(['/crm/v1.0/contacts', '/crm/v1.0/notes', '/crm/v1.0/org', '/crm/v1.0/report']);
    expect((await crmPaths(GRACE)).sort()).toEqual(['/crm/v1.0/contacts', '/crm/v1.0/notes', '/crm/v1.0/org']);
    // heidi holds crm-user, so her roles alone would list three; she has no organisation, and each would answer 403.
    expect(await crmPaths(basic('heidi'))).toEqual([]);
    // carol's password opens staff's routes (the same user tables): they stay hers.
    const staff = await send(`${server.url}/openapi.json?for=me`, { headers: { authorization: basic('carol') } });
    expect(Object.keys((staff.json() as { paths: Record<string, unknown> }).paths).some((path) => path.startsWith('/staff/'))).toBe(true);
  });

  it("xmlrest explain answers per tenant: the route proven or crossing, the user's tenant, and no tenant a refusal", async () => {
    const explain = (...args: string[]) =>
      promisify(execFile)(process.execPath, [path.resolve('scripts/xmlrest.mjs'), 'explain', ...args], { env: { ...process.env, DATABASE_URL: url } }).then(
        (done) => ({ code: 0, stdout: done.stdout }),
        (error: { code?: number; stdout?: string }) => ({ code: Number(error.code), stdout: error.stdout ?? '' }),
      );
    const [erin, heidi, report] = await Promise.all([
      explain('erin', 'GET', '/crm/v1.0/contacts', '--json'),
      explain('heidi', 'GET', '/crm/v1.0/contacts'),
      explain('erin', 'GET', '/crm/v1.0/report'),
    ]);
    expect(erin.code).toBe(0);
    expect(JSON.parse(erin.stdout)).toMatchObject({ allowed: true, userTenant: '1', tenant: "proven (every statement keeps to the caller's org_id)" });
    expect(heidi.code).toBe(1);
    expect(heidi.stdout).toContain('denied: heidi may not call GET /crm/v1.0/contacts on backend crm');
    expect(heidi.stdout).toContain('heidi has no tenant on backend crm');
    expect(report.stdout).toContain('tenant: all (step orgs may read and write every tenant\'s rows: tenant="all")');
  }, 120_000);
});
