// What `xmlrest explain` says of a route's tenant (docs/internals/contract.md §14): proven at generate, or crossing
// tenants where steps say tenant="all", as access.lock lists them. Apart from the command, which only prints it.
import { existsSync, readFileSync } from 'node:fs';
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
