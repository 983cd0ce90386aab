import { SecretDigest } from './keys.js';

/**
 * Successful password checks, remembered for a short time so that HTTP Basic,
 * which sends the password on every request, does not pay for an argon2id
 * check (tens of milliseconds) and a query each time. One instance per
 * server, handed to the authenticators of every backend.
 *
 * - Keys are an HMAC of the length-framed parts (keys.ts) under a key made at
 *   start-up: no crafted name or password can meet another's entry, the cache
 *   holds no password, and every key has the same small size.
 * - Entries are bounded in number; the oldest goes first.
 * - Each entry names its owner (the user id the check found), so that a
 *   change of that user's roles or password forgets it (`forget`), and a
 *   check that was running when something was forgotten is not remembered.
 */
export interface RememberOptions {
  /** The user id the entry belongs to; `forget(owner)` drops it. */
  owner: string;
  seconds: number;
  /** `mark()` taken before the check began. */
  mark: number;
}

export class CredentialCache {
  private readonly digest = new SecretDigest();
  private readonly entries = new Map<string, { owner: string; value: unknown; expiresAt: number }>();
  private forgotten = 0;

  constructor(private readonly capacity = 10_000) {}

  get<T>(parts: readonly string[]): T | undefined {
    const key = this.digest.of(...parts);
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt > Date.now()) return entry.value as T;
    this.entries.delete(key);
    return undefined;
  }

  /** Taken before a check: what it read is not remembered if anything was forgotten meanwhile. */
  mark(): number {
    return this.forgotten;
  }

  set(parts: readonly string[], value: unknown, options: RememberOptions): void {
    if (options.seconds <= 0 || options.mark !== this.forgotten) return;
    const key = this.digest.of(...parts);
    this.entries.delete(key);
    if (this.entries.size >= this.capacity) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { owner: options.owner, value, expiresAt: Date.now() + options.seconds * 1000 });
  }

  /** Drops what is remembered of one user id, or of everyone. */
  forget(owner?: string): void {
    this.forgotten++;
    if (owner === undefined) {
      this.entries.clear();
      return;
    }
    for (const [key, entry] of this.entries) if (entry.owner === owner) this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }
}
