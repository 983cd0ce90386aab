import { createHash, createHmac, type Hash, type Hmac, randomBytes } from 'node:crypto';

/**
 * Keys for what is remembered per user, password or address (the credential
 * cache, the failed-login counters): a digest of the parts, each framed by
 * its length, so that no user name or password, NUL or separator included,
 * can move a boundary and collide with another part list. Fixed size, so
 * that an over-long input costs no more memory than a short one.
 */
function framed<T extends Hash | Hmac>(hash: T, parts: readonly string[]): T {
  const length = Buffer.alloc(4);
  for (const part of parts) {
    // UTF-16 code units, not UTF-8: a lone surrogate would encode as U+FFFD and equal another text.
    const bytes = Buffer.from(part, 'utf16le');
    length.writeUInt32BE(bytes.length);
    hash.update(length).update(bytes);
  }
  return hash;
}

/** SHA-256 of the framed parts: the same in every process (counters shared in the database). */
export function digestKey(...parts: string[]): string {
  return framed(createHash('sha256'), parts).digest('base64url');
}

/** HMAC-SHA-256 under a key made at start-up: for keys that hold a password, which no dump of memory should reveal. */
export class SecretDigest {
  private readonly key: Buffer;

  constructor(key: Buffer = randomBytes(32)) {
    this.key = key;
  }

  of(...parts: string[]): string {
    return framed(createHmac('sha256', this.key), parts).digest('base64url');
  }
}
