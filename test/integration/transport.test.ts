import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { request } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../../generated/index.js';
import { basic, form, startServer, type TestServer } from '../support/server.js';

/** Transport: HTTPS served by the server itself, a trusted proxy, and credentials refused over plain HTTP. */
const DIR = 'test/.tmp/tls';
let tls: { cert: string; key: string };
let secure: TestServer;
let proxied: TestServer;

beforeAll(async () => {
  mkdirSync(DIR, { recursive: true });
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      `${DIR}/key.pem`,
      '-out',
      `${DIR}/cert.pem`,
    ],
    { stdio: 'ignore' },
  );
  tls = { cert: readFileSync(`${DIR}/cert.pem`, 'utf8'), key: readFileSync(`${DIR}/key.pem`, 'utf8') };
  secure = await startServer(backends, { tls, requireTlsForCredentials: true });
  proxied = await startServer(backends, { trustProxy: true, requireTlsForCredentials: true });
});
afterAll(async () => {
  await secure.close();
  await proxied.close();
});

function httpsGet(url: string, headers: Record<string, string>): Promise<{ status: number; body: string; hsts: string | undefined }> {
  return new Promise((resolve, reject) => {
    // Trust exactly this test's certificate, nothing looser.
    const call = request(url, { headers, ca: tls.cert }, (response) => {
      let body = '';
      response.on('data', (chunk) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body, hsts: response.headers['strict-transport-security'] }));
    });
    call.on('error', reject);
    call.end();
  });
}

describe('transport', () => {
  it('serves HTTPS from a certificate and key in the configuration', async () => {
    expect(secure.url).toMatch(/^https:/);
    const answer = await httpsGet(`${secure.url}/staff/v1.0/me`, { authorization: basic('carol', 'carol-pass') });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body).me[0].user_name).toBe('carol');
    // HTTPS only from now on, said over HTTPS (RFC 6797), on answers and refusals alike.
    expect(answer.hsts).toBe('max-age=31536000; includeSubDomains');
    expect((await httpsGet(`${secure.url}/nothing`, {})).hsts).toBe('max-age=31536000; includeSubDomains');
  });

  it('behind a trusted proxy, refuses credentials that reached it over plain HTTP from another host', async () => {
    const from = { 'x-forwarded-for': '203.0.113.7' };
    const plain = await fetch(`${proxied.url}/staff/v1.0/me`, {
      headers: { ...from, 'x-forwarded-proto': 'http', authorization: basic('carol', 'carol-pass') },
    });
    expect(plain.status).toBe(403);
    expect(await plain.json()).toEqual({ message: 'Credentials must be sent over HTTPS', status: 403 });
    const viaTls = await fetch(`${proxied.url}/staff/v1.0/me`, {
      headers: { ...from, 'x-forwarded-proto': 'https', authorization: basic('carol', 'carol-pass') },
    });
    expect(viaTls.status).toBe(200);
    // What reached the proxy over HTTPS is answered with HSTS; what reached it over plain HTTP never is.
    expect(viaTls.headers.get('strict-transport-security')).toBe('max-age=31536000; includeSubDomains');
    expect(plain.headers.get('strict-transport-security')).toBeNull();
    for (const [path, fields] of [
      ['/shop/', { auth: 'bearer', userid: 'alice', password: 'alice-pass' }],
      ['/shop/v1.0/token', { user: 'alice', pass: 'alice-pass' }],
    ] as const) {
      const token = await fetch(`${proxied.url}${path}`, {
        method: 'POST',
        ...form(fields),
        headers: { ...form(fields).headers, ...from, 'x-forwarded-proto': 'http' },
      });
      expect(token.status, path).toBe(403);
    }
    // A client that writes its own X-Forwarded-For gains nothing: the proxy's entry (the last) is the address.
    const spoofed = await fetch(`${proxied.url}/staff/v1.0/me`, {
      headers: { 'x-forwarded-for': '127.0.0.1, 203.0.113.7', 'x-forwarded-proto': 'http', authorization: basic('carol', 'carol-pass') },
    });
    expect(spoofed.status).toBe(403);
    // Without credentials nothing is refused, and loopback clients are trusted on plain HTTP.
    expect((await fetch(`${proxied.url}/shop/v1.0/products`, { headers: { ...from, 'x-forwarded-proto': 'http' } })).status).toBe(200);
    expect((await fetch(`${proxied.url}/staff/v1.0/me`, { headers: { authorization: basic('carol', 'carol-pass') } })).status).toBe(200);
  });

  it('ignores X-Forwarded-* when no proxy is trusted', async () => {
    const direct = await startServer(backends, { requireTlsForCredentials: true });
    try {
      // A loopback client claiming another address over plain HTTP stays a loopback client.
      const claimed = await fetch(`${direct.url}/staff/v1.0/me`, {
        headers: { 'x-forwarded-for': '203.0.113.7', 'x-forwarded-proto': 'http', authorization: basic('carol', 'carol-pass') },
      });
      expect(claimed.status).toBe(200);
    } finally {
      await direct.close();
    }
  });
});
