import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { widestText } from '../../generator/analyse/tenant-proof.js';
import { Diagnostics } from '../../generator/diagnostics.js';
import { analyseSources, driftText, generate, type SourceFile, type TypeSnapshot, typeDrift } from '../../generator/index.js';
import type { SqlStep } from '../../generator/ir.js';
import { inferTypes } from '../../generator/types.js';
import type { BackendModule } from '../../runtime/index.js';
import { routeTenant } from '../../scripts/cli/explain-tenant.js';
import { readLock } from '../../scripts/cli/verify-access/lock.js';

/** The generator's side of tenants (docs/internals/contract.md §14) where a golden case cannot show it. */
const backend = (extra = '') => `<Backend xmlns="urn:xmlrest:resource:1.0" auth_scheme="Bearer"><Tenant column="org_id"/>${extra}</Backend>`;
const resource = (body: string, auth = 'staff') =>
  `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0"${auth === '' ? '' : ` auth="${auth}"`}>${body}</Resource>`;
const facts = (sql: string, tables: Record<string, { uniqueOk: boolean }> = { contact: { uniqueOk: true } }, column = 'org_id') => ({
  sql,
  columns: [],
  tenants: { column, tables, views: [], routines: [] },
});

describe('a tenant backend at generate', () => {
  it('refuses a plug-in of the project\'s own without tenant="all": no proof reads its statements', () => {
    const result = generate(
      [
        { path: 'resources/app/backend.xml', text: backend('<Plugin classname="app.Mail" module="plugins/mail.ts" export="mail"/>') },
        { path: 'resources/app/mail.xml', text: resource('<Request method="POST"><Execute id="sent" classname="app.Mail"/></Request>') },
      ],
      { exists: () => true },
    );
    expect(result.ok).toBe(false);
    expect(!result.ok && result.errors).toEqual([
      'resources/app/mail.xml:1:88: step "sent" calls the plug-in app.Mail, whose statements the tenant proof cannot read: write tenant="all" on the Execute if it may touch every tenant\'s rows (access.lock lists it), or do its work in Sql steps',
    ]);
  });

  it('takes xmlrest\'s own token generator in a public token request, its read of the user tables saying tenant="all", even with --strict', () => {
    const sources: SourceFile[] = [
      { path: 'resources/app/backend.xml', text: backend() },
      {
        path: 'resources/app/token.xml',
        text: resource(
          '<Request method="POST" status="201"><Sql id="q" output="false" tenant="all">select cast(u.user_id as char) as sub, r.role_name as aud, u.pass_word from usr_role r inner join usr u on r.user_id = u.user_id where u.user_name = $user</Sql>' +
            '<Execute id="token" classname="xmlrest.auth.TokenGenerator"><Arg name="aud" value="$[q][0].aud"/><Arg name="sub" value="$[q][0].sub"/><Arg name="password" value="$pass"/><Arg name="hash" value="$[q][0].pass_word"/><Arg name="user" value="$user"/></Execute></Request>',
          '',
        ),
      },
    ];
    const result = generate(sources, { strict: true });
    expect(result.ok, result.ok ? '' : result.errors.join('\n')).toBe(true);
    expect(result.ok && result.files.get('access.lock')).toContain('app /app/v1.0/token POST public tenant=all:q\n');
  });

  it('warns of tenant="all" on a method any user may call, and refuses it with --strict', () => {
    const sql = 'select org_id, count(*) as n from contact group by org_id';
    const sources: SourceFile[] = [
      { path: 'resources/app/backend.xml', text: backend() },
      { path: 'resources/app/counts.xml', text: resource(`<Request method="GET"><Sql id="counts" tenant="all">${sql}</Sql></Request>`, '*') },
    ];
    const loose = generate(sources);
    expect(loose.ok && loose.warnings).toEqual([
      'resources/app/counts.xml:1:83: warning: step "counts" says tenant="all" on any user\'s (auth="*") GET: every tenant\'s rows reach every user of every tenant. Give the request roles that only operators hold',
    ]);
    const strict = generate(sources, { strict: true });
    expect(strict.ok).toBe(false);
  });

  it('proves nothing without facts for this tenant column: a column changed since is "run generate with DATABASE_URL"', () => {
    const sql = 'select c.name from contact c where c.org_id = ?';
    const sources: SourceFile[] = [
      { path: 'resources/app/backend.xml', text: backend() },
      {
        path: 'resources/app/names.xml',
        text: resource('<Request method="GET"><Sql id="names">select c.name from contact c where c.org_id = $tenant</Sql></Request>'),
      },
    ];
    const key = 'resources/app/names.xml GET names';
    expect(generate(sources, { types: { [key]: facts(sql) } as TypeSnapshot }).ok).toBe(true);
    const stale = generate(sources, { types: { [key]: facts(sql, { contact: { uniqueOk: true } }, 'tenant_id') } as TypeSnapshot });
    expect(!stale.ok && stale.errors.join('\n')).toContain('run generate with DATABASE_URL');
    const otherText = generate(sources, { types: { [key]: facts('select 1') } as TypeSnapshot });
    expect(!otherText.ok && otherText.errors.join('\n')).toContain('run generate with DATABASE_URL');
  });

  it("writes a list's widest statement back with $tenant where the step's own bind stood, and no other", () => {
    const { project, diagnostics } = analyseSources([
      { path: 'resources/app/backend.xml', text: backend() },
      {
        path: 'resources/app/list.xml',
        text: resource(
          '<Request method="GET"><Sql id="names">select c.contact_id, c.name from contact c where c.org_id = $tenant</Sql><Filter param="org" sql="c.org_id = $org"/><Page key="c.contact_id"/></Request>',
        ),
      },
    ]);
    expect(diagnostics.lines()).toEqual([]);
    const step = project.backends[0]!.resources[0]!.operations[0]!.steps[0] as SqlStep;
    // A filter's `c.org_id = $org` must never read as the tenant's term.
    expect(widestText(step)).toBe(
      'select c.contact_id, c.name from contact c where c.org_id = $tenant\n  and c.org_id = $list_value\n  and c.contact_id > $list_value\norder by c.contact_id\nlimit $list_value',
    );
  });
});

