/**
 * The longest credentials xmlrest reads (docs/guides/passwords-and-limits.md, "Limits on credentials"). Longer ones are
 * refused before any database query or password hash: an argon2id check or a
 * lookup of a 100 KB name costs the server, never the attacker.
 */
export const MAX_USER_BYTES = 255;
export const MAX_PASSWORD_BYTES = 1024;
/** An Authorization header value: a Basic pair at the limits, or any token xmlrest issues, fits easily. */
export const MAX_AUTHORIZATION_BYTES = 8192;

/** In a `u` pattern a surrogate pair is one code point: only a lone one is of category Cs. */
const LONE_SURROGATE = /\p{Cs}/u;

/** Why a user name or password cannot be a credential, or undefined when it can. */
export function credentialProblem(field: 'user' | 'password', value: string): string | undefined {
  const max = field === 'user' ? MAX_USER_BYTES : MAX_PASSWORD_BYTES;
  // A UTF-16 code unit is at most 3 bytes of UTF-8: short values are decided without counting.
  if (value.length * 3 > max && Buffer.byteLength(value, 'utf8') > max) return `longer than ${max} bytes`;
  // A lone surrogate has no UTF-8 form: two different values would reach the database as the same one.
  if (LONE_SURROGATE.test(value)) return 'not well-formed Unicode';
  return undefined;
}
