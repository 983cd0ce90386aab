import { createHmac } from 'node:crypto';

/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com, "Signature
 * scheme"): HMAC-SHA256 over `{webhook-id}.{webhook-timestamp}.{body}`, sent
 * as `v1,<base64>`. A secret is `whsec_` and the base64 of 24 to 64 random
 * bytes, the form the specification shows consumers; an environment variable
 * may hold several, separated by spaces, while a secret is rotated: every one
 * signs, and the receiver accepts any signature it can verify.
 */

/** How to make a secret, said wherever one is missing or malformed. */
export const MAKE_A_WEBHOOK_SECRET = `node -e "console.log('whsec_' + require('node:crypto').randomBytes(32).toString('base64'))"`;

const SECRET = /^whsec_([A-Za-z0-9+/]+={0,2})$/;
/** The specification's bounds on a symmetric secret: at least 24 bytes, at most 64 (512 bits). */
const MIN_BYTES = 24;
const MAX_BYTES = 64;

/**
 * The keys an environment variable's value holds, or why it holds none. The
 * reason never quotes the value: it is a secret, even when malformed.
 */
export function parseWebhookSecrets(value: string | undefined): { keys: Buffer[] } | { problem: string } {
  if (value === undefined || value.trim() === '') return { problem: 'is not set' };
  const keys: Buffer[] = [];
  for (const [index, word] of value.trim().split(/\s+/).entries()) {
    const which = value.trim().includes(' ') ? `its secret number ${index + 1}` : 'it';
    const match = SECRET.exec(word);
    if (!match) return { problem: `is not a Standard Webhooks secret: ${which} should be whsec_ followed by base64` };
    const key = Buffer.from(match[1]!, 'base64');
    // Buffer's decoder skips what is not base64; a secret must say exactly its bytes.
    if (key.toString('base64') !== match[1]) return { problem: `is not a Standard Webhooks secret: ${which} is not canonical base64 after whsec_` };
    if (key.length < MIN_BYTES || key.length > MAX_BYTES)
      return { problem: `is not a Standard Webhooks secret: ${which} holds ${key.length} bytes, not ${MIN_BYTES} to ${MAX_BYTES}` };
    keys.push(key);
  }
  return { keys };
}

/** The `webhook-signature` header: one `v1,<base64 HMAC-SHA256>` per key, separated by spaces. */
export function signature(keys: readonly Buffer[], id: string, timestamp: number, body: string): string {
  return keys.map((key) => `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64')}`).join(' ');
}
