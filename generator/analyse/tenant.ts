import { DEFAULT_USER_TABLES } from '../../runtime/auth/users/user-tables.js';
import type { TenantSettings } from '../../runtime/contract.js';
import type { Diagnostics, SourceLocation } from '../diagnostics.js';
import type { PluginRef } from '../ir.js';
import { scanSql } from '../sql/index.js';
import type { BackendWithPlugins } from './backend-plugins.js';
import {
  AttributeReader,
  type AttributeRule,
  rule as attributeRule,
  describePlaceholder,
  type RawAttribute,
  type RawElement,
  readAttributes,
} from './elements.js';

/**
 * `<Tenant>` in backend.xml (docs/internals/contract.md §14): the backend's rows each name a tenant in `column`,
 * and every statement of its requests is proven at generate to keep to the caller's (analyse/tenant-proof.ts).
 * Here: its attributes (a table, as Backend's), where its own users' tenant is read (`user_column` of the default
 * tables' `usr`, or a `<TenantQuery>` child beside an AuthQuery of the backend's own), and the rules that tie it to
 * the rest of the backend (a scheme; an Issuer's `tenant` claim).
 */

/** A Tenant being read: the settings, and the default tables' column. */
interface Draft {
  column: string;
  type: TenantSettings['type'];
  userColumn?: string;
  triggers?: boolean;
}

/** A SQL name, written into the statements the generator makes (`select <user_column> as tenant from usr ...`). */
const SQL_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const sqlName = (value: string) => (SQL_NAME.test(value) ? value : undefined);
const rule = <K extends keyof Draft>(name: string, field: K, parse: (value: string) => Draft[K] | undefined, error: (value: string) => string) =>
  attributeRule<Draft, K>(name, field, parse, error);

const TENANT_ATTRIBUTES: readonly AttributeRule<Draft>[] = [
  rule('column', 'column', sqlName, (value) => `column is the name of the tenant column of the backend's tables (letters, digits, _), not "${value}"`),
  rule(
    'type',
    'type',
    (value) => (value === 'integer' || value === 'text' ? value : undefined),
    (value) => `type is integer or text, not "${value}"`,
  ),
  rule('user_column', 'userColumn', sqlName, (value) => `user_column is the name of a column of usr (letters, digits, _), not "${value}"`),
  rule(
    'triggers',
    'triggers',
    (value) => (value === 'on' ? true : value === 'off' ? false : undefined),
    (value) => `triggers is on or off, not "${value}"`,
  ),
];
/** The names this table reads, which the schema must give the element too (test/unit/reference.test.ts). */
export const TENANT_ATTRIBUTE_NAMES: readonly string[] = TENANT_ATTRIBUTES.map((attribute) => attribute.name);

/**
 * Backends whose `<Tenant>` is there but wrong (its errors reported): their resources' `$tenant` and
 * `tenant="all"` are not reported again as if the backend declared none.
 */
export const BROKEN_TENANTS = new WeakSet<BackendWithPlugins>();

/** A `<Tenant>` read, before the rest of the backend is known. */
export interface ReadTenant {
  element: RawElement;
  draft: Draft;
  given: Set<string>;
  query: RawElement | undefined;
}

/** Reads one `<Tenant>` element's attributes and its `<TenantQuery>` child. */
export function readTenant(element: RawElement, diagnostics: Diagnostics): ReadTenant {
  const draft: Draft = { column: '', type: 'integer' };
  const given = new Set(readAttributes(element, TENANT_ATTRIBUTES, draft, diagnostics).keys());
  if (!given.has('column')) diagnostics.error(element.at, 'Tenant needs the attribute column (the column that names a row\'s tenant, e.g. column="org_id")');
  if (element.hasMixedText) diagnostics.error(element.at, 'Tenant holds only a TenantQuery, not text');
  let query: RawElement | undefined;
  for (const child of element.children) {
    if (child.name === 'TenantQuery') {
      if (query) diagnostics.error(child.at, 'only one TenantQuery per Tenant');
      query = child;
    } else diagnostics.error(child.at, `unknown element in Tenant: ${child.name} (expected TenantQuery)`);
  }
  return { element, draft, given, query };
}

