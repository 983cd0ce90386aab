// What `xmlrest explain` says of a route's tenant (docs/internals/contract.md §14): proven at generate, or crossing
// tenants where steps say tenant="all", as access.lock lists them; and the user's own tenant, without which every
// protected route of a tenant backend refuses them (403 no_tenant). Apart from the command, which only prints it.
import { existsSync, readFileSync } from 'node:fs';
import type { Explanation } from '../../console/access.js';
import { tenantOf } from '../../runtime/auth/issuer/claims.js';
import type { BackendModule } from '../../runtime/index.js';
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

/** An outside issuer's user's tenant, from the claim the backend's Issuer names, as the server reads it (tenantOf). */
export function claimsTenant(backend: BackendModule, payload: object): string | undefined {
  const issuer = backend.issuers.find((candidate) => candidate.iss === (payload as { iss?: unknown }).iss);
  return issuer === undefined ? undefined : tenantOf(payload, issuer, backend);
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
