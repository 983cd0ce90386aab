import { parseAuth, parseRateLimit, type RateLimit } from '../../runtime/contract.js';
import type { Diagnostics } from '../diagnostics.js';
import type { Access, Backend } from '../ir.js';
import type { RawAttribute } from './elements.js';

/**
 * An `auth` attribute, by the one rule every door uses (`parseAuth`,
 * docs/internals/contract.md §8). Undefined when the attribute is wrong (the
 * diagnostic says why, and how to write what was likely meant).
 */
export function readAccess(attribute: RawAttribute, on: 'Resource' | 'Request', backend: Backend, diagnostics: Diagnostics): Access | undefined {
  const checked = parseAuth(attribute.value, on);
  if (!checked.ok) {
    const empty = attribute.value.trim() === '';
    const hint = !empty ? '' : on === 'Resource' ? ': leave auth out for a public resource' : ': write auth="" for a public method';
    diagnostics.error(attribute.at, checked.message + hint);
    return undefined;
  }
  if (checked.access !== null && backend.authScheme === null) {
    diagnostics.error(
      attribute.at,
      `${on === 'Resource' ? 'resource' : 'request'} is protected but backend "${backend.name}" has no auth_scheme: add resources/${backend.name}/backend.xml with auth_scheme="Basic" or "Bearer"`,
    );
    return undefined;
  }
  return checked.access;
}

/** The line of access.lock an access is written as: `public`, `*`, or the roles sorted. */
export function accessText(access: Access): string {
  if (access === null) return 'public';
  if (access === '*') return '*';
  return [...access].sort().join(' ');
}

/** A `rate_limit` attribute (docs/internals/contract.md §10): `<n>/<s|m|h>`; null when it is wrong (the diagnostic says why). */
export function readRateLimit(attribute: RawAttribute, diagnostics: Diagnostics): RateLimit | null {
  const rate = parseRateLimit(attribute.value);
  if (rate === undefined) diagnostics.error(attribute.at, `rate_limit is <calls>/<s|m|h>, such as 100/m, not "${attribute.value}"`);
  return rate ?? null;
}