describe("access.lock's tenant suffix", () => {
  it('is read as the steps that cross tenants, not as a role', () => {
    expect(readLock('app /app/v1.0/report GET operator tenant=all:counts,totals\n', 'access.lock')).toEqual([
      { backend: 'app', path: '/app/v1.0/report', method: 'GET', rule: ['operator'], tenantAll: ['counts', 'totals'] },
    ]);
  });
});

describe('the unowned-read lint on a tenant backend', () => {
  it("says the rows that leak are other users' of the caller's tenant", () => {
    const sql = 'select n.note_id from note n where n.org_id = ?';
    const result = generate(
      [
        { path: 'resources/app/backend.xml', text: backend() },
        {
          path: 'resources/app/notes.xml',
          text: resource('<Request method="GET"><Sql id="notes">select n.note_id from note n where n.org_id = $tenant</Sql></Request>'),
        },
      ],
      {
        types: {
          'resources/app/notes.xml GET notes': { ...facts(sql, { note: { uniqueOk: true } }), owners: { user: 'usr.user_id', tables: { note: ['user_id'] } } },
        },
      },
    );
    expect(result.ok && result.warnings.join('\n')).toContain("every caller it admits reads every user's rows of the caller's tenant.");
  });
});

describe('xmlrest explain on a tenant backend', () => {
  it('says a route is proven, or which steps cross tenants as access.lock lists them', () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'explain-tenant-'));
    const lock = path.join(folder, 'access.lock');
    writeFileSync(lock, 'ops /ops/v1.0/report GET operator tenant=all:counts\nops /ops/v1.0/report POST operator\n');
    const module = { tenant: { column: 'org_id', type: 'integer', userQuery: null } } as unknown as BackendModule;
    expect(routeTenant(module, 'get', '/ops/v1.0/report', lock)).toBe('all (step counts may read and write every tenant\'s rows: tenant="all")');
    expect(routeTenant(module, 'POST', '/ops/v1.0/report', lock)).toBe("proven (every statement keeps to the caller's org_id)");
    expect(routeTenant({} as BackendModule, 'POST', '/ops/v1.0/report', lock)).toBeUndefined();
  });
});

describe("a tenant backend's facts", () => {
  const schema: Record<string, string[]> = { contact: ['contact_id', 'org_id', 'name'], country: ['code', 'name'] };
  const database = {
    describe: async () => [],
    columnsOf: async (table: string) => (schema[table] ?? []).map((name) => ({ name, dataType: 'int', columnType: 'int', nullable: false, maxLength: null })),
    uniqueKeysOf: async (table: string) => (table === 'contact' ? [['contact_id'], ['org_id', 'name']] : [['code']]),
    viewsAmong: async () => [],
  };
  const sources: SourceFile[] = [
    { path: 'resources/app/backend.xml', text: backend() },
    {
      path: 'resources/app/names.xml',
      text: resource('<Request method="GET"><Sql id="names">select c.name from contact c where c.org_id = $tenant</Sql></Request>'),
    },
  ];
  const key = 'resources/app/names.xml GET names';

  it('are asked again of the database when the tenant column changed, the types kept', async () => {
    const { project } = analyseSources(sources);
    const old = { ...facts('select c.name from contact c where c.org_id = ?', {}, 'tenant_id'), exact: {} };
    const { snapshot } = await inferTypes(project, { [key]: old }, database, new Diagnostics(), { refresh: false });
    expect(snapshot[key]?.tenants).toEqual({ column: 'org_id', tables: { contact: { uniqueOk: false } }, views: [], routines: [] });
  });

  it('name a table that gained or lost the tenant column as a drift', () => {
    const was = facts('select 1', { contact: { uniqueOk: true } });
    const now = facts('select 1', { country: { uniqueOk: true } });
    expect(typeDrift(was, now).map(driftText)).toEqual(['table contact lost org_id: no tenant table now', 'table country gained org_id: a tenant table now']);
  });
});
