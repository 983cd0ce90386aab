import type { BackendModule, ClaimPath, IssuerSettings } from '../../contract.js';
import { canonicalTenant } from '../../tenants/canonical.js';
import { isCanonicalUid } from '../scheme.js';

/**
 * Roles and the user id from an outside issuer's claims (docs/internals/contract.md §9):
 * each provider puts them somewhere else (Keycloak `realm_access.roles`,
 * Entra ID `roles`, Auth0 a URI-named claim, Okta `groups`), in one of four
 * shapes. Only the payload's own members are read, never its prototype's.
 */

/** The value at a claim path, or undefined. */
export function claimAt(payload: unknown, path: ClaimPath): unknown {
  let value: unknown = payload;
  for (const name of path) {
    if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, name)) return undefined;
    value = (value as Record<string, unknown>)[name];
  }
  return value;
}

/** The provider's role names, as `role_format` says they are held; a claim of another shape holds none. */
export function providerRoles(payload: unknown, roles: IssuerSettings['roles']): string[] {
  const value = claimAt(payload, roles.path);
  let names: unknown;
  switch (roles.format) {
    case 'array':
      names = value;
      break;
    case 'space':
      names = typeof value === 'string' ? value.split(/\s+/) : undefined;
      break;
    case 'comma':
      names = typeof value === 'string' ? value.split(',').map((name) => name.trim()) : undefined;
      break;
    case 'json':
      try {
        names = typeof value === 'string' ? JSON.parse(value) : undefined;
      } catch {
        names = undefined;
      }
      break;
  }
  if (!Array.isArray(names)) return [];
  return names.filter((name): name is string => typeof name === 'string' && name !== '');
}

/**
 * Our roles for a token: each provider role its `Role` elements map, as what
 * they map it to; every other one unchanged, unless `map_only`, or unless it
 * is the backend's console role: the console, which manages the backend's own
 * users, opens to an outside user only through a `Role` that says so, never
 * because a provider happens to have a role of that name.
 */
export function rolesOf(payload: unknown, issuer: IssuerSettings, consoleRole: string): string[] {
  const roles = new Set<string>();
  for (const name of providerRoles(payload, issuer.roles)) {
    let mapped = false;
    for (const mapping of issuer.roleMap) {
      if (mapping.from !== name) continue;
      roles.add(mapping.to);
      mapped = true;
    }
    if (!mapped && !issuer.mapOnly && name !== consoleRole) roles.add(name);
  }
  return [...roles];
}

/**
 * On a tenant backend (docs/internals/contract.md §14), the tenant an outside issuer's token names: the claim at the
 * issuer's `tenant` path, canonical for the backend's tenant type; undefined when the issuer names no claim, the
 * token lacks it, or its value is not a tenant of the type (a caller with none is refused, 403 `no_tenant`).
 */
export function tenantOf(payload: unknown, issuer: IssuerSettings, backend: Pick<BackendModule, 'tenant'>): string | undefined {
  if (backend.tenant === undefined || issuer.tenant === undefined) return undefined;
  return canonicalTenant(backend.tenant.type, claimAt(payload, issuer.tenant));
}

/** The text of a claim that can be a user id or a query's value: a string, or a whole number; else undefined. */
export function claimText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  return undefined;
}

/**
 * Claims that name a user only once the provider has verified them (OpenID Connect Core §5.1): until then the
 * user typed them, and anyone may type another's address.
 */
const VERIFIED_BY: Readonly<Record<string, string>> = { email: 'email_verified', phone_number: 'phone_number_verified' };

/** The top-level claims a token's user id is read from: the `user` claim, or those its UserQuery binds. */
function identityClaims(issuer: IssuerSettings): readonly string[] {
  if (issuer.userQuery !== null) return issuer.userQuery.binds;
  return issuer.user.length === 1 ? issuer.user : [];
}

/** False when the user id would come from `email` (or `phone_number`) that the token does not say is verified. */
function verifiedAsUsed(payload: Record<string, unknown>, issuer: IssuerSettings): boolean {
  return identityClaims(issuer).every((claim) => !Object.hasOwn(VERIFIED_BY, claim) || payload[VERIFIED_BY[claim]!] === true);
}

/** Runs a UserQuery: its rows, of which the first's `user_id` is the local user. */
export type SelectUsers = (sql: string, values: readonly string[]) => Promise<{ user_id?: unknown }[]>;

/**
 * `$uid` for a token's claims: the `user` claim, or the `user_id` an issuer's UserQuery finds for them (a claim
 * it binds that is not text or a whole number never reaches SQL); undefined when there is no user id of the
 * backend's type. The server and `xmlrest explain --claims` both ask here.
 */
export async function userIdOf(
  payload: Record<string, unknown>,
  issuer: IssuerSettings,
  uidType: BackendModule['uidType'],
  select: SelectUsers,
): Promise<string | undefined> {
  if (!verifiedAsUsed(payload, issuer)) return undefined;
  let uid: string | undefined;
  if (issuer.userQuery === null) {
    uid = claimText(claimAt(payload, issuer.user));
  } else {
    const values = issuer.userQuery.binds.map((name) => claimText(Object.hasOwn(payload, name) ? payload[name] : undefined));
    if (values.every((value) => value !== undefined)) {
      const [row] = await select(issuer.userQuery.sql, values as string[]);
      uid = row === undefined ? undefined : claimText(typeof row.user_id === 'bigint' ? String(row.user_id) : row.user_id);
    }
  }
  return uid !== undefined && isCanonicalUid(uidType, uid) ? uid : undefined;
}
