import type { Diagnostics } from '../diagnostics.js';
import type { Access, Backend } from '../ir.js';
import { type RawAttribute, ROLE } from './elements.js';

/**
 * An `auth` attribute (docs/contract.md §8): role names separated by spaces,
 * any one of which admits; `*`, any authenticated caller; or, on a Request
 * only, `""`, a public method. Undefined when the attribute is wrong (the
 * diagnostic says why).
 */
export function readAccess(attribute: RawAttribute, on: 'Resource' | 'Request', backend: Backend, diagnostics: Diagnostics): Access | undefined {
  const value = attribute.value.trim();
  if (value === '') {
    if (on === 'Request') return null;
    diagnostics.error(attribute.at, 'auth on Resource names one or more roles, or *: leave it out for a public resource');
    return undefined;
  }
  const words = [...new Set(value.split(/\s+/))];
  let access: Access;
  if (value === '*') access = '*';
  else if (words.includes('*')) {
    diagnostics.error(attribute.at, `auth is * alone (any authenticated caller) or role names, not both: "${value}"`);
    return undefined;
  } else {
    const bad = words.find((word) => !ROLE.test(word));
    if (bad !== undefined) {
      diagnostics.error(attribute.at, `auth is role names (letters, digits, _ . : -) separated by spaces, or *, not "${value}"`);
      return undefined;
    }
    access = words;
  }
  if (backend.authScheme === null) {
    diagnostics.error(
      attribute.at,
      `${on === 'Resource' ? 'resource' : 'request'} is protected but backend "${backend.name}" has no auth_scheme: add resources/${backend.name}/backend.xml with auth_scheme="Basic" or "Bearer"`,
    );
    return undefined;
  }
  return access;
}

/** The line of access.lock an access is written as: `public`, `*`, or the roles sorted. */
export function accessText(access: Access): string {
  if (access === null) return 'public';
  if (access === '*') return '*';
  return [...access].sort().join(' ');
}