/**
 * The backend's tenant settings, once its scheme and AuthQuery are known; undefined (reported) when they cannot be.
 * `issuersAt`: where each outside Issuer is said, with whether it names the tenant claim.
 */
export function finishTenant(
  read: ReadTenant,
  backend: BackendWithPlugins,
  customQuery: RawElement | undefined,
  issuers: { at: SourceLocation; tenant: boolean }[],
  diagnostics: Diagnostics,
): TenantSettings | undefined {
  const before = diagnostics.count;
  const { element, draft, given, query } = read;
  if (backend.authScheme !== 'Basic' && backend.authScheme !== 'Bearer') {
    diagnostics.error(element.at, 'a Tenant needs auth_scheme="Basic" or "Bearer" on Backend: a caller\'s tenant is known only once the caller is');
  }
  for (const issuer of issuers) {
    if (!issuer.tenant)
      diagnostics.error(
        issuer.at,
        'an Issuer of a tenant backend names the claim that holds its users\' tenant: add tenant="<claim path>" (e.g. tenant="org_id")',
      );
  }
  let userQuery: TenantSettings['userQuery'] = null;
  let userColumn: string | undefined;
  if (customQuery) {
    if (given.has('user_column'))
      diagnostics.error(
        element.at,
        "user_column names a column of the default tables' usr: with an AuthQuery of the backend's own, say where a user's tenant is in a <TenantQuery>",
      );
    if (!query)
      diagnostics.error(
        element.at,
        "a Tenant with an AuthQuery of the backend's own needs a <TenantQuery>, its user's tenant by $uid (e.g. <TenantQuery>select org_id as tenant from member where user_id = $uid</TenantQuery>)",
      );
    else userQuery = analyseTenantQuery(query, diagnostics);
  } else {
    if (query)
      diagnostics.error(
        query.at,
        "a TenantQuery belongs with an AuthQuery of the backend's own: on the default user tables, write user_column (default: column)",
      );
    const column = draft.userColumn ?? draft.column;
    userColumn = column;
    userQuery = { sql: `select ${column} as tenant from ${DEFAULT_USER_TABLES.users} where ${DEFAULT_USER_TABLES.userId} = ?` };
  }
  if (diagnostics.count !== before || draft.column === '') {
    BROKEN_TENANTS.add(backend);
    return undefined;
  }
  return {
    column: draft.column,
    type: draft.type,
    userQuery,
    ...(userColumn === undefined ? {} : { userColumn }),
    ...(draft.triggers ? { triggers: true as const } : {}),
  };
}

/** `<TenantQuery>`: as a RolesQuery, only `$uid`, a SELECT, one column `tenant`. */
function analyseTenantQuery(element: RawElement, diagnostics: Diagnostics): TenantSettings['userQuery'] {
  new AttributeReader(element, diagnostics).rejectOthers();
  const scanned = scanSql(element.text);
  for (const problem of scanned.problems) diagnostics.error(element.locate(problem.offset), `TenantQuery: ${problem.message}`);
  let uids = 0;
  scanned.placeholders.forEach((placeholder, index) => {
    if (placeholder.kind === 'uid') uids++;
    else
      diagnostics.error(
        element.locate(scanned.placeholderOffsets[index]!),
        `TenantQuery may use only $uid (the user whose tenant it reads), not ${describePlaceholder(placeholder)}`,
      );
  });
  if (scanned.statement !== 'read') diagnostics.error(element.at, 'TenantQuery must be a SELECT');
  else if (uids !== 1) diagnostics.error(element.at, "TenantQuery finds the user's tenant by $uid, used once (the server binds it to the statement's one ?)");
  else if (scanned.columns !== null && (scanned.columns.length !== 1 || scanned.columns[0] !== 'tenant'))
    diagnostics.error(element.at, 'TenantQuery returns one column, named tenant (give the column an alias: select org_id as tenant ...)');
  return { sql: scanned.sql };
}

