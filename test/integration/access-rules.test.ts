import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectTo } from '../../scripts/connection.js';
import { addUser } from '../../scripts/schema.js';
import { backends as rules } from '../golden/access-rules/expected/index.js';
import { type BuiltServer, startBuiltServer } from '../support/built-server.js';
import { basic, form, startServer, type TestServer } from '../support/server.js';

/**
 * Access rules (docs/internals/contract.md §8) over real HTTP and MariaDB, on a Bearer
 * backend (app) and a Basic one (desk) generated from the same resources
 * (test/golden/access-rules): several roles (any one admits), `*` (any
 * authenticated caller), a Request's own auth replacing the resource's, and
 * auth="" making one method public; with every refusal (403 without a header,
 * 401 for bad credentials, 403 for a role not held). Then the demo's own rules
 * on the built server, and `xmlrest explain`.
 */
const PASSWORD = 'rules-pass-0';
const USERS = { editor: ['editor'], admin: ['admin'], manager: ['manager'], both: ['editor', 'manager'], none: [] as string[] };
type Who = keyof typeof USERS;
const name = (who: Who) => `rules-${who}`;
const FORBIDDEN = { message: 'Forbidden access to resource', status: 403 };

let server: TestServer;
const ids: Partial<Record<Who, number>> = {};
const tokens: Partial<Record<Who, string>> = {};

beforeAll(async () => {
  const connection = await connectTo(inject('databaseUrl'));
  for (const [who, roles] of Object.entries(USERS)) ids[who as Who] = await addUser(connection, name(who as Who), PASSWORD, roles);
  await connection.end();
  server = await startServer(rules);
  // Shape A: one token holding every role the user holds.
  for (const who of Object.keys(USERS) as Who[]) {
    if (who === 'none') continue;
    const response = await fetch(`${server.url}/app/`, { method: 'POST', ...form({ auth: 'bearer', userid: name(who), password: PASSWORD }) });
    expect(response.status, who).toBe(200);
    tokens[who] = ((await response.json()) as { token: string }).token;
  }
});
afterAll(() => server?.close());

/** The Authorization header of `who` on the scheme of `backend`. */
function credentials(backend: 'app' | 'desk', who: Who): string {
  return backend === 'app' ? `Bearer ${tokens[who]}` : basic(name(who), PASSWORD);
}

async function call(method: string, path: string, authorization?: string, body?: Record<string, string>) {
  const headers: Record<string, string> = authorization ? { authorization } : {};
  const init: RequestInit = { method, headers };
  if (body) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    init.body = new URLSearchParams(body).toString();
  }
  const response = await fetch(server.url + path, init);
  return { status: response.status, body: (await response.json()) as Record<string, unknown>, challenge: response.headers.get('www-authenticate') };
}

