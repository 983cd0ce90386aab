import type { AuthQuery, BackendModule } from '../../contract.js';
import { errnoOf, NO_COLUMN, type Queryable, type SqlValue } from '../../db/index.js';
import { readUserTenant } from '../../tenants/user-tenant.js';
import { credentialProblem } from '../bounds.js';
import { addressGroup } from '../limits/address.js';
import type { LoginAttempt, LoginLimiter } from '../limits/limiter.js';
import { withinLimits } from '../limits/within.js';
import type { Revocations } from '../tokens/revocations.js';
import { DEFAULT_USER_TABLES, withGrantEnds } from '../users/user-tables.js';
import type { CredentialCache } from './credential-cache.js';
import type { Hashing } from './hashing.js';
import { checkPassword, hashPassword, type PasswordCheck } from './passwords.js';

/** The database a credential check needs: statements, and one transaction to upgrade a plain-text password. */
export type UserDatabase = Queryable & { transaction<T>(work: (db: Queryable) => Promise<T>): Promise<T> };

/**
 * Checks a user name and password for one backend, whichever door they came
 * through (HTTP Basic, token shape A, the token generator of shape B): runs
 * the backend's auth query, every time (the roles and the stored password are
 * the database's word, never a remembered one), then verifies the password:
 * a verdict remembered for this stored value and this client
 * (credential-cache.ts) answers at once, before any limit; otherwise the
 * login limits and the backoff (limiter.ts), then argon2id on the bounded
 * hashing (hashing.ts). Callers bound the inputs first (bounds.ts). The
 * query runs before the limits are consulted (the remembered verdict needs
 * the stored value), so a client over its limit still costs one query per
 * attempt, never a hash.
 */
export class CredentialChecker {
  /** The user tables this backend reads: the default ones are one directory whichever backend reads them. */
  readonly directory: string;
  /**
   * On the default tables, the default auth query that also gives each grant's end (user-tables.ts
   * `withGrantEnds`), until a database of an earlier version says it has no such column (`xmlrest db init` adds it).
   */
  private withEnds: AuthQuery | undefined;

  constructor(
    private readonly backend: BackendModule,
    private readonly db: UserDatabase,
    private readonly limiter: LoginLimiter,
    private readonly cache: CredentialCache,
    private readonly hashing: Hashing,
    /** The revoked users, every server's: a remembered tenant older than its user's revocation is read again. */
    private readonly revocations?: Revocations,
  ) {
    this.directory = backend.defaultTables ? 'default' : `backend:${backend.name}`;
    if (backend.defaultTables && backend.authScheme !== null && backend.authQuery?.passwordColumn === DEFAULT_USER_TABLES.password) {
      this.withEnds = { sql: withGrantEnds(backend.authScheme), binds: ['user'], passwordColumn: DEFAULT_USER_TABLES.password };
    }
  }

  /** The auth query's rows: on the default tables with each grant's end, and none for a grant that has ended. */
  private async select(query: AuthQuery, values: SqlValue[]): Promise<Row[]> {
    const ends = this.withEnds;
    if (ends === undefined || query !== this.backend.authQuery) return this.db.select<Row>(query.sql, values);
    try {
      return await this.db.select<Row>(ends.sql, values);
    } catch (error) {
      if (errnoOf(error) !== NO_COLUMN) throw error;
      // A role table of an earlier version: no grant of it can end. The seed's query, as generated, from now on.
      this.withEnds = undefined;
      return this.db.select<Row>(query.sql, values);
    }
  }

  /**
   * The auth query's rows for these credentials (a row per role held), or
   * none and why (for the log only: the client hears "Invalid credentials"
   * either way, and takes as long to hear it).
   */
  async check(user: string, pass: string, address: string): Promise<CredentialCheck> {
    // Bound to the auth query as text, whoever calls: as a number, 0 would meet a text column as a number, and
    // MariaDB compares 'alice' = 0 as true. The doors hand strings over (header.ts, token-a.ts); this holds them to it.
    if (typeof user !== 'string' || typeof pass !== 'string') throw new TypeError('credentials are checked as text');
    const query = this.backend.authQuery;
    if (query === null) return { rows: [], reason: 'unknown_user' };
    const attempt: LoginAttempt = { directory: this.directory, user, address };
    const values: SqlValue[] = query.binds.map((name) => (name === 'user' ? user : pass));
    const column = query.passwordColumn;
    if (column === null) {
      // The SQL compares the password itself: the query is the check, so the limits come before it,
      // and no row says only that something was wrong.
      await this.limiter.begin(attempt);
      const rows = await this.selectOrCancel(attempt, query.sql, values);
      if (rows.length === 0) {
        await this.limiter.failed(attempt);
        return { rows, reason: 'bad_credentials' };
      }
      await this.limiter.succeeded(attempt);
      // No verdict is remembered when the SQL compares: its tenant is read at each check, beside its auth query.
      return this.withTenant({ rows }, rows);
    }
    const rows = await this.select(query, values);
    const stored = rows[0]?.[column];
    const check = await this.verify(attempt, stored, pass);
    if (!check.ok) return { rows: [], reason: rows.length === 0 ? 'unknown_user' : 'bad_password' };
    if (check.plain && this.backend.rehashPlaintext && this.backend.defaultTables) await this.rehash(user, stored as string, pass);
    const checked = { rows: rows.map(({ [column]: _password, ...rest }) => rest) };
    return this.withTenant(checked, rows, typeof stored === 'string' ? { client: addressGroup(address), stored, pass } : undefined);
  }

