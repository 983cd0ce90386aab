import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { generateProject } from '../../generator/index.js';
import { connectTo } from '../../scripts/connection.js';

/** Types from the live schema: inference, the snapshot, --refresh-types, and the database's errors. */
const ROOT = 'test/.tmp/types';
const RESOURCE = path.join(ROOT, 'resources/probe/gadgets.xml');
let lines: string[] = [];
const generate = (options: { check?: boolean; refreshTypes?: boolean; databaseUrl?: string | undefined } = {}) =>
  generateProject({
    root: ROOT,
    check: options.check ?? false,
    refreshTypes: options.refreshTypes,
    databaseUrl: options.databaseUrl,
    log: (line) => lines.push(line),
  });
const moduleText = () => readFileSync(path.join(ROOT, 'generated/probe/gadgets.ts'), 'utf8');

async function sql(statement: string): Promise<void> {
  const connection = await connectTo(inject('databaseUrl'));
  await connection.query(statement);
  await connection.end();
}

beforeAll(async () => {
  rmSync(ROOT, { recursive: true, force: true });
  mkdirSync(path.dirname(RESOURCE), { recursive: true });
  await sql('drop table if exists type_probe');
  await sql('create table type_probe (id int not null primary key, size int not null, note varchar(20) null, made datetime not null)');
  writeFileSync(
    RESOURCE,
    `<Resource v="1.0">
  <Request method="GET">
    <Sql id="gadgets">select * from type_probe where id > $min</Sql>
    <Sql id="first">select $[gadgets][0].size as size</Sql>
  </Request>
</Resource>
`,
  );
});
afterAll(() => rmSync(ROOT, { recursive: true, force: true }));

describe('types from the database', () => {
  it('types each column, nullable ones as T | null, and writes the snapshot', async () => {
    lines = [];
    expect(await generate({ databaseUrl: inject('databaseUrl') })).toBe(0);
    expect(moduleText()).toContain('  size: number;\n');
    expect(moduleText()).toContain('  note: string | null;\n');
    expect(moduleText()).toContain('  made: Date;\n');
    expect(lines).toContain('types: resources/probe/gadgets.xml GET gadgets: typed id number, size number, note string | null, made Date');
    const snapshot = JSON.parse(readFileSync(path.join(ROOT, 'generated/column-types.json'), 'utf8')) as Record<string, unknown>;
    expect(Object.keys(snapshot)).toEqual(['resources/probe/gadgets.xml GET first', 'resources/probe/gadgets.xml GET gadgets']);
  });

  it('gives the same output from the snapshot alone, without a database', async () => {
    lines = [];
    expect(await generate({ check: true })).toBe(0);
    expect(lines).toEqual([]);
  });

  it('sees a changed column type: --check --refresh-types names it, --refresh-types rewrites the type', async () => {
    await sql('alter table type_probe modify size bigint null');
    lines = [];
    // The snapshot alone still matches: nothing asks the database.
    expect(await generate({ check: true, databaseUrl: inject('databaseUrl') })).toBe(0);
    expect(await generate({ check: true, refreshTypes: true, databaseUrl: inject('databaseUrl') })).toBe(1);
    expect(lines).toContain('types: resources/probe/gadgets.xml GET gadgets: column size int (number) -> bigint null (string | null)');
    expect(lines).toContain('update generated/probe/gadgets.ts');
    expect(lines).toContain('update generated/column-types.json');
    expect(moduleText()).toContain('  size: number;\n');
    expect(await generate({ refreshTypes: true, databaseUrl: inject('databaseUrl') })).toBe(0);
    expect(moduleText()).toContain('  size: string | null;\n');
  });

  it('reports a statement the database rejects at its file:line:col, with the server message', async () => {
    const good = readFileSync(RESOURCE, 'utf8');
    writeFileSync(RESOURCE, good.replace('select * from type_probe', 'select * from no_such_probe'));
    lines = [];
    expect(await generate({ databaseUrl: inject('databaseUrl') })).toBe(1);
    expect(lines[0]).toMatch(
      /^resources\/probe\/gadgets\.xml:3:5: step "gadgets": the database rejects the statement: Table '.*\.no_such_probe' doesn't exist$/,
    );
    writeFileSync(RESOURCE, good.replace('$[gadgets][0].size', '$[gadgets][0].colour'));
    lines = [];
    expect(await generate({ databaseUrl: inject('databaseUrl') })).toBe(1);
    expect(lines[0]).toBe('resources/probe/gadgets.xml:4:28: step "first" reads unknown column "colour" of step "gadgets" (it returns id, size, note, made)');
    writeFileSync(RESOURCE, good);
  });

  it('--refresh-types without a database is a usage error', async () => {
    lines = [];
    expect(await generate({ refreshTypes: true })).toBe(2);
    expect(lines).toEqual(['xmlrest: --refresh-types needs a database: set DATABASE_URL']);
  });
});
