import type { TenantSettings } from '../contract.js';

/** The largest unsigned 64-bit integer: an integer tenant is at most this (MariaDB's `bigint unsigned`). */
const MAX_INTEGER = 18446744073709551615n;

/**
 * The canonical text of a tenant (docs/internals/contract.md §14), what `$tenant` binds, or undefined when `value` is
 * none of the tenant type's: an integer is `^(0|[1-9][0-9]*)$` within unsigned 64 bits (from text, a whole number, or
 * a bigint as the driver reads a `bigint` column), a text tenant a non-empty string of at most 255 characters that does
 * not end in a space.
 * Nothing else is a tenant: a caller whose value is not one is refused (403 `no_tenant`), never served as "any".
 */
export function canonicalTenant(type: TenantSettings['type'], value: unknown): string | undefined {
  // A trailing space is no tenant's: PAD SPACE collations (utf8mb4_bin among them) compare 'acme ' equal to 'acme'.
  if (type === 'text') return typeof value === 'string' && value !== '' && !value.endsWith(' ') && [...value].length <= 255 ? value : undefined;
  let text: string;
  if (typeof value === 'bigint') text = value.toString();
  else if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) return undefined;
    text = String(value);
  } else if (typeof value === 'string') text = value;
  else return undefined;
  if (!/^(?:0|[1-9][0-9]{0,19})$/.test(text)) return undefined;
  return BigInt(text) <= MAX_INTEGER ? text : undefined;
}
