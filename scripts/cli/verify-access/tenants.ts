// The temporary users' tenants on a tenant backend (docs/internals/contract.md §14), and what a read proves of them:
// apart from the run, which decides who calls what.
import type mysql from 'mysql2/promise';
import { userTenantColumn } from '../../../console/user-tenant.js';
import type { Backend } from '../../../generator/ir.js';
import { DEFAULT_USER_TABLES } from '../../../runtime/auth/users/user-tables.js';
import { errnoOf } from '../../../runtime/db/index.js';
import { TENANT_TABLES_SQL } from '../../../runtime/tenants/triggers.js';
import { type Caller, type Check, messageOf, REQUEST_TIMEOUT_MS, type Send } from './call.js';
import type { LockLine } from './lock.js';
import { TEMPORARY_USER_PREFIX, type TemporaryUser } from './users.js';

/** Two tenants no row names yet: the temporary users' own, and their twins' (the same roles, another tenant). */
export interface TemporaryTenants {
  own: string;
  other: string;
}

/** Why the database would not take a temporary tenant (usr's column refers to a table of tenants, or is too narrow). */
const REFUSED_TENANT = new Map([
  [1452, 'it refers to a table of tenants (a foreign key), where verify-access makes no row'],
  [1264, 'the column is too narrow for a tenant no row names yet'],
  [1406, 'the column is too narrow for a tenant no row names yet'],
]);

/** The column of usr that a backend's users' tenant is read from, when verify-access can give its users one. */
export const tenantColumnOf = (backend: Backend): string | undefined => userTenantColumn(backend);

/**
 * Two tenants that no row of the database names: past the greatest of the tenant tables' column and usr's (an
 * integer tenant), or text of the run's own. Fresh tenants own nothing, so that any row a temporary user is
 * answered with that names a tenant names another one: no real tenant's rows are given to a temporary user.
 */
export async function freshTenants(connection: mysql.Connection, backend: Backend, userColumn: string, run: string): Promise<TemporaryTenants> {
  const tenant = backend.tenant!;
  if (tenant.type === 'text') return { own: `${TEMPORARY_USER_PREFIX}${run}-a`, other: `${TEMPORARY_USER_PREFIX}${run}-b` };
  const [tables] = (await connection.query(TENANT_TABLES_SQL, [tenant.column])) as unknown as [{ name: string }[]];
  let greatest = 0n;
  const sources = [{ table: DEFAULT_USER_TABLES.users, column: userColumn }, ...tables.map((table) => ({ table: table.name, column: tenant.column }))];
  for (const { table, column } of sources) {
    const [rows] = (await connection.query(`select cast(max(${quoted(column)}) as char) as greatest from ${quoted(table)}`)) as unknown as [
      { greatest: string | null }[],
    ];
    const found = rows[0]?.greatest;
    if (found !== null && found !== undefined && /^[0-9]+$/.test(found) && BigInt(found) > greatest) greatest = BigInt(found);
  }
  return { own: String(greatest + 1n), other: String(greatest + 2n) };
}

/** Gives users a tenant in usr's column; why not, when the database refuses it. */
export async function giveTenant(connection: mysql.Connection, column: string, users: readonly TemporaryUser[], tenant: string): Promise<string | undefined> {
  if (users.length === 0) return undefined;
  try {
    await connection.execute(
      `update ${DEFAULT_USER_TABLES.users} set ${quoted(column)} = ? where ${DEFAULT_USER_TABLES.userId} in (${users.map(() => '?').join(', ')})`,
      [tenant, ...users.map((user) => user.id)],
    );
    return undefined;
  } catch (error) {
    const why = REFUSED_TENANT.get(errnoOf(error) ?? 0);
    if (why === undefined) throw error;
    return `verify-access cannot give its temporary users a tenant of their own in ${DEFAULT_USER_TABLES.users}.${column}: ${why}`;
  }
}

/**
 * What an answer's rows say of their tenants: those not `tenant` that rows name (every object at any depth of its
 * JSON with a property named as the tenant column, any case), and how many rows (objects in an array) do not show
 * the column, whose tenant cannot be told.
 */
export function rowTenants(text: string, column: string, tenant: string): { foreign: string[]; untold: number } {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { foreign: [], untold: 0 };
  }
  const found = new Set<string>();
  let untold = 0;
  const name = column.toLowerCase();
  const walk = (value: unknown, inArray: boolean): void => {
    if (Array.isArray(value)) {
      for (const item of value) walk(item, true);
      return;
    }
    if (typeof value !== 'object' || value === null) return;
    let shows = false;
    for (const [key, inner] of Object.entries(value)) {
      if (key.toLowerCase() !== name) walk(inner, false);
      else {
        shows = true;
        if ((typeof inner === 'string' || typeof inner === 'number') && String(inner) !== tenant) found.add(String(inner));
      }
    }
    if (inArray && !shows) untold++;
  };
  walk(body, false);
  return { foreign: [...found].sort(), untold };
}

/** The tenants other than `tenant` that an answer's rows name. */
export const foreignTenants = (text: string, column: string, tenant: string): string[] => rowTenants(text, column, tenant).foreign;

/**
 * A read the guard admitted, called again as the caller and as its twin of another tenant with the same
 * credentials' kind: neither answer may hold a row that names another tenant than the caller's (fresh tenants own
 * nothing, so any such row is another tenant's). Rows that do not show the tenant column leave it unproven (they
 * may be another tenant's, or of a table without tenants): never passed. A line of a method that crosses tenants
 * on purpose (`tenant=all`) is never asked.
 */
export async function tenantCheck(
  line: LockLine,
  caller: Caller,
  twin: Caller | undefined,
  column: string,
  tenants: TemporaryTenants,
  base: string,
  send: Send,
): Promise<Check> {
  const done = (got: Check['got'], status: number | null, note: string): Check => ({
    backend: line.backend,
    method: line.method,
    path: line.path,
    role: `${caller.role} (tenant ${tenants.own}), and another tenant's`,
    credentials: caller.credentials,
    expected: 'refused',
    got,
    status,
    note,
  });
  if (twin === undefined) return done('unproven', null, 'no caller of another tenant with these credentials: another tenant’s rows not looked for');
  const crossed: string[] = [];
  let untold = 0;
  for (const [who, tenant] of [
    [caller, tenants.own],
    [twin, tenants.other],
  ] as const) {
    let answer: Awaited<ReturnType<Send>>;
    try {
      answer = await send(line.method, base + line.path, who.headers);
    } catch (error) {
      if ((error as Error).name === 'TimeoutError') return done('error', null, `no answer within ${REQUEST_TIMEOUT_MS / 1000} s`);
      throw error;
    }
    if (answer.status < 200 || answer.status >= 300)
      return done('error', answer.status, `${messageOf(answer)} (as tenant ${tenant}, a 2xx answer was to come)`);
    const rows = rowTenants(answer.text, column, tenant);
    for (const other of rows.foreign) crossed.push(`tenant ${tenant} was answered rows of ${column} = ${other}`);
    untold += rows.untold;
  }
  if (crossed.length > 0) return done('admitted', 200, `rows of another tenant came back: ${crossed.join('; ')}`);
  if (untold > 0)
    return done('unproven', 200, `${untold} row(s) came back without ${column}: whose they are cannot be told (select it, or see them stay empty)`);
  return done('refused', 200, 'no row of another tenant came back');
}

function quoted(name: string): string {
  return `\`${name.replaceAll('`', '``')}\``;
}
