import { createHash, timingSafeEqual } from 'node:crypto';
import { type Algorithm, hash, verify } from '@node-rs/argon2';

/**
 * Passwords as xmlrest stores them: argon2id with OWASP's parameters
 * (19 MiB, 2 passes, 1 lane). Rows written before xmlrest hashed them hold
 * plain text; those compare in constant time, and can be upgraded to a hash
 * on the next successful login.
 */
// 2 is Algorithm.Argon2id, a const enum that isolated modules cannot read.
const OPTIONS = { algorithm: 2 as Algorithm, memoryCost: 19_456, timeCost: 2, parallelism: 1 };

export function hashPassword(password: string): Promise<string> {
  return hash(password, OPTIONS);
}

export function isPasswordHash(stored: string): boolean {
  return stored.startsWith('$argon2');
}

/** A hash of nothing anyone knows: checked when a user does not exist, so that the answer takes as long. */
let decoy: Promise<string> | undefined;

export interface PasswordCheck {
  ok: boolean;
  /** The stored value was plain text (and should be upgraded). */
  plain: boolean;
}

/** Spends what one argon2id check costs, so that no answer comes back faster than a real check. */
async function decoyCheck(supplied: string): Promise<void> {
  decoy ??= hashPassword(`decoy-${Math.random()}`);
  await verify(await decoy, supplied).catch(() => false);
}

/**
 * A stored value beginning with `!` is a locked account (as `passwd -l` does):
 * the console's "disable" puts it in front of the hash, "enable" takes it off.
 */
export const LOCKED = '!';

export async function checkPassword(stored: unknown, supplied: string): Promise<PasswordCheck> {
  if (typeof stored !== 'string' || stored === '' || stored.startsWith(LOCKED)) {
    await decoyCheck(supplied);
    return { ok: false, plain: false };
  }
  if (isPasswordHash(stored)) return { ok: await verify(stored, supplied).catch(() => false), plain: false };
  // A plain-text row compares in microseconds: without the decoy, timing would tell which users exist.
  await decoyCheck(supplied);
  // Digests of equal length, so that neither the length nor the first differing byte shows in the time taken.
  const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();
  return { ok: timingSafeEqual(digest(stored), digest(supplied)), plain: true };
}
