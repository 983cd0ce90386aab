// What `xmlrest explain` says of a route's tenant (docs/internals/contract.md §14): proven at generate, or crossing
// tenants where steps say tenant="all", as access.lock lists them; and the user's own tenant, without which every
// protected route of a tenant backend refuses them (403 no_tenant). Apart from the command, which only prints it.
import { existsSync, readFileSync } from 'node:fs';
import type { Explanation } from '../../console/access.js';
import { claimAt } from '../../runtime/auth/issuer/claims.js';
import type { BackendModule, Queryable } from '../../runtime/index.js';
import { canonicalTenant } from '../../runtime/tenants/canonical.js';
import { readUserTenant } from '../../runtime/tenants/user-tenant.js';
import { readLock } from './verify-access/lock.js';

/** `proven (org_id)`, `all (steps counts, totals)`, or undefined on a backend without a tenant. */
export function routeTenant(backend: BackendModule, method: string, served: string, lockFile = 'access.lock'): string | undefined {
  const tenant = backend.tenant;
  if (tenant === undefined) return undefined;
  const lines = existsSync(lockFile) ? readLock(readFileSync(lockFile, 'utf8'), lockFile) : [];
  const line = lines.find((candidate) => candidate.path === served && candidate.method === method.toUpperCase());
  return line?.tenantAll
    ? `all (step${line.tenantAll.length === 1 ? '' : 's'} ${line.tenantAll.join(', ')} may read and write every tenant's rows: tenant="all")`
    : `proven (every statement keeps to the caller's ${tenant.column})`;
}

/** A user's tenant as the server would read it: with the backend's user query (the default tables, or a TenantQuery). */
export function userTenant(db: Queryable, backend: BackendModule, userId: string): Promise<string | undefined> {
  return readUserTenant(db, backend, userId);
}

/** An outside issuer's user's tenant, from the claim the backend's Issuer names. */
export function claimsTenant(backend: BackendModule, payload: object): string | undefined {
  const iss = (payload as { iss?: unknown }).iss;
  const issuer = backend.issuers.find((candidate) => candidate.iss === iss);
  if (backend.tenant === undefined || issuer?.tenant === undefined) return undefined;
  return canonicalTenant(backend.tenant.type, claimAt(payload, issuer.tenant));
}

/**
 * The answer with the caller's tenant weighed in: on a tenant backend a caller the roles admit to a protected route
 * but who has no tenant is refused (403 no_tenant), as the server refuses them; `tenant` undefined is none.
 */
export function withTenant(answer: Explanation, backend: BackendModule, user: string, tenant: string | undefined): Explanation & { tenant?: string } {
  if (backend.tenant === undefined || answer.needs === 'public' || answer.allowed !== true) return answer;
  if (tenant !== undefined) return { ...answer, tenant };
  return {
    ...answer,
    allowed: false,
    reason: `${user} has no tenant on backend ${backend.name} (a tenant backend: every protected route refuses a caller without one, 403 no_tenant), though ${answer.reason}`,
  };
}
