import { ROLE_NAME } from '../runtime/contract.js';

/**
 * Names of new users and roles, from the console or the CLI. A name is
 * NFC-normalised, so that "é" typed as one character or as "e" and a
 * combining accent is one name, and may not hold characters that show as
 * nothing or as something else: controls, zero-width and other format
 * characters, bidirectional overrides and isolates, lone surrogates. Two
 * accounts that look the same on every screen cannot then both exist.
 */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\u115F\u1160\u3164\uFFA0]|\u034F|[\u180B-\u180F]|[\uFE00-\uFE0F]|^\s|\s$/u;

/** The normalised name, or an error message saying why it is not one. */
export type NameCheck = { ok: true; name: string } | { ok: false; message: string };

/**
 * User names beginning so are `xmlrest verify-access`'s temporary users (scripts/cli/verify-access.ts), which it removes
 * after a run and, left by a run that was killed, an hour later: no account of anyone else's may be given one.
 */
export const RESERVED_USER_PREFIX = 'xmlrest-verify-';

export function checkUserName(value: unknown): NameCheck {
  if (typeof value !== 'string') return { ok: false, message: 'A user needs a name' };
  const name = value.normalize('NFC');
  if (name === '') return { ok: false, message: 'A user needs a name' };
  if (name.toLowerCase().startsWith(RESERVED_USER_PREFIX)) {
    return { ok: false, message: `A user name may not begin ${RESERVED_USER_PREFIX}: those are xmlrest verify-access's temporary users, which it removes` };
  }
  if ([...name].length > 190 || Buffer.byteLength(name, 'utf8') > 255) return { ok: false, message: 'A user name has at most 190 characters (255 bytes)' };
  if (INVISIBLE.test(name))
    return { ok: false, message: 'A user name may not hold control, zero-width or bidirectional characters, nor begin or end with a space' };
  return { ok: true, name };
}

/** Role names stay the generator's identifiers (ROLE_NAME: letters, digits and _ . : -), which NFC leaves as they are. */

export function checkRoleName(value: unknown): NameCheck {
  if (typeof value !== 'string') return { ok: false, message: 'A role needs a name' };
  const name = value.normalize('NFC');
  if (!ROLE_NAME.test(name)) return { ok: false, message: 'A role name is letters, digits and _ . : - (at most 64)' };
  return { ok: true, name };
}
