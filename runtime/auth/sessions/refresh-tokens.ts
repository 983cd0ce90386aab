import { createHmac, hkdfSync, type KeyObject, timingSafeEqual } from 'node:crypto';
import { base62, randomBase62 } from '../keys/key-checksum.js';

/**
 * What a refresh token's text is (docs/internals/contract.md §10): `xrr_` + 32 random bytes in base62 (43 characters) + an
 * 11-character base62 tag, the first 64 bits of an HMAC-SHA-256 of what precedes it under a key derived from the
 * server's own (JWT_SECRET), as page cursors' are (runtime/lists/cursor.ts). Only a server of the deployment makes
 * one that passes, so a made-up refresh token is refused before any query, however many are tried: without the
 * tag each one cost a lookup of xmlrest_session (issue 40). Sessions live only where tokens are signed, so every
 * server that answers a refresh holds the key; with rotated keys (JWT_SECRET as `{kid: secret}`) a tag made under
 * any of them passes, the signing one makes new ones.
 *
 * Tokens made before the tag (`xrr_` + 43) are told apart by their length and still taken, through a path that
 * counts each one that opens no session against its client's address as a failed login (sessions.ts), so that
 * forging them is as limited as guessing passwords; they end with their sessions (`session_lifetime`).
 */
export const REFRESH_PREFIX = 'xrr_';
const BODY_LENGTH = 43;
const TAG_LENGTH = 11;
const CURRENT_SHAPE = new RegExp(`^${REFRESH_PREFIX}[0-9A-Za-z]{${BODY_LENGTH + TAG_LENGTH}}$`);
const LEGACY_SHAPE = new RegExp(`^${REFRESH_PREFIX}[0-9A-Za-z]{${BODY_LENGTH}}$`);
/** Either form, by its shape: what OpenAPI says a refresh token looks like. */
export const REFRESH_TOKEN_PATTERN = `^${REFRESH_PREFIX}[0-9A-Za-z]{${BODY_LENGTH}}([0-9A-Za-z]{${TAG_LENGTH}})?$`;

export type RefreshForm = 'current' | 'legacy' | 'malformed';

export class RefreshTokens {
  private readonly keys: Buffer[];

  /** `secrets`: the server's token keys, the signing one first (JwtKey.all). */
  constructor(secrets: readonly KeyObject[]) {
    // A key of its own, derived: a refresh token's tag can never stand for a token's signature or a cursor's tag.
    this.keys = secrets.map((secret) => Buffer.from(hkdfSync('sha256', secret, '', 'xmlrest refresh token 1', 32)));
  }

  /** A new refresh token: given once to its client, stored as its SHA-256 only. */
  make(): string {
    const body = `${REFRESH_PREFIX}${randomBase62()}`;
    return body + tag(this.keys[0]!, body);
  }

  /** What a presented text is, before any query: a token this deployment made, one made before tags, or neither. */
  formOf(token: string): RefreshForm {
    if (CURRENT_SHAPE.test(token)) {
      const body = token.slice(0, -TAG_LENGTH);
      const presented = Buffer.from(token.slice(-TAG_LENGTH));
      // Constant time: the answer's timing must not say how many characters of a guessed tag were right.
      return this.keys.some((key) => timingSafeEqual(Buffer.from(tag(key, body)), presented)) ? 'current' : 'malformed';
    }
    return LEGACY_SHAPE.test(token) ? 'legacy' : 'malformed';
  }
}

function tag(key: Buffer, body: string): string {
  return base62(createHmac('sha256', key).update(body).digest().readBigUInt64BE(0), TAG_LENGTH);
}
