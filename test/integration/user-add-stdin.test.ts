import { execFile } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectTo } from '../../scripts/connection.js';
import { type BuiltServer, startBuiltServer } from '../support/built-server.js';
import { basicHeader, send } from '../support/http.js';

/**
 * `xmlrest user add NAME --password-stdin` (issue 42 point 5): the password read from a pipe, so that it never
 * sits in shell history or the process list, and the user signs in with it over HTTP against the built server.
 * Exactly one of `--password` and `--password-stdin`: both, or neither, is a wrong command line (exit 2).
 */
function userAdd(args: string[], stdin: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [path.resolve('scripts/xmlrest.mjs'), 'user', 'add', ...args],
      { env: { ...process.env, DATABASE_URL: inject('databaseUrl') } },
      (error, stdout, stderr) => resolve({ code: error ? Number((error as { code?: number }).code) : 0, stdout, stderr }),
    );
    child.stdin!.end(stdin);
  });
}

async function userExists(name: string): Promise<boolean> {
  const connection = await connectTo(inject('databaseUrl'));
  try {
    const [rows] = await connection.execute('select 1 from usr where user_name = ?', [name]);
    return (rows as unknown[]).length > 0;
  } finally {
    await connection.end();
  }
}

let server: BuiltServer;

beforeAll(async () => {
  server = await startBuiltServer();
}, 60_000);

afterAll(async () => {
  await server?.stop();
});

describe('xmlrest user add --password-stdin', () => {
  it('adds a user whose password came from stdin, its line end stripped, who signs in with it over HTTP', async () => {
    // A space and a non-ASCII letter: the line is the password as it was typed, byte for byte.
    const password = 'pipe d-pässword 42';
    const added = await userAdd(['stdin-sue', '--password-stdin', '--role', 'staff'], `${password}\n`);
    expect(added).toMatchObject({ code: 0, stderr: expect.not.stringContaining(password) });
    expect(added.stdout).toMatch(/^created user stdin-sue \(user_id \d+\) with staff\n$/);
    const me = await send(`${server.url}/staff/v1.0/me`, { headers: { authorization: basicHeader('stdin-sue', password) } });
    expect(me.status).toBe(200);
    expect(me.json()).toMatchObject({ me: [{ user_name: 'stdin-sue' }] });
    // The line end was the terminal's, not the password's.
    const withNewline = await send(`${server.url}/staff/v1.0/me`, { headers: { authorization: basicHeader('stdin-sue', `${password}\n`) } });
    expect(withNewline.status).toBe(401);
  });

  it('takes exactly one of --password and --password-stdin: both, or neither, exit 2 and create nobody', async () => {
    const both = await userAdd(['stdin-both', '--password', 'both-pass-1', '--password-stdin'], 'both-pass-2\n');
    const neither = await userAdd(['stdin-neither'], '');
    for (const wrong of [both, neither]) {
      expect(wrong.code).toBe(2);
      expect(wrong.stderr).toContain('give the password with exactly one of --password or --password-stdin');
    }
    expect(await userExists('stdin-both')).toBe(false);
    expect(await userExists('stdin-neither')).toBe(false);
  });

  it('refuses an empty stdin, two lines, and a password over the bound: exit 2, nobody created', async () => {
    const empty = await userAdd(['stdin-empty', '--password-stdin'], '\n');
    expect(empty).toMatchObject({ code: 2, stderr: expect.stringContaining('stdin was empty') });
    const twoLines = await userAdd(['stdin-two', '--password-stdin'], 'first-line\nsecond-line\n');
    expect(twoLines).toMatchObject({ code: 2, stderr: expect.stringContaining('reads one line') });
    const long = await userAdd(['stdin-long', '--password-stdin'], `${'x'.repeat(1025)}\n`);
    expect(long).toMatchObject({ code: 2, stderr: expect.stringContaining('at most 1024 bytes') });
    for (const name of ['stdin-empty', 'stdin-two', 'stdin-long']) expect(await userExists(name)).toBe(false);
  });
});
