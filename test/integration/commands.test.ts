import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import mysql from 'mysql2/promise';
import { describe, expect, inject, it } from 'vitest';
import { connectTo } from '../../scripts/connection.js';

/** The `xmlrest` bin and `npm start`'s entry, run as processes against the run's MariaDB. */
const exec = promisify(execFile);

async function xmlrest(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, ['scripts/xmlrest.mjs', ...args], { env: { ...process.env, DATABASE_URL: inject('databaseUrl') } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

async function rolesOf(name: string): Promise<string[]> {
  const connection = await connectTo(inject('databaseUrl'));
  const [rows] = await connection.execute(
    'select r.role_name from usr_role r inner join usr u on u.user_id = r.user_id where u.user_name = ? order by r.role_name',
    [name],
  );
  await connection.end();
  return (rows as { role_name: string }[]).map((row) => row.role_name);
}

describe('xmlrest commands', () => {
  it('db init creates the default tables and is safe to run again', async () => {
    expect(await xmlrest('db', 'init')).toMatchObject({ code: 0, stdout: 'created usr and usr_role\n' });
    expect(await xmlrest('db', 'init', '--demo')).toMatchObject({ code: 0, stdout: 'created usr and usr_role and the demo tables\n' });
    const connection = await connectTo(inject('databaseUrl'));
    const [tables] = await connection.query("show tables where Tables_in_xmlrest_test in ('usr', 'usr_role', 'xmlrest_role')");
    await connection.end();
    expect((tables as Record<string, string>[]).map((row) => Object.values(row)[0]).sort()).toEqual(['usr', 'usr_role', 'xmlrest_role']);
  });

  it('user add creates a user with roles; grant is idempotent; revoke removes', async () => {
    const added = await xmlrest('user', 'add', 'erin', '--password', 'e:p', '--role', 'reader', '--role', 'writer');
    expect(added.code).toBe(0);
    expect(added.stdout).toMatch(/^created user erin \(user_id \d+\) with reader, writer\n$/);
    expect(added.stdout + added.stderr).not.toContain('e:p');
    expect(await rolesOf('erin')).toEqual(['reader', 'writer']);
    expect((await xmlrest('role', 'grant', 'erin', 'reader')).code).toBe(0);
    expect(await rolesOf('erin')).toEqual(['reader', 'writer']);
    expect((await xmlrest('role', 'revoke', 'erin', 'writer')).stdout).toBe('erin no longer holds writer\n');
    expect(await rolesOf('erin')).toEqual(['reader']);
    const duplicate = await xmlrest('user', 'add', 'erin', '--password', 'x');
    expect(duplicate.code).toBe(1);
    expect(duplicate.stderr).toContain('Duplicate entry');
  });

  it('answers a wrong command line with usage and exit code 2', async () => {
    const wrong = await xmlrest('frobnicate');
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('usage:');
    expect((await xmlrest('role', 'grant', 'nobody-at-all', 'x')).stderr).toBe('xmlrest: no such user: nobody-at-all\n');
  });
});

describe('the server entry (npm start)', () => {
  it('refuses to start a Bearer backend with a secret shorter than 32 bytes, without printing it', async () => {
    const secret = 'short-secret-value';
    const started = await exec(process.execPath, ['--import', 'tsx', 'scripts/serve.ts'], {
      env: { ...process.env, DATABASE_URL: inject('databaseUrl'), JWT_SECRET: secret, PORT: '0' },
      timeout: 15_000,
    }).then(
      () => ({ code: 0, output: '' }),
      (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, output: error.stdout + error.stderr }),
    );
    expect(started.code).toBe(1);
    expect(started.output).toContain('JWT_SECRET must be at least 32 bytes long');
    expect(started.output).not.toContain(secret);
  });
});