describe.each(['app', 'desk'] as const)('the %s backend', (backend) => {
  const scheme = backend === 'app' ? 'Bearer' : 'Basic';
  const wrong = backend === 'app' ? `Bearer ${'x'.repeat(20)}.${'y'.repeat(20)}.${'z'.repeat(20)}` : basic(name('editor'), 'not-the-password');

  it(`admits a holder of any one of several roles (${scheme})`, async () => {
    for (const who of ['manager', 'admin', 'both'] as const) {
      const { status, body } = await call('GET', `/${backend}/v1.0/reports`, credentials(backend, who));
      expect(status, who).toBe(200);
      expect(body).toEqual({ totals: [{ total: 1, user_id: String(ids[who]) }] });
    }
  });

  it(`refuses an any-of resource: 403 without a header, 401 for bad credentials, 403 holding none of the roles (${scheme})`, async () => {
    expect(await call('GET', `/${backend}/v1.0/reports`)).toMatchObject({ status: 403, body: FORBIDDEN });
    const bad = await call('GET', `/${backend}/v1.0/reports`, wrong);
    expect(bad.status).toBe(401);
    expect(bad.challenge).toMatch(new RegExp(`^${scheme} realm="${backend}"`));
    expect(await call('GET', `/${backend}/v1.0/reports`, credentials(backend, 'editor'))).toMatchObject({ status: 403, body: FORBIDDEN });
  });

  it(`admits any authenticated caller to auth="*", whatever its roles, and binds $uid (${scheme})`, async () => {
    for (const who of ['editor', 'admin', 'manager'] as const) {
      const { status, body } = await call('GET', `/${backend}/v1.0/profile`, credentials(backend, who));
      expect(status, who).toBe(200);
      expect(body).toEqual({ me: [{ user_id: String(ids[who]) }] });
    }
    expect(await call('GET', `/${backend}/v1.0/profile`)).toMatchObject({ status: 403, body: FORBIDDEN });
    expect((await call('GET', `/${backend}/v1.0/profile`, wrong)).status).toBe(401);
  });

  it(`makes one method public with auth="", ignoring any Authorization header (${scheme})`, async () => {
    for (const authorization of [undefined, wrong, 'Nonsense', credentials(backend, 'admin')]) {
      const { status, body } = await call('GET', `/${backend}/v1.0/catalogue`, authorization);
      expect(status, authorization).toBe(200);
      expect(body).toEqual({ items: [{ item_id: 1 }] });
    }
  });

  it(`keeps the resource's auth on the methods that do not override it (${scheme})`, async () => {
    const post = (authorization?: string) => call('POST', `/${backend}/v1.0/catalogue`, authorization, { title: 'Tea' });
    expect(await post()).toMatchObject({ status: 403, body: FORBIDDEN });
    expect((await post(wrong)).status).toBe(401);
    expect(await post(credentials(backend, 'admin'))).toMatchObject({ status: 403, body: FORBIDDEN });
    expect(await post(credentials(backend, 'editor'))).toMatchObject({ status: 200, body: { added: [{ title: 'Tea', user_id: String(ids.editor) }] } });
  });

  it(`lets a Request's own auth replace the resource's for that method (${scheme})`, async () => {
    const remove = (authorization?: string) => call('DELETE', `/${backend}/v1.0/catalogue`, authorization, { item_id: '7' });
    expect(await remove()).toMatchObject({ status: 403, body: FORBIDDEN });
    expect((await remove(wrong)).status).toBe(401);
    // The resource's role does not admit here: this method names its own.
    expect(await remove(credentials(backend, 'editor'))).toMatchObject({ status: 403, body: FORBIDDEN });
    expect(await remove(credentials(backend, 'admin'))).toMatchObject({ status: 200, body: { removed: [{ item_id: '7', user_id: String(ids.admin) }] } });
  });
});

describe('a user who holds no role at all', () => {
  it('is refused by auth="*" as for a wrong password, since the default auth query returns no row for them', async () => {
    const { status } = await call('GET', '/desk/v1.0/profile', basic(name('none'), PASSWORD));
    expect(status).toBe(401);
    const token = await fetch(`${server.url}/app/`, { method: 'POST', ...form({ auth: 'bearer', userid: name('none'), password: PASSWORD }) });
    expect(token.status).toBe(401);
  });
});

