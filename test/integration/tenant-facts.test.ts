import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { generateProject, type SnapshotEntry } from '../../generator/index.js';
import { checkProject } from '../../scripts/cli/check.js';
import { connectTo } from '../../scripts/connection.js';

/**
 * The tenant proof's facts from a real MariaDB (docs/internals/contract.md §14): which tables a tenant backend's
 * statements name have the tenant column, whether their unique keys hold it, which are views; kept in
 * generated/column-types.json so that a machine without a database proves the same; a table that gains the column
 * is a tenant table the day generate runs against it, and `xmlrest check` names the change.
 */
const ROOT = 'test/.tmp/tenant-facts';
const BACKEND = path.join(ROOT, 'resources/crm');
let lines: string[] = [];
const generate = (databaseUrl?: string) => generateProject({ root: ROOT, check: false, databaseUrl, log: (line) => lines.push(line) });
const snapshot = () => JSON.parse(readFileSync(path.join(ROOT, 'generated/column-types.json'), 'utf8')) as Record<string, SnapshotEntry>;

async function sql(...statements: string[]): Promise<void> {
  const connection = await connectTo(inject('databaseUrl'));
  try {
    for (const statement of statements) await connection.query(statement);
  } finally {
    await connection.end();
  }
}

const resource = (name: string, body: string) =>
  writeFileSync(path.join(BACKEND, `${name}.xml`), `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0" auth="staff">\n${body}\n</Resource>\n`);

beforeAll(async () => {
  rmSync(ROOT, { recursive: true, force: true });
  mkdirSync(BACKEND, { recursive: true });
  await sql(
    'drop view if exists tenant_probe_people',
    'drop table if exists tenant_probe_contact, tenant_probe_item, tenant_probe_country',
    'create table tenant_probe_contact (contact_id int not null, org_id int not null, name varchar(50) not null, primary key (org_id, contact_id), unique (org_id, name))',
    'create table tenant_probe_item (item_id int not null auto_increment primary key, org_id int not null, sku varchar(20) not null unique)',
    'create table tenant_probe_country (code char(2) not null primary key, name varchar(50) not null)',
    'create view tenant_probe_people as select contact_id, org_id, name from tenant_probe_contact',
  );
  writeFileSync(path.join(BACKEND, 'backend.xml'), '<Backend xmlns="urn:xmlrest:resource:1.0" auth_scheme="Basic"><Tenant column="org_id"/></Backend>\n');
  resource(
    'contacts',
    `  <Request method="GET">
    <Sql id="contacts">select c.name from tenant_probe_contact c where c.org_id = $tenant</Sql>
  </Request>
  <Request method="POST">
    <Sql id="added">insert into tenant_probe_item (org_id, sku) values ($tenant, $sku)</Sql>
  </Request>`,
  );
  resource('countries', '  <Request method="GET">\n    <Sql id="countries">select code, name from tenant_probe_country</Sql>\n  </Request>');
  // A view's rows cannot be told apart by tenant (the proof refuses it): read here as crossing tenants, its facts kept.
  resource(
    'people',
    '  <Request method="GET">\n    <Sql id="people" tenant="all">select p.name from tenant_probe_people p where p.org_id = $tenant</Sql>\n  </Request>',
  );
});

afterAll(async () => {
  rmSync(ROOT, { recursive: true, force: true });
  await sql('drop view if exists tenant_probe_people', 'drop table if exists tenant_probe_contact, tenant_probe_item, tenant_probe_country');
});

describe("a tenant backend's facts, from the database", () => {
  it('are kept per step: the tables with the column, whether every unique key holds it, the views', async () => {
    lines = [];
    expect(await generate(inject('databaseUrl')), lines.join('\n')).toBe(0);
    const facts = Object.fromEntries(Object.entries(snapshot()).map(([key, entry]) => [key, entry.tenants]));
    expect(facts).toEqual({
      'resources/crm/contacts.xml GET contacts': { column: 'org_id', tables: { tenant_probe_contact: { uniqueOk: true } }, views: [], routines: [] },
      // unique (sku) without org_id: an upsert there could land on another tenant's row.
      'resources/crm/contacts.xml POST added': { column: 'org_id', tables: { tenant_probe_item: { uniqueOk: false } }, views: [], routines: [] },
      'resources/crm/countries.xml GET countries': { column: 'org_id', tables: {}, views: [], routines: [] },
      'resources/crm/people.xml GET people': {
        column: 'org_id',
        tables: { tenant_probe_people: { uniqueOk: true } },
        views: ['tenant_probe_people'],
        routines: [],
      },
    });
    expect(readFileSync(path.join(ROOT, 'generated/column-types.json'), 'utf8')).toContain(
      '"tenants": {"column":"org_id","tables":{"tenant_probe_contact":{"uniqueOk":true}},"views":[],"routines":[]}',
    );
  });

  it("list the database's stored routines a statement calls, and the proof refuses each call: their statements are beyond it", async () => {
    await sql(
      'drop function if exists tenant_probe_total',
      // Reads every tenant's rows, as a routine may: nothing in the calling statement says so.
      'create function tenant_probe_total(x int) returns int reads sql data return (select count(*) from tenant_probe_contact where contact_id >= x)',
    );
    resource(
      'totals',
      '  <Request method="GET">\n    <Sql id="totals">select c.name, tenant_probe_total(c.contact_id) as n from tenant_probe_contact c where c.org_id = $tenant</Sql>\n  </Request>',
    );
    try {
      lines = [];
      expect(await generate(inject('databaseUrl'))).toBe(1);
      expect(lines.join('\n')).toContain(
        'resources/crm/totals.xml:3:37: step "totals": tenant_probe_total() is a stored routine of the database, whose own statements the tenant proof cannot read',
      );
    } finally {
      rmSync(path.join(BACKEND, 'totals.xml'));
      await sql('drop function if exists tenant_probe_total');
    }
  });

  it('prove the same from the snapshot alone, without a database', async () => {
    lines = [];
    expect(await generateProject({ root: ROOT, check: true, log: (line) => lines.push(line) }), lines.join('\n')).toBe(0);
  });

  it('see a table that gained the tenant column: check names it, and generate proves the step again and refuses it', async () => {
    await sql('alter table tenant_probe_country add org_id int not null default 1');
    const report = await checkProject(ROOT, inject('databaseUrl'));
    expect('problems' in report && report.problems.map((problem) => `${problem.file}:${problem.line}:${problem.col}: ${problem.message}`)).toEqual([
      'resources/crm/countries.xml:3:5: GET step "countries": table tenant_probe_country gained org_id: a tenant table now (run npm run generate to prove the step again)',
    ]);
    lines = [];
    expect(await generate(inject('databaseUrl'))).toBe(1);
    const refusal = lines.find((line) => line.startsWith('resources/crm/countries.xml:3:'));
    expect(refusal, lines.join('\n')).toContain('tenant_probe_country');
  });

  it('without facts (none kept, no database), refuses rather than passes', async () => {
    rmSync(path.join(ROOT, 'generated/column-types.json'));
    lines = [];
    expect(await generateProject({ root: ROOT, check: false, log: (line) => lines.push(line) })).toBe(1);
    expect(lines.join('\n')).toContain(
      'resources/crm/contacts.xml:3:5: step "contacts": the tenant proof has no facts of the tables it names (which have org_id): run generate with DATABASE_URL',
    );
  });
});
