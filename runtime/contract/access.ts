/** Who may call a protected operation: a holder of any of these roles, or (`'*'`) any authenticated caller. */
export type Roles = '*' | readonly string[];

/** Who may call an operation (docs/internals/contract.md §8): anyone (`null`, a public method), or `Roles`. */
export type Access = Roles | null;

/** A role name: the generator's identifiers (letters, digits and _ . : -), at most 64 like the role column. */
export const ROLE_NAME = /^[A-Za-z0-9_.:-]{1,64}$/;

export type AuthCheck = { ok: true; access: Access } | { ok: false; message: string };

/**
 * An `auth` value (docs/internals/contract.md §8), checked the same way at every door
 * that reads or writes one: the generator reading a resource file, the
 * console, `xmlrest resource auth`. Role names separated by white space
 * (any one of them admits; a name given twice counts once), or `*` alone
 * (any authenticated caller); on a Request, and there only, exactly `""`
 * makes the method public. A value with no role name in it (`" "`, or `""`
 * on a Resource) is a mistake, never "public": a resource is public by
 * having no `auth` at all.
 */
export function parseAuth(value: string, on: 'Resource' | 'Request'): AuthCheck {
  if (value === '' && on === 'Request') return { ok: true, access: null };
  const words = value.split(/\s+/).filter((word) => word !== '');
  if (words.length === 0) return { ok: false, message: 'auth holds no role name' };
  if (words.includes('*')) {
    if (words.length === 1) return { ok: true, access: '*' };
    return { ok: false, message: `auth is * alone (any authenticated caller) or role names, not both: "${value}"` };
  }
  if (!words.every((word) => ROLE_NAME.test(word))) {
    return { ok: false, message: `auth is role names (letters, digits, _ . : -) separated by spaces, or *, not "${value}"` };
  }
  return { ok: true, access: [...new Set(words)] };
}

/** The `auth` text of an access, as a file is written with it: the roles separated by one space, `*`, or `""` (a public Request). */
export function authText(access: Access): string {
  return access === null ? '' : access === '*' ? '*' : access.join(' ');
}
