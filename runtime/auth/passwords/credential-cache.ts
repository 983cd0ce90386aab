import { SecretDigest } from '../digest.js';

/**
 * Verdicts of password checks, remembered for a short time so that HTTP
 * Basic, which sends the password on every request, does not pay for an
 * argon2id check (tens of milliseconds of a core) each time. One instance
 * per server, handed to the credential checks of every backend.
 *
 * An entry says one thing only: "this password is right for this stored
 * value", as proved by a client at this address (its group, address.ts). The
 * address is part of it because a remembered verdict is let through before
 * the login limits (a client that proved its password is not refused for
 * what others did from its address): from anywhere else, a password is
 * checked, and counted, again, so that the limits stop an attacker whose
 * guess happens to be a password someone else proved. It holds no user id and no role: every login still runs the auth
 * query, so the roles, the user's existence and the stored value itself come
 * from the database each time. A changed stored value (a new password, a
 * lock, which prefixes it) never meets an entry made for the old one, and a
 * role revoked by anyone, by any means, shows in the very next login. Nothing
 * needs forgetting, on this server or any other.
 *
 * - Keys are an HMAC of the length-framed address, stored value and password (keys.ts)
 *   under a key made at start-up: the cache holds no password, and every key
 *   has the same small size.
 * - Entries are bounded in number; the oldest goes first.
 */
export interface Verdict {
  /** The stored value was plain text (a row from before xmlrest hashed passwords). */
  plain: boolean;
}

/**
 * A user's tenant as read at a password's check (undefined: none), and when that read began (ms). `source` is the
 * query it was read with (TenantSettings.userQuery): the cache is the server's, shared by every backend on the same
 * user tables, and two tenant backends may read a user's tenant from different columns: a tenant is remembered for
 * the query that read it, never answered for another's.
 */
export interface RememberedTenant {
  source: string;
  user: string;
  tenant: string | undefined;
  readAt: number;
}

export class CredentialCache {
  private readonly digest = new SecretDigest();
  private readonly entries = new Map<string, { plain: boolean; expiresAt: number; tenants?: RememberedTenant[] }>();
  /** Checks under way, by the same key: at most one per client, stored value and password at any time. */
  private readonly running = new Map<string, Promise<Verdict & { ok: boolean }>>();

  constructor(private readonly capacity = 10_000) {}

  /** The remembered verdict that `supplied` is right for `stored`, proved from `client` (an address group), or undefined. */
  verdict(client: string, stored: string, supplied: string): Verdict | undefined {
    const key = this.digest.of(client, stored, supplied);
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt > Date.now()) return { plain: entry.plain };
    this.entries.delete(key);
    return undefined;
  }

  /** Remembers that `supplied` is right for `stored`, proved from `client`, for `seconds` (0 remembers nothing). */
  remember(client: string, stored: string, supplied: string, verdict: Verdict, seconds: number): void {
    if (seconds <= 0) return;
    const key = this.digest.of(client, stored, supplied);
    this.entries.delete(key);
    if (this.entries.size >= this.capacity) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { plain: verdict.plain, expiresAt: Date.now() + seconds * 1000 });
  }

  /**
   * Runs `check` for `supplied` against `stored` from `client`, unless the same check is under way: then its
   * answer is shared. A client that opens many connections at once with the same credentials (a pool of
   * workers, a page's parallel requests) costs one argon2id computation, not one each, which the bounded
   * hashing (hashing.ts) would otherwise turn into 503s until the first verdict is remembered.
   */
  once(client: string, stored: string, supplied: string, check: () => Promise<Verdict & { ok: boolean }>): Promise<Verdict & { ok: boolean }> {
    const key = this.digest.of(client, stored, supplied);
    const under = this.running.get(key);
    if (under !== undefined) return under;
    const started = check().finally(() => this.running.delete(key));
    this.running.set(key, started);
    return started;
  }

  /**
   * On a tenant backend (docs/internals/contract.md §14): the tenant remembered with the verdict that `supplied` is
   * right for `stored` from `client`, for `user`, so that a remembered password answers its tenant without a query.
   * Undefined when there is no such verdict or it holds no tenant of this user's yet.
   */
  tenant(client: string, stored: string, supplied: string, user: string, source: string): RememberedTenant | undefined {
    const entry = this.entries.get(this.digest.of(client, stored, supplied));
    if (entry === undefined || entry.expiresAt <= Date.now()) return undefined;
    return entry.tenants?.find((tenant) => tenant.source === source && tenant.user === user);
  }

  /** Keeps `tenant` with the verdict remembered for these credentials, if there is one (it ends with it), beside other sources' (a few at most: one a tenant backend). */
  rememberTenant(client: string, stored: string, supplied: string, tenant: RememberedTenant): void {
    const entry = this.entries.get(this.digest.of(client, stored, supplied));
    if (entry === undefined) return;
    entry.tenants = [...(entry.tenants ?? []).filter((known) => known.source !== tenant.source).slice(-7), tenant];
  }

  get size(): number {
    return this.entries.size;
  }
}
