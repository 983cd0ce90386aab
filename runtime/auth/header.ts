import { MAX_AUTHORIZATION_BYTES } from './bounds.js';

/**
 * Parses an Authorization header value (docs/internals/contract.md §4). Pure: no I/O, no
 * knowledge of backends. Returns undefined for anything malformed, so that the
 * caller answers 401 without saying more than "malformed".
 */
export type Credentials = { scheme: 'basic'; user: string; pass: string } | { scheme: 'bearer'; token: string };

/** base64 (standard alphabet), with or without `=` padding (docs/internals/seed.md §5.2 rule 4). */
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
/** Three base64url segments: what a JWS compact serialisation looks like. */
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

export function parseAuthorization(header: string): Credentials | undefined {
  // Refused before any decoding: a header is latin-1 text, one byte per character.
  if (header.length > MAX_AUTHORIZATION_BYTES) return undefined;
  const value = header.trim();
  const space = value.indexOf(' ');
  if (space === -1) {
    // The seed's examples send the bare token with no scheme word.
    return JWT_SHAPE.test(value) ? { scheme: 'bearer', token: value } : undefined;
  }
  const scheme = value.slice(0, space).toLowerCase();
  const rest = value.slice(space + 1).trim();
  if (scheme === 'bearer') return JWT_SHAPE.test(rest) ? { scheme: 'bearer', token: rest } : undefined;
  if (scheme === 'basic') return parseBasic(rest);
  return undefined;
}

function parseBasic(encoded: string): Credentials | undefined {
  if (encoded.length === 0 || !BASE64.test(encoded)) return undefined;
  const unpadded = encoded.replace(/=+$/, '');
  // A length of 1 mod 4 cannot come from any byte string.
  if (unpadded.length % 4 === 1) return undefined;
  let text: string;
  try {
    text = utf8.decode(Buffer.from(unpadded, 'base64'));
  } catch {
    return undefined;
  }
  // RFC 7617: the user-id cannot contain a colon, the password can.
  const colon = text.indexOf(':');
  if (colon === -1) return undefined;
  return { scheme: 'basic', user: text.slice(0, colon), pass: text.slice(colon + 1) };
}
