import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { generateProject } from '../../generator/index.js';
import type { BackendModule } from '../../runtime/index.js';
import { connectTo } from '../../scripts/connection.js';
import { addUser } from '../../scripts/schema.js';
import { docsSection } from '../support/docs-section.js';
import { decodeJwt, startServer, type TestServer } from '../support/server.js';

/**
 * What docs/concepts.md tells a resource author to write: a backend folder with its
 * backend.xml, a token.xml per docs/internals/seed.md §4.2 and a protected resource using $uid.
 * It must generate, type-check and serve without touching any other file.
 */
const DIR = 'test/.tmp/readme';
let server: TestServer;

/**
 * The library backend's files as docs/concepts.md shows them, each block named by its first line's comment
 * (`<!-- resources/library/token.xml: ... -->`), written as they stand.
 */
const files: Record<string, string> = Object.fromEntries(
  [...docsSection('docs/concepts.md', '## Resources and backends').matchAll(/```xml\n(<!-- (resources\/library\/[\w@.]+\.xml)[\s\S]*?)```/g)].map((match) => [
    match[2]!,
    match[1]!,
  ]),
);

beforeAll(async () => {
  rmSync(DIR, { recursive: true, force: true });
  const names = Object.keys(files).sort();
  if (names.join() !== 'resources/library/backend.xml,resources/library/loans.xml,resources/library/token.xml')
    throw new Error(`docs/concepts.md shows ${names.join(', ')}`);
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(`${DIR}/${file.replace(/\/[^/]+$/, '')}`, { recursive: true });
    writeFileSync(`${DIR}/${file}`, text);
  }
  const connection = await connectTo(inject('databaseUrl'));
  const reader = await addUser(connection, 'reader-rita', 'rita-pass', ['reader']);
  await connection.query(
    'create table if not exists loans (loan_id int primary key auto_increment, user_id int unsigned not null, title varchar(100) not null)',
  );
  await connection.query('insert into loans (user_id, title) values (?, ?), (?, ?)', [reader, 'Dune', 1, 'Not Rita’s']);
  await connection.end();
});
afterAll(async () => {
  await server?.close();
  rmSync(DIR, { recursive: true, force: true });
});

describe('a backend written by following docs/concepts.md', () => {
  it('generates', async () => {
    const log: string[] = [];
    const code = await generateProject({
      root: '.',
      check: false,
      databaseUrl: inject('databaseUrl'),
      resourcesDir: `${DIR}/resources`,
      outDir: `${DIR}/generated`,
      log: (line) => log.push(line),
    });
    // Its modules, backend index, project index, column-types.json, openapi.json and openapi.d.ts, and access.lock.
    expect(log.at(-1)).toBe('xmlrest: 8 files from 3 resource files, 8 changed');
    expect(code).toBe(0);
  });

  it('type-checks (strict)', () => {
    writeFileSync(`${DIR}/tsconfig.json`, JSON.stringify({ extends: '../../../tsconfig.json', include: ['generated'], exclude: [] }));
    // Throws, with tsc's output, when the generated code does not compile.
    const output = execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', `${DIR}/tsconfig.json`, '--listFilesOnly'], { encoding: 'utf8' });
    expect(output).toContain(`${DIR}/generated/library/loans.ts`);
    execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', `${DIR}/tsconfig.json`], { encoding: 'utf8' });
  });

  it('serves: a token from token.xml opens the protected resource, scoped to $uid', async () => {
    const module = pathToFileURL(path.resolve(DIR, 'generated/index.ts')).href;
    const { backends } = (await import(/* @vite-ignore */ module)) as { backends: BackendModule[] };
    server = await startServer(backends);
    const issued = await fetch(`${server.url}/library/v1.0/token`, { method: 'POST', body: new URLSearchParams({ user: 'reader-rita', pass: 'rita-pass' }) });
    expect(issued.status).toBe(201);
    const { token } = (await issued.json()) as { token: string };
    expect(decodeJwt(token).payload).toMatchObject({ aud: 'reader', iss: 'library' });
    const loans = await fetch(`${server.url}/library/v1.0/loans`, { headers: { authorization: `Bearer ${token}` } });
    expect(loans.status).toBe(200);
    expect(await loans.json()).toEqual({ loans: [{ loan_id: expect.any(Number), title: 'Dune' }] });
    expect((await fetch(`${server.url}/library/v1.0/loans`)).status).toBe(403);
  });
});
