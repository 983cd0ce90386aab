import { createHmac, hash, randomBytes } from 'node:crypto';

/**
 * Keys for what is remembered per user, password or address (the credential
 * cache, the failed-login counters): a digest of the parts, each framed by
 * its length, so that no user name or password, NUL or separator included,
 * can move a boundary and collide with another part list. Fixed size, so
 * that an over-long input costs no more memory than a short one.
 */
function framed(parts: readonly string[]): Buffer {
  // `<length>:<part>` for each part: the digits end at the colon, and the length says where the part ends.
  let text = '';
  for (const part of parts) text += `${part.length}:${part}`;
  // UTF-16 code units, not UTF-8: a lone surrogate would encode as U+FFFD and equal another text.
  return Buffer.from(text, 'utf16le');
}

/** SHA-256 of the framed parts: the same in every process (counters shared in the database). */
export function digestKey(...parts: string[]): string {
  return hash('sha256', framed(parts), 'base64url');
}

/** HMAC-SHA-256 under a key made at start-up: for keys that hold a password, which no dump of memory should reveal. */
export class SecretDigest {
  private readonly key: Buffer;

  constructor(key: Buffer = randomBytes(32)) {
    this.key = key;
  }

  of(...parts: string[]): string {
    return createHmac('sha256', this.key).update(framed(parts)).digest('base64url');
  }
}
