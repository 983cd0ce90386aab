import { backendsReading, tenantProblem, userTenantColumn } from '../../console/user-tenant.js';
import type { TenantSettings } from '../../runtime/contract.js';
import type { BackendModule } from '../../runtime/index.js';

/** Where `xmlrest user add --tenant` and `xmlrest user tenant` write: a column of usr, its type, and the backends that read it. */
export interface UserTenantTarget {
  column: string;
  type: TenantSettings['type'];
  readers: BackendModule[];
}

/** A wrong command line about tenants: said, exit 2. */
export class TenantUsage extends Error {}

/**
 * The column of usr a user's tenant goes in: that of `--backend`, or, without it, the one column every tenant
 * backend of the default tables reads (two backends reading two columns, or one column as two types, need
 * `--backend`). A backend with a `<TenantQuery>` reads tables of its own: nothing to set in usr.
 */
export function userTenantTarget(backends: readonly BackendModule[], named: string | undefined): UserTenantTarget {
  const candidates = named === undefined ? backends.filter((backend) => backend.tenant !== undefined) : backends.filter((backend) => backend.name === named);
  if (named !== undefined && candidates.length === 0)
    throw new TenantUsage(`no backend ${named} (the backends are ${backends.map((backend) => backend.name).join(', ')})`);
  const settable = candidates.filter((backend) => userTenantColumn(backend) !== undefined);
  if (settable.length === 0) {
    const [first] = candidates;
    if (first?.tenant !== undefined)
      throw new TenantUsage(`backend ${first.name} reads its users' tenant with its TenantQuery: change it in the tables that query reads`);
    throw new TenantUsage(
      named === undefined
        ? 'no backend of this project has a tenant on the default user tables (<Tenant user_column="…"/>)'
        : `backend ${named} has no tenant on the default user tables`,
    );
  }
  const kinds = new Set(settable.map((backend) => `${userTenantColumn(backend)} ${backend.tenant!.type}`));
  if (kinds.size > 1)
    throw new TenantUsage(
      `the tenant backends read different columns of usr (${settable.map((backend) => `${backend.name}: ${userTenantColumn(backend)}`).join(', ')}): say which with --backend`,
    );
  const [chosen] = settable;
  const column = userTenantColumn(chosen!)!;
  return { column, type: chosen!.tenant!.type, readers: backendsReading(column, backends) };
}

/** The tenant as given, checked against the type; exit 2 when it is not one. */
export function checkedTenant(target: UserTenantTarget, text: string): string {
  const problem = tenantProblem(target.type, text);
  if (problem !== undefined) throw new TenantUsage(problem);
  return text;
}
