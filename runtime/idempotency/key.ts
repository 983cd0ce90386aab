// What identifies an idempotency record and what a retry must repeat to be answered from it (docs/internals/contract.md
// §15): pure functions, apart from the table's statements (table.ts) and the transaction's part (index.ts).
import { createHash } from 'node:crypto';
import { IDEMPOTENCY_KEY_MAX_LENGTH } from '../contract/safe-writes.js';
import { HttpError } from '../errors.js';

/** 1 to IDEMPOTENCY_KEY_MAX_LENGTH printable ASCII characters (0x21-0x7E): no space, no control, nothing beyond ASCII. */
const KEY_TEXT = new RegExp(`^[\\x21-\\x7e]{1,${IDEMPOTENCY_KEY_MAX_LENGTH}}$`);

/**
 * A POST's Idempotency-Key, checked: undefined when none was sent (400 when the route requires one), 400 when it is
 * not 1-255 printable ASCII characters. Node joins a repeated header with `, `, which has a space: refused too.
 */
export function idempotencyKeyOf(header: string | string[] | undefined, required: boolean): string | undefined {
  if (header === undefined) {
    if (required) throw new HttpError(400, 'This request requires an Idempotency-Key header', {}, 'idempotency_key_required');
    return undefined;
  }
  if (typeof header !== 'string' || !KEY_TEXT.test(header)) {
    throw new HttpError(400, `Idempotency-Key must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} printable ASCII characters`, {}, 'bad_idempotency_key');
  }
  return header;
}

/**
 * Who a record belongs to: the user with their issuer (`ctx.state.userId` after the guard), an API key by its id, or
 * `public` on a public method. Prefixed, so that no user id reads as a key's or as `public`.
 */
export function callerOf(state: { userId?: unknown; keyId?: unknown }): string {
  if (state.keyId !== undefined) return `k:${String(state.keyId)}`;
  if (state.userId !== undefined) return `u:${String(state.userId)}`;
  return 'public';
}

/**
 * SHA-256 of several texts, each framed by its length in bytes (four bytes, big-endian) before its UTF-8 bytes:
 * no two lists of texts give the same input, whatever characters the texts hold (`a|b` + `c` and `a` + `b|c` differ).
 */
export function framedDigest(parts: readonly string[]): Buffer {
  const hash = createHash('sha256');
  const length = Buffer.alloc(4);
  for (const part of parts) {
    const bytes = Buffer.from(part, 'utf8');
    length.writeUInt32BE(bytes.length);
    hash.update(length).update(bytes);
  }
  return hash.digest();
}

/** The record's primary key: backend, caller and key. Neither the key nor the caller is stored in the clear. */
export function recordId(backend: string, caller: string, key: string): Buffer {
  return framedDigest(['xmlrest idempotency record', backend, caller, key]);
}

/**
 * What a retry must repeat to be answered from the record: the method, the route's path (as registered, so that a
 * loose spelling of it is the same request), the query string and the parsed body in canonical text.
 */
export function fingerprint(method: string, route: string, query: string, body: unknown): Buffer {
  return framedDigest(['xmlrest idempotency fingerprint', method, route, query, canonicalText(body)]);
}

/**
 * A parsed body as text that does not depend on the order of its members: JSON with every object's keys sorted
 * (`{"b":1,"a":2}` and `{"a":2,"b":1}` are one request). No body at all is the empty text, apart from every JSON value.
 */
export function canonicalText(value: unknown): string {
  return value === undefined ? '' : canonical(value, 0);
}

/**
 * Deepest nesting a fingerprinted body may have: JSON.parse takes a 1 MB body of brackets 500,000 deep, which this
 * recursion would answer with a stack overflow (500). No parameter is nested at all; a batch's values a few levels.
 */
const MAX_DEPTH = 256;

/** Written out by hand rather than through an object with sorted keys: a member named `__proto__` stays a member. */
function canonical(value: unknown, depth: number): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (depth >= MAX_DEPTH) throw new HttpError(400, `The body is nested deeper than ${MAX_DEPTH} levels`);
  if (Array.isArray(value)) return `[${value.map((item) => canonical(item, depth + 1)).join(',')}]`;
  const record = value as Record<string, unknown>;
  return `{${Object.keys(record)
    .sort()
    .map((name) => `${JSON.stringify(name)}:${canonical(record[name], depth + 1)}`)
    .join(',')}}`;
}