  /**
   * On a tenant backend (docs/internals/contract.md §14), the user's tenant beside the rows of a right password: the
   * one remembered with its verdict (`remembered`: the cache's key) unless the user was revoked since (a tenant's
   * change, runtime/tenants/), else read with the backend's user query and remembered with the verdict.
   */
  private async withTenant(checked: CredentialCheck, rows: Row[], remembered?: { client: string; stored: string; pass: string }): Promise<CredentialCheck> {
    const source = this.backend.tenant?.userQuery?.sql;
    if (source === undefined || rows.length === 0) return checked;
    const first = rows[0]!;
    const user = String(first.user_id ?? first.sub);
    if (remembered !== undefined) {
      const { client, stored, pass } = remembered;
      const known = this.cache.tenant(client, stored, pass, user, source);
      if (known !== undefined && !this.revocations?.isUserRevokedSince(this.backend.name, user, this.backend.defaultTables, known.readAt)) {
        return { ...checked, tenant: known.tenant };
      }
    }
    const readAt = Date.now();
    const tenant = await readUserTenant(this.db, this.backend, user);
    if (remembered !== undefined) this.cache.rememberTenant(remembered.client, remembered.stored, remembered.pass, { source, user, tenant, readAt });
    return { ...checked, tenant };
  }

  /**
   * A password check for a plug-in, with no login limits (a plug-in that
   * counts attempts itself calls `begin`, and `succeeded` when right): a verdict
   * remembered for this stored value and client, or argon2id on the bounded hashing.
   */
  async verifyPassword(user: string, supplied: string, stored: unknown, address: string): Promise<boolean> {
    if (credentialProblem('user', user) || credentialProblem('password', supplied)) return false;
    const client = addressGroup(address);
    if (typeof stored !== 'string') return (await this.hash(client, stored, supplied)).ok;
    if (this.cache.verdict(client, stored, supplied)) return true;
    return (await this.cache.once(client, stored, supplied, () => this.hash(client, stored, supplied))).ok;
  }

  /**
   * The login limits, for a door that runs its own query (the token generator): `begin` holds the attempt's place
   * until `succeeded`, or `end` (the request's end) counts it as failed, as a door that says nothing more means.
   */
  loginGuard(address: string): LoginGuard {
    // begin and succeeded of one check name the same attempt, whose keys are then made once.
    let last: LoginAttempt | undefined;
    const attempt = (user: string | undefined): LoginAttempt =>
      last !== undefined && last.user === user ? last : (last = { directory: this.directory, user, address });
    /** The attempt begun and not yet ended. */
    let open: LoginAttempt | undefined;
    /** The request ended: an attempt admitted after it (its client hung up during the wait) is ended at once. */
    let closed = false;
    const fail = (): void | Promise<void> => {
      const begun = open;
      open = undefined;
      return begun === undefined ? undefined : this.limiter.failed(begun);
    };
    // An admitted attempt is open until it ends; admitted after the request's end, nothing would ever end it, and
    // its place would be held for good (a client hanging up in the backoff, again and again, locked a name out).
    const admitted = (begun: LoginAttempt): void | Promise<void> => {
      if (closed) return this.limiter.failed(begun);
      open = begun;
    };
    return {
      begin: (user) => {
        // A second begin without succeeded: the first said nothing more, so it failed.
        const failing = fail();
        const begun = attempt(user);
        const held = failing instanceof Promise ? failing.then(() => this.limiter.begin(begun)) : this.limiter.begin(begun);
        if (held instanceof Promise) return held.then(() => admitted(begun));
        return admitted(begun);
      },
      succeeded: (user) => {
        const begun = open;
        if (begun === undefined || begun.user !== user) return;
        open = undefined;
        return this.limiter.succeeded(begun);
      },
      end: () => {
        closed = true;
        return fail();
      },
      verify: async (user, supplied, stored) => {
        if ((user !== undefined && credentialProblem('user', user)) || credentialProblem('password', supplied)) return false;
        return (await this.verify(attempt(user), stored, supplied)).ok;
      },
    };
    // The token generator checks the password after its query; a fault there never reaches `begin`.
  }

