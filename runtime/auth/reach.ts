import type { Access, BackendModule } from '../contract.js';
import { HttpError } from '../errors.js';
import { canonicalTenant } from '../tenants/canonical.js';
import type { Guard } from './guard.js';
import { presentedKey } from './keys/api-key.js';
import type { Principal } from './scheme.js';

/**
 * Who a request's credentials are, backend by backend: what `GET
 * {base}/openapi.json?for=me` (docs.ts) lists the operations of. Each backend
 * is asked through its own guard, as a call to one of its routes would ask it,
 * so that the answer is the server's own: an API key on the backends that
 * take keys, a Bearer token on the Bearer backends, Basic credentials on the
 * Basic backends. Basic credentials are checked once per user directory (the
 * default tables are one, whichever backends read them), so that a wrong
 * password counts one failed login, not one per backend. No credentials: no
 * backend. Credentials that no backend accepts: the first refusal (a 401 with
 * its challenge, a 429), as the caller's next call would get it. A tenant
 * backend (docs/internals/contract.md §14) reaches only a caller with a tenant
 * there, as each of its routes would refuse any other (403 `no_tenant`); its
 * tenant is its own (read with its own query), so its guard is always asked,
 * the password's verdict remembered from the first check answering at once.
 */
export async function callerReach(
  backends: readonly BackendModule[],
  guards: ReadonlyMap<string, Guard>,
  authorization: string | undefined,
  apiKey: string | undefined,
  address: string,
): Promise<Map<string, Principal>> {
  const reach = new Map<string, Principal>();
  const guarded = backends.filter((backend) => backend.authScheme !== null && guards.has(backend.name));
  const key = presentedKey(authorization, apiKey);
  let candidates: BackendModule[];
  if (key !== undefined) candidates = guarded.filter((backend) => backend.apiKeys);
  else if (authorization === undefined) return reach;
  else {
    // Anything but Basic is a Bearer credential: a bare token is one too (docs/internals/contract.md §4).
    const basic = /^\s*basic(?:\s|$)/i.test(authorization);
    candidates = guarded.filter((backend) => backend.authScheme === (basic ? 'Basic' : 'Bearer'));
    // The backend a token names is asked first: its refusal (expired, revoked) is the one to hear.
    // Read only when there is an order to choose: one backend (an MCP endpoint's) is asked at once.
    if (!basic && candidates.length > 1) {
      const named = namedBackend(authorization);
      candidates.sort((a, b) => Number(b.name === named) - Number(a.name === named));
    }
  }
  let refusal: unknown;
  /** Principals by user directory: Basic credentials checked once for every backend reading the same tables. */
  const directories = new Map<string, Principal | 'refused'>();
  for (const backend of candidates) {
    const guard = guards.get(backend.name)!;
    const directory = key === undefined && backend.authScheme === 'Basic' ? guard.credentials.directory : undefined;
    const known = directory === undefined ? undefined : directories.get(directory);
    if (known === 'refused') continue;
    if (known !== undefined && backend.tenant === undefined) {
      reach.set(backend.name, known);
      continue;
    }
    try {
      const principal = await guard.identify(authorization, '*', address, apiKey);
      if (backend.tenant === undefined || canonicalTenant(backend.tenant.type, principal.tenant) !== undefined) reach.set(backend.name, principal);
      if (directory !== undefined && backend.tenant === undefined) directories.set(directory, principal);
    } catch (error) {
      if (!(error instanceof HttpError) || (error.status !== 401 && error.status !== 403)) throw error;
      refusal ??= error;
      if (directory !== undefined) directories.set(directory, 'refused');
    }
  }
  if (reach.size === 0 && refusal !== undefined) throw refusal;
  return reach;
}

/** The `backend` claim of a token, read without verifying it: only to choose which backend to ask first. */
function namedBackend(authorization: string): string | undefined {
  const token = authorization.replace(/^\s*bearer\s+/i, '').trim();
  const payload = token.split('.')[1];
  if (payload === undefined || payload.length > 8192) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { backend?: unknown };
    return typeof claims.backend === 'string' ? claims.backend : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether a route's rule admits a caller the backend's guard found (undefined: none): a public route anyone, else a
 * caller holding one of its roles (`*`: any). The one reading of a principal that `?for=me` (docs.ts), MCP's
 * tools/list (runtime/mcp/) and the console's list of a user's tools make; the route's guard decides a call itself.
 */
export function admits(access: Access, principal: Principal | undefined): boolean {
  if (access === null) return true;
  if (principal === undefined) return false;
  return access === '*' || access.some((role) => principal.roles.includes(role));
}