/** A step's `tenant` (Sql and Execute): one row of its attribute table. */
interface StepTenant {
  tenant?: 'all';
}
const STEP_ATTRIBUTES: readonly AttributeRule<StepTenant>[] = [
  attributeRule<StepTenant, 'tenant'>(
    'tenant',
    'tenant',
    (value) => (value === 'all' ? 'all' : undefined),
    (value) => `tenant is all (the step may read and write every tenant's rows, and access.lock says so), not "${value}"`,
  ),
];
/** The names this table reads, which the schema must give Sql and Execute too (test/unit/reference.test.ts). */
export const STEP_TENANT_ATTRIBUTE_NAMES: readonly string[] = STEP_ATTRIBUTES.map((attribute) => attribute.name);

/** `tenant="all"` on a step, or undefined when absent or wrong (reported); refused on a backend without a tenant. */
export function readStepTenant(attribute: RawAttribute | undefined, backend: BackendWithPlugins, diagnostics: Diagnostics): 'all' | undefined {
  if (attribute === undefined) return undefined;
  const target: StepTenant = {};
  const row = STEP_ATTRIBUTES[0]!;
  if (!row.apply(attribute.value, target)) {
    diagnostics.error(attribute.at, row.error(attribute.value));
    return undefined;
  }
  if (!backend.tenant) {
    if (BROKEN_TENANTS.has(backend)) return undefined;
    diagnostics.error(attribute.at, `tenant="all" is for a step of a tenant backend (<Tenant> in resources/${backend.name}/backend.xml)`);
    return undefined;
  }
  return target.tenant;
}

/**
 * Whether `$tenant` may be bound here: only in a tenant backend's protected requests. `publicBecause` says why the
 * request is public, null when it is protected. Reported when not (but on a backend whose Tenant is wrong).
 */
export function tenantBindable(
  backend: BackendWithPlugins,
  publicBecause: string | null,
  at: SourceLocation,
  where: string,
  diagnostics: Diagnostics,
): boolean {
  if (!backend.tenant) {
    // A Tenant that is there but wrong has said so in backend.xml.
    if (!BROKEN_TENANTS.has(backend)) diagnostics.error(at, `${where} uses $tenant, which only a tenant backend (<Tenant> in backend.xml) has`);
    return false;
  }
  if (publicBecause !== null) {
    diagnostics.error(at, `${where} uses $tenant but ${publicBecause}: $tenant is the authenticated caller's tenant`);
    return false;
  }
  return true;
}

/** No proof reads a plug-in's statements: on a tenant backend, one of the project's own says that it may cross. */
export function checkPluginTenant(
  plugin: PluginRef,
  tenant: 'all' | undefined,
  backend: BackendWithPlugins,
  at: SourceLocation,
  where: string,
  diagnostics: Diagnostics,
): void {
  if (plugin.builtin || !backend.tenant || tenant !== undefined) return;
  diagnostics.error(
    at,
    `${where} calls the plug-in ${plugin.classname}, whose statements the tenant proof cannot read: write tenant="all" on the Execute if it may touch every tenant's rows (access.lock lists it), or do its work in Sql steps`,
  );
}

/** The handler's `tenant` is the caller's: a request parameter of that name would read as if it were. */
export function checkTenantParam(params: readonly string[], backend: BackendWithPlugins, at: SourceLocation, diagnostics: Diagnostics): void {
  if (backend.tenant && params.includes('tenant'))
    diagnostics.error(at, "a request parameter named tenant on a tenant backend would read as the caller's $tenant: rename the parameter");
}
