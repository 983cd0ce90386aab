import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectTo } from '../../scripts/connection.js';
import { type BuiltServer, startBuiltServer } from '../support/built-server.js';
import { basicHeader, formBody, send } from '../support/http.js';

/**
 * Writes from another site's page (issue 27, hole 10): a browser that remembers Basic credentials sends them with
 * a form posted from any site. Against the built server, as a browser would send it: a cross-site write with
 * credentials is refused before any step runs; same-site pages, CORS-allowed origins and clients that are no
 * browser are not.
 */
const ALLOWED = 'https://app.example.test';
const EVIL = 'https://evil.example';
let server: BuiltServer;
let connection: mysql.Connection;
const carol = basicHeader('carol', 'carol-pass');

beforeAll(async () => {
  server = await startBuiltServer({ env: { CORS_ORIGINS: ALLOWED } });
  connection = await connectTo(inject('databaseUrl'));
});
afterAll(async () => {
  await connection?.end();
  await server?.stop();
});

/** What a browser sends for a form posted from a page: the fields, and the headers no page can forge. */
function formPost(path: string, fields: Record<string, string>, browser: Record<string, string>, credentials: string | undefined = carol) {
  const body = formBody(fields);
  return send(`${server.url}${path}`, {
    method: 'POST',
    body: body.body,
    headers: { ...body.headers, ...browser, ...(credentials ? { authorization: credentials } : {}) },
  });
}

async function notesTitled(title: string): Promise<number> {
  const [rows] = await connection.query('select count(*) as n from notes where title = ?', [title]);
  return Number((rows as { n: number }[])[0]!.n);
}

const crossSite = { origin: EVIL, 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' };

describe('a write with credentials from another site', () => {
  it('is refused with 403 and writes nothing: a form posted with remembered Basic credentials', async () => {
    const title = `csrf-${Date.now()}`;
    const refused = await formPost('/staff/v1.0/notes', { title, body: 'forged' }, crossSite);
    expect(refused.status).toBe(403);
    expect(refused.json()).toEqual({ message: 'Cross-site request refused', status: 403 });
    expect(await notesTitled(title)).toBe(0);
    const requestId = String(refused.headers['x-request-id']);
    await expect
      .poll(() => server.logs.find((line) => line.msg === 'request' && line.requestId === requestId))
      .toMatchObject({ status: 403, reason: 'cross_site' });
  });

  it('is refused when only Origin tells (a browser without Sec-Fetch-*), a foreign or an opaque one', async () => {
    for (const origin of [EVIL, 'null', `${server.url.replace('127.0.0.1', 'localhost')}`]) {
      const title = `csrf-origin-${Date.now()}`;
      const refused = await formPost('/staff/v1.0/notes', { title, body: 'forged' }, { origin });
      expect(refused.status, origin).toBe(403);
      expect(await notesTitled(title)).toBe(0);
    }
    // Any method that writes, and any Authorization header.
    for (const method of ['PUT', 'PATCH', 'DELETE']) {
      const refused = await send(`${server.url}/staff/v1.0/notes`, { method, headers: { ...crossSite, authorization: carol } });
      expect(refused.status, method).toBe(403);
    }
    const bearer = await send(`${server.url}/shop/v1.0/orders`, { method: 'POST', headers: { ...crossSite, authorization: 'Bearer x.y.z' } });
    expect(bearer.json()).toEqual({ message: 'Cross-site request refused', status: 403 });
  });

  it('is refused on both token requests, before the password is checked, and on the console API', async () => {
    const shapeA = await formPost('/shop/', { auth: 'bearer', userid: 'alice', password: 'alice-pass' }, crossSite, undefined);
    expect([shapeA.status, shapeA.json()]).toEqual([403, { message: 'Cross-site request refused', status: 403 }]);
    const shapeB = await formPost('/shop/v1.0/token', { user: 'alice', pass: 'alice-pass' }, { origin: EVIL }, undefined);
    expect([shapeB.status, shapeB.json()]).toEqual([403, { message: 'Cross-site request refused', status: 403 }]);
    const role = `csrf_role_${Date.now()}`;
    const consoleWrite = await send(`${server.url}/_console/api/b/staff/roles`, {
      method: 'POST',
      body: JSON.stringify({ name: role }),
      headers: {
        ...crossSite,
        'sec-fetch-mode': 'cors',
        'content-type': 'application/json',
        'x-xmlrest-console': '1',
        authorization: basicHeader('bob', 'bob-pass'),
      },
    });
    expect(consoleWrite.status).toBe(403);
    expect(consoleWrite.json()).toEqual({ message: 'Cross-site request refused', status: 403 });
    const [roles] = await connection.query('select count(*) as n from xmlrest_role where role_name = ?', [role]);
    expect(Number((roles as { n: number }[])[0]!.n)).toBe(0);
  });
});

describe('what is not refused', () => {
  it('the same origin, as Sec-Fetch-Site or Origin says, and same-site or typed-in requests', async () => {
    const browsers: Record<string, string>[] = [
      { origin: server.url, 'sec-fetch-site': 'same-origin' },
      { 'sec-fetch-site': 'same-site', origin: 'https://admin.example.test' },
      { 'sec-fetch-site': 'none' },
      { origin: server.url },
    ];
    for (const browser of browsers) {
      const title = `same-${Date.now()}-${Math.random()}`;
      const written = await formPost('/staff/v1.0/notes', { title, body: 'mine' }, browser);
      expect(written.status, JSON.stringify(browser)).toBe(201);
      expect(await notesTitled(title)).toBe(1);
    }
    const token = await formPost('/shop/v1.0/token', { user: 'alice', pass: 'alice-pass' }, { origin: server.url, 'sec-fetch-site': 'same-origin' }, undefined);
    expect(token.status).toBe(201);
  });

  it('a client that is no browser (no Origin, no Sec-Fetch-*)', async () => {
    const title = `curl-${Date.now()}`;
    expect((await formPost('/staff/v1.0/notes', { title, body: 'curl' }, {})).status).toBe(201);
    expect(await notesTitled(title)).toBe(1);
    expect((await formPost('/shop/', { auth: 'bearer', userid: 'alice', password: 'alice-pass' }, {}, undefined)).status).toBe(200);
  });

  it('an origin CORS_ORIGINS allows, and reads from anywhere', async () => {
    const title = `cors-${Date.now()}`;
    const written = await formPost('/staff/v1.0/notes', { title, body: 'app' }, { origin: ALLOWED, 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'cors' });
    expect(written.status).toBe(201);
    expect(written.headers['access-control-allow-origin']).toBe(ALLOWED);
    expect(await notesTitled(title)).toBe(1);
    const token = await formPost('/shop/v1.0/token', { user: 'alice', pass: 'alice-pass' }, { origin: ALLOWED, 'sec-fetch-site': 'cross-site' }, undefined);
    expect(token.status).toBe(201);
    // A read changes nothing, and another site cannot see its answer.
    expect((await send(`${server.url}/staff/v1.0/me`, { headers: { ...crossSite, authorization: carol } })).status).toBe(200);
  });
});