  /**
   * A password against the stored value its login read: a remembered verdict
   * first, before any limit (a client whose right password is remembered is
   * never refused because others behind its address guessed wrong); else the
   * limits (429) and the backoff, then argon2id when a core is free (503 when
   * too many wait, which counts as no attempt). A failure stays counted.
   */
  private async verify(attempt: LoginAttempt, stored: unknown, supplied: string): Promise<PasswordCheck> {
    const client = addressGroup(attempt.address);
    if (typeof stored !== 'string') return this.limitedHash(attempt, client, stored, supplied);
    const remembered = this.cache.verdict(client, stored, supplied);
    if (remembered) return { ok: true, plain: remembered.plain };
    // The same password against the same stored value from the same client, already being checked: the same
    // guess, so it waits for that check's answer (or its 429 or 503) rather than counting, and hashing, again.
    return this.cache.once(client, stored, supplied, () => this.limitedHash(attempt, client, stored, supplied));
  }

  /** The limits (429) and the backoff, then the hash; a check the server could not run (503) counts as no attempt. */
  private async limitedHash(attempt: LoginAttempt, client: string, stored: unknown, supplied: string): Promise<PasswordCheck> {
    return withinLimits(
      this.limiter,
      attempt,
      () => this.hash(client, stored, supplied),
      (check) => check.ok,
    );
  }

  /** argon2id (or a plain-text row's check, which spends as long) on the bounded hashing; a success is remembered for `client`. */
  private async hash(client: string, stored: unknown, supplied: string): Promise<PasswordCheck> {
    const check = await this.hashing.run(() => checkPassword(stored, supplied));
    if (check.ok && typeof stored === 'string') this.cache.remember(client, stored, supplied, check, this.backend.credentialCacheSeconds);
    return check;
  }

  private async selectOrCancel(attempt: LoginAttempt, sql: string, values: SqlValue[]): Promise<Row[]> {
    try {
      return await this.db.select<Row>(sql, values);
    } catch (error) {
      // No password was checked (the database failed): this attempt is no failure of the user's.
      await this.limiter.cancelled(attempt);
      throw error;
    }
  }

  /**
   * Replaces a plain-text password with its hash (rehash_plaintext). The same
   * password, so no revocation: the user tables' triggers revoke a user's
   * tokens when the password changes (scripts/schema.ts), unless the session
   * says that this very update replaces this plain value with its hash.
   */
  private async rehash(user: string, stored: string, pass: string): Promise<void> {
    const { users, password, userName } = DEFAULT_USER_TABLES;
    const hashed = await this.hashing.run(() => hashPassword(pass));
    await this.db.transaction(async (db) => {
      await db.write(`set ${REHASH_VARIABLE} = sha2(?, 256)`, [stored]);
      await db.write(`update ${users} set ${password} = ? where ${userName} = ? and ${password} = ?`, [hashed, user, stored]);
      await db.write(`set ${REHASH_VARIABLE} = null`, []);
    });
  }
}

/**
 * The session variable that tells the user tables' update trigger that the
 * server is replacing a plain-text password with its hash (the SHA-256 of the
 * plain value, so that it excuses that change only).
 */
export const REHASH_VARIABLE = '@xmlrest_rehash';

/** The login limits as a plug-in sees them (contract.ts `PluginContext.login`). */
export interface LoginGuard {
  begin(user?: string): void | Promise<void>;
  succeeded(user?: string): void | Promise<void>;
  /** The request ended: an attempt begun and not succeeded failed. */
  end(): void | Promise<void>;
  verify(user: string | undefined, supplied: string, stored: unknown): Promise<boolean>;
}

type Row = Record<string, unknown>;

/** The rows of a check, or none and why. */
export interface CredentialCheck {
  rows: Row[];
  /** `unknown_user` (no such user, or one who holds no role), `bad_password`, or `bad_credentials` when the SQL compared. */
  reason?: 'unknown_user' | 'bad_password' | 'bad_credentials';
  /** On a tenant backend, a right password's user's tenant (docs/internals/contract.md §14); undefined when none. */
  tenant?: string | undefined;
}