describe("the demo's rules, on the built server", () => {
  let built: BuiltServer;
  const shop = async (user: string) => {
    const response = await fetch(`${built.url}/shop/v1.0/token`, { method: 'POST', ...form({ user, pass: `${user}-pass` }) });
    expect(response.status).toBe(201);
    return `Bearer ${((await response.json()) as { token: string }).token}`;
  };
  const send = async (method: string, path: string, authorization?: string, body?: Record<string, string>) => {
    const headers: Record<string, string> = authorization ? { authorization } : {};
    if (body) headers['content-type'] = 'application/x-www-form-urlencoded';
    const response = await fetch(built.url + path, { method, headers, body: body ? new URLSearchParams(body).toString() : undefined });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  beforeAll(async () => {
    built = await startBuiltServer();
  });
  afterAll(() => built?.stop());

  it('serves reviews to anyone, takes them from customers, and lets admins alone remove them (Bearer)', async () => {
    const alice = await shop('alice');
    const carol = await shop('carol');
    const bob = await shop('bob');
    expect((await send('GET', '/shop/v1.0/reviews?product_id=2')).status).toBe(200);
    expect((await send('POST', '/shop/v1.0/reviews', undefined, { product_id: '2', stars: '4', body: 'Sturdy' })).status).toBe(403);
    expect((await send('POST', '/shop/v1.0/reviews', carol, { product_id: '2', stars: '4', body: 'Sturdy' })).status).toBe(403);
    const posted = await send('POST', '/shop/v1.0/reviews', alice, { product_id: '2', stars: '4', body: 'Sturdy' });
    expect(posted.status).toBe(201);
    const id = String((posted.body.review as { insertId: number }).insertId);
    const listed = await send('GET', '/shop/v1.0/reviews?product_id=2');
    expect(listed.body.reviews).toContainEqual(expect.objectContaining({ review_id: Number(id), user_name: 'alice', stars: 4, body: 'Sturdy' }));
    expect((await send('DELETE', '/shop/v1.0/reviews', alice, { review_id: id })).status).toBe(403);
    expect(await send('DELETE', '/shop/v1.0/reviews', bob, { review_id: id })).toMatchObject({ status: 200, body: { removed: { affectedRows: 1 } } });
  });

  it('shows any signed-in user its own account, whatever its roles (Bearer, auth="*")', async () => {
    for (const user of ['alice', 'carol', 'dave']) {
      const { status, body } = await send('GET', '/shop/v1.0/account', await shop(user));
      expect(status, user).toBe(200);
      expect((body.account as { user_name: string }[])[0]?.user_name).toBe(user);
    }
    expect((await send('GET', '/shop/v1.0/account')).status).toBe(403);
  });

  it('opens the notice board to staff or admins, and posting to admins alone (Basic, any-of)', async () => {
    const carol = basic('carol', 'carol-pass');
    const bob = basic('bob', 'bob-pass');
    expect((await send('GET', '/staff/v1.0/board', carol)).status).toBe(200);
    expect((await send('GET', '/staff/v1.0/board', bob)).status).toBe(200);
    expect((await send('GET', '/staff/v1.0/board', basic('alice', 'alice-pass'))).status).toBe(403);
    expect((await send('GET', '/staff/v1.0/board', basic('carol', 'wrong'))).status).toBe(401);
    expect((await send('POST', '/staff/v1.0/board', carol, { title: 'Tea at four' })).status).toBe(403);
    expect((await send('POST', '/staff/v1.0/board', bob, { title: 'Tea at four' })).status).toBe(201);
  });
});

describe('xmlrest explain', () => {
  const run = promisify(execFile);
  const explain = async (...args: string[]) => {
    try {
      const { stdout } = await run(process.execPath, ['--import', 'tsx', 'scripts/cli/xmlrest.ts', 'explain', ...args], {
        env: { ...process.env, DATABASE_URL: inject('databaseUrl') },
      });
      return { code: 0, stdout };
    } catch (error) {
      const failed = error as { code: number; stdout: string; stderr: string };
      return { code: failed.code, stdout: failed.stdout + failed.stderr };
    }
  };

  it('says allowed, with the roles the route needs and the user holds, and exits 0', async () => {
    const { code, stdout } = await explain('bob', 'GET', '/shop/v1.0/report');
    expect(code).toBe(0);
    expect(stdout).toContain('allowed: bob may call GET /shop/v1.0/report on backend shop');
    expect(stdout).toContain('the route needs: the role admin');
    expect(stdout).toMatch(/bob holds: .*admin/);
  });

  it('says denied and why, and exits 1', async () => {
    const { code, stdout } = await explain('alice', 'DELETE', '/shop/v1.0/reviews');
    expect(code).toBe(1);
    expect(stdout).toContain('denied: alice may not call DELETE /shop/v1.0/reviews on backend shop');
    expect(stdout).toContain('because alice holds none of admin');
  });

  it('prints JSON with --json', async () => {
    const { code, stdout } = await explain('carol', 'GET', '/staff/v1.0/board', '--json');
    expect(code).toBe(0);
    const answer = JSON.parse(stdout) as { holds: string[] };
    expect(answer).toMatchObject({ allowed: true, backend: 'staff', needs: ['staff', 'admin'] });
    expect(answer.holds).toContain('staff');
    const publicRoute = JSON.parse((await explain('nobody-at-all', 'GET', '/shop/v1.0/reviews', '--json')).stdout);
    expect(publicRoute).toMatchObject({ allowed: true, needs: 'public' });
  });

  it('exits 2 on a usage error or a route nobody serves', async () => {
    expect((await explain('bob', 'GET')).code).toBe(2);
    const unknown = await explain('bob', 'GET', '/shop/v1.0/nothing');
    expect(unknown.code).toBe(2);
    expect(unknown.stdout).toContain('no backend serves GET /shop/v1.0/nothing');
  });
});
