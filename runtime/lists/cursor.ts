import { createHmac, hkdfSync, type KeyObject, timingSafeEqual } from 'node:crypto';

/**
 * A page's cursor (docs/internals/contract.md §11): where the next page starts, as `<payload>.<tag>`, both base64url. The
 * tag is an HMAC-SHA256 of the payload and of what the cursor is bound to (the route, the list's order and key
 * as the module was generated, the caller), under a key derived from the server's own (JWT_SECRET): a cursor
 * changed by one bit, made by anyone else, for another list, user or server, or for this list before its order
 * changed, does not open. Opaque to clients: they send back what they were given.
 */
export class CursorKey {
  /** The key that signs, then every key that verifies (JWT_SECRET's rotation: the first signs, all verify). */
  private readonly keys: readonly Buffer[];

  constructor(secrets: readonly KeyObject[]) {
    // A key of its own, derived: a cursor's tag can never stand for a token's signature, nor the reverse.
    this.keys = secrets.map((secret) => Buffer.from(hkdfSync('sha256', secret, '', 'xmlrest page cursor 1', 32)));
    if (this.keys.length === 0) throw new Error('a cursor key needs a secret');
  }

  sign(payload: string, binding: string): string {
    const body = Buffer.from(payload, 'utf8').toString('base64url');
    return `${body}.${tag(this.keys[0]!, body, binding).toString('base64url')}`;
  }

  /** The payload of a cursor this server signed for `binding`, or undefined. */
  open(cursor: string, binding: string): string | undefined {
    const dot = cursor.indexOf('.');
    if (dot <= 0) return undefined;
    const body = cursor.slice(0, dot);
    const given = Buffer.from(cursor.slice(dot + 1), 'base64url');
    if (given.length !== 32 || given.toString('base64url') !== cursor.slice(dot + 1)) return undefined;
    // Compared in constant time, against each key of a rotation, all of them, so that the time says nothing either.
    let valid = false;
    for (const key of this.keys) valid = timingSafeEqual(tag(key, body, binding), given) || valid;
    return valid ? Buffer.from(body, 'base64url').toString('utf8') : undefined;
  }
}

function tag(key: Buffer, body: string, binding: string): Buffer {
  // One update: each one costs a call into the native hash (this is on every page's path).
  return createHmac('sha256', key).update(`${binding}\0${body}`).digest();
}
