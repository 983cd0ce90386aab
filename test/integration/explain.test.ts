import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { generateProject } from '../../generator/index.js';
import { hashPassword } from '../../runtime/auth/passwords/passwords.js';
import { connectTo } from '../../scripts/connection.js';
import { addUser, grantRole } from '../../scripts/schema.js';
import { copyProject } from '../support/project-copy.js';

/**
 * `xmlrest explain` never guesses (issue 30, docs/internals/contract.md §8 as amended): on a backend with its own AuthQuery
 * the roles come from that query, which needs the password: without it explain cannot tell, says why, and exits 3;
 * `--password-stdin` runs the query as the server does and answers from its rows, a wrong password said as such.
 * On the default tables, a grant that ends is shown with its end.
 */
const ROOT = path.resolve('test/.tmp/explain');

beforeAll(async () => {
  const connection = await connectTo(inject('databaseUrl'));
  try {
    await connection.query('drop table if exists xp_member');
    await connection.query(
      'create table xp_member (member_id int unsigned not null auto_increment primary key, login varchar(100) not null unique, secret varchar(255) not null, team varchar(64) not null)',
    );
    await connection.execute('insert into xp_member (login, secret, team) values (?, ?, ?), (?, ?, ?)', [
      'mia',
      await hashPassword('mia-pass-1'),
      'clerk',
      'noah',
      await hashPassword('noah-pass-1'),
      'visitor',
    ]);
    const pia = await addUser(connection, 'xp-pia', 'xp-pia-pass', ['customer']);
    await grantRole(connection, pia, 'admin', Math.floor(Date.now() / 1000) + 3600);
  } finally {
    await connection.end();
  }
  copyProject(ROOT);
  symlinkSync(path.resolve('node_modules'), path.join(ROOT, 'node_modules'));
  const files: Record<string, string> = {
    'resources/own/backend.xml': `<Backend xmlns="urn:xmlrest:resource:1.0" auth_scheme="Basic">
  <AuthQuery>select m.member_id as user_id, m.team as role_name, m.secret as pass_word from xp_member m where m.login = $user</AuthQuery>
</Backend>
`,
    'resources/own/desk.xml': `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0" auth="clerk">
  <Request method="GET"><Sql id="desk">select 'desk' as what</Sql></Request>
</Resource>
`,
    'resources/own/open.xml': `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0">
  <Request method="GET"><Sql id="open">select 'open' as what</Sql></Request>
</Resource>
`,
  };
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(ROOT, file)), { recursive: true });
    writeFileSync(path.join(ROOT, file), text);
  }
  const lines: string[] = [];
  expect(await generateProject({ root: ROOT, check: false, log: (line) => lines.push(line) }), lines.join('\n')).toBe(0);
}, 120_000);

afterAll(() => rmSync(ROOT, { recursive: true, force: true }));

function explain(args: string[], stdin?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [path.resolve('scripts/xmlrest.mjs'), 'explain', ...args],
      { cwd: ROOT, env: { ...process.env, DATABASE_URL: inject('databaseUrl') } },
      (error, stdout, stderr) => resolve({ code: error ? Number((error as { code?: number }).code) : 0, stdout, stderr }),
    );
    child.stdin!.end(stdin ?? '');
  });
}

describe('xmlrest explain on a backend with its own AuthQuery', () => {
  // Each command is a process that loads the project's modules: a few seconds each on a busy machine, so few of them.
  it('cannot tell without the password, says why, and exits 3; with --password-stdin answers from the AuthQuery, a wrong password said as such', async () => {
    const [unknown, json] = await Promise.all([explain(['mia', 'GET', '/own/v1.0/desk']), explain(['mia', 'GET', '/own/v1.0/desk', '--json'])]);
    expect(unknown.code).toBe(3);
    expect(unknown.stdout).toContain('cannot tell: whether mia may call GET /own/v1.0/desk on backend own');
    expect(unknown.stdout).toContain('mia holds: unknown');
    expect(unknown.stdout).toContain("its own AuthQuery, which gives a user's roles only for their password");
    expect(json.code).toBe(3);
    expect(JSON.parse(json.stdout)).toMatchObject({ allowed: null, backend: 'own', needs: ['clerk'], holds: null });

    const [allowed, denied] = await Promise.all([
      explain(['mia', 'GET', '/own/v1.0/desk', '--password-stdin'], 'mia-pass-1\n'),
      explain(['noah', 'GET', '/own/v1.0/desk', '--password-stdin', '--json'], 'noah-pass-1'),
    ]);
    expect(allowed.code).toBe(0);
    expect(allowed.stdout).toContain('allowed: mia may call GET /own/v1.0/desk on backend own');
    expect(allowed.stdout).toContain('mia holds: clerk');
    expect(denied.code).toBe(1);
    expect(JSON.parse(denied.stdout)).toMatchObject({ allowed: false, holds: ['visitor'], reason: 'noah holds none of clerk' });
    const [wrong, empty, terminal] = await Promise.all([
      explain(['mia', 'GET', '/own/v1.0/desk', '--password-stdin'], 'not-her-password\n'),
      explain(['mia', 'GET', '/own/v1.0/desk', '--password-stdin'], ''),
      // On a terminal (script(1) gives it one) it would wait for an end of input, echoing the password: refused at once.
      new Promise<{ code: number; stdout: string }>((resolve) => {
        const command = `'${process.execPath}' '${path.resolve('scripts/xmlrest.mjs')}' explain mia GET /own/v1.0/desk --password-stdin`;
        const child = execFile(
          'script',
          ['-qec', command, '/dev/null'],
          { cwd: ROOT, env: { ...process.env, DATABASE_URL: inject('databaseUrl') } },
          (error, stdout) => resolve({ code: error ? Number((error as { code?: number }).code) : 0, stdout }),
        );
        child.stdin!.end();
      }),
    ]);
    expect(wrong.code).toBe(1);
    expect(wrong.stdout).toContain('because the password is wrong for mia; the server would refuse these credentials (401)');
    expect(empty.code).toBe(2);
    expect(terminal.stdout).toContain('--password-stdin reads the password from a pipe, not a terminal');
    expect(terminal.code).toBe(2);
  }, 120_000);

  it('on the default tables shows a grant that ends with its end', async () => {
    const answer = await explain(['xp-pia', 'GET', '/shop/v1.0/report']);
    expect(answer.code).toBe(0);
    expect(answer.stdout).toMatch(/xp-pia holds: admin \(until \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\), customer/);
  });
});
