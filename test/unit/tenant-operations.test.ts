import { describe, expect, it } from 'vitest';
import { tenantProblem, userTenantColumn } from '../../console/user-tenant.js';
import { tenantRefusal, tenantTriggerStatements, triggerNames } from '../../runtime/tenants/triggers.js';
import { readLock } from '../../scripts/cli/verify-access/lock.js';
import { foreignTenants, rowTenants } from '../../scripts/cli/verify-access/tenants.js';

/**
 * The operators' side of tenants (issue 43 points 4 and 5) that needs no database: the column of usr a backend's
 * users' tenant is set in, a tenant checked against its type, access.lock's `tenant=all` suffix, the rows of
 * another tenant in an answer, and the triggers' text and refusal.
 */
describe('a user’s tenant column and value', () => {
  const tenant = (userQuery: string | null, userColumn?: string) => ({
    defaultTables: true,
    tenant: { column: 'org_id', type: 'integer' as const, userQuery: userQuery === null ? null : { sql: userQuery }, ...(userColumn ? { userColumn } : {}) },
  });

  it('is user_column as the generator says it; none with a TenantQuery or tables of its own', () => {
    expect(userTenantColumn(tenant('select team_org as tenant from usr where user_id = ?', 'team_org'))).toBe('team_org');
    // The query's text is never read back: a backend that says no userColumn has none to set.
    expect(userTenantColumn(tenant('select team_org as tenant from usr where user_id = ?'))).toBeUndefined();
    expect(userTenantColumn(tenant('select org_id as tenant from member where user_id = ?'))).toBeUndefined();
    expect(userTenantColumn(tenant(null))).toBeUndefined();
    expect(userTenantColumn({ ...tenant('select org_id as tenant from usr where user_id = ?'), defaultTables: false })).toBeUndefined();
    expect(userTenantColumn({ defaultTables: true })).toBeUndefined();
    // Never a name that would need quoting in a statement's text.
    expect(userTenantColumn(tenant('', 'org id; drop table usr'))).toBeUndefined();
  });

  it('takes an integer in its canonical text within 64 bits, or 1 to 255 characters of text', () => {
    for (const good of ['0', '7', '18446744073709551615']) expect(tenantProblem('integer', good)).toBeUndefined();
    for (const bad of ['', '07', '-1', '+1', '1.0', ' 1', 'one', '18446744073709551616']) expect(tenantProblem('integer', bad)).toMatch(/whole number/);
    expect(tenantProblem('text', 'acme')).toBeUndefined();
    expect(tenantProblem('text', 'é'.repeat(255))).toBeUndefined();
    expect(tenantProblem('text', '')).toMatch(/1 to 255/);
    expect(tenantProblem('text', 'x'.repeat(256))).toMatch(/1 to 255/);
  });
});

describe('access.lock’s tenant=all suffix', () => {
  it('is read apart from the roles', () => {
    const lines = readLock('crm /crm/v1.0/report GET admin staff tenant=all:sales,totals\ncrm /crm/v1.0/contacts GET *\n', 'access.lock');
    expect(lines).toEqual([
      { backend: 'crm', path: '/crm/v1.0/report', method: 'GET', rule: ['admin', 'staff'], tenantAll: ['sales', 'totals'] },
      { backend: 'crm', path: '/crm/v1.0/contacts', method: 'GET', rule: '*' },
    ]);
    expect(readLock('crm /crm/v1.0/all GET public tenant=all:rows\n', 'access.lock')[0]).toMatchObject({ rule: 'public', tenantAll: ['rows'] });
  });
});

describe('rows of another tenant in an answer', () => {
  it('are the values of the tenant column at any depth that are not the caller’s', () => {
    const body = JSON.stringify({ contacts: [{ org_id: 41, name: 'a' }, { ORG_ID: '40' }, { nested: { rows: [{ org_id: 39 }] } }, { org_id: null }] });
    expect(foreignTenants(body, 'org_id', '41')).toEqual(['39', '40']);
    expect(foreignTenants(JSON.stringify({ contacts: [{ org_id: 41 }] }), 'org_id', '41')).toEqual([]);
    expect(foreignTenants(JSON.stringify({ contacts: [{ name: 'no column shown' }] }), 'org_id', '41')).toEqual([]);
    expect(foreignTenants('not json', 'org_id', '41')).toEqual([]);
  });

  it('count the rows that do not show the column: their tenant cannot be told', () => {
    expect(rowTenants(JSON.stringify({ contacts: [{ name: 'a' }, { org_id: 41 }], total: { n: 2 } }), 'org_id', '41')).toEqual({ foreign: [], untold: 1 });
    expect(rowTenants(JSON.stringify({ contacts: [] }), 'org_id', '41')).toEqual({ foreign: [], untold: 0 });
  });
});

describe('the tenant triggers', () => {
  it('are dropped and made again under names of the table, refusing a NULL tenant too', () => {
    const [dropInsert, insert, dropUpdate, update, dropDelete, remove] = tenantTriggerStatements('crm_contact', 'org_id');
    expect(dropInsert).toBe('drop trigger if exists `xmlrest_tenant_crm_contact_ins`');
    expect(dropUpdate).toBe('drop trigger if exists `xmlrest_tenant_crm_contact_upd`');
    expect(insert).toMatch(
      /before insert on `crm_contact` for each row\s+if @xmlrest_tenant is not null and not \(new\.`org_id` <=> @xmlrest_tenant\) then signal sqlstate '45000'/,
    );
    expect(update).toMatch(/before update on `crm_contact`.*not \(new\.`org_id` <=> @xmlrest_tenant\) or not \(old\.`org_id` <=> @xmlrest_tenant\)/s);
    expect(dropDelete).toBe('drop trigger if exists `xmlrest_tenant_crm_contact_del`');
    expect(remove).toMatch(/before delete on `crm_contact` for each row\s+if @xmlrest_tenant is not null and not \(old\.`org_id` <=> @xmlrest_tenant\)/);
    expect(triggerNames('t'.repeat(45))).toBeDefined();
    expect(triggerNames('t'.repeat(46))).toBeUndefined();
    expect(() => tenantTriggerStatements('crm_contact', 'org`id')).toThrow(/plain name/);
  });

  it('refuse with a 403 tenant_crossed; any other error goes on as it was', () => {
    const refusal = tenantRefusal({ errno: 1644, sqlMessage: 'xmlrest_tenant: the row belongs to another tenant' });
    expect(refusal).toMatchObject({ status: 403, reason: 'tenant_crossed' });
    const other = { errno: 1644, sqlMessage: 'a SIGNAL of the application' };
    expect(tenantRefusal(other)).toBe(other);
    expect(tenantRefusal(undefined)).toBeUndefined();
  });
});
