import type { BackendModule } from '../contract.js';
import type { Queryable, SqlValue } from '../db.js';
import { credentialProblem } from './bounds.js';
import type { CredentialCache } from './credential-cache.js';
import type { LoginAttempt, LoginLimiter } from './limiter.js';
import { checkPassword, hashPassword } from './passwords.js';
import { DEFAULT_USER_TABLES } from './user-tables.js';

/**
 * Checks a user name and password for one backend, whichever door they came
 * through (HTTP Basic, token shape A, the token generator of shape B): runs
 * the backend's auth query, verifies the stored password, counts failures
 * towards the login limits, and remembers successes in the server's
 * credential cache. Callers bound the inputs first (bounds.ts).
 */
export class CredentialChecker {
  /** The user tables this backend reads: the default ones are one directory whichever backend reads them. */
  readonly directory: string;

  constructor(
    private readonly backend: BackendModule,
    private readonly db: Queryable,
    private readonly limiter: LoginLimiter,
    private readonly cache: CredentialCache,
  ) {
    this.directory = backend.defaultTables ? 'default' : `backend:${backend.name}`;
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
    // The exact right credentials, remembered: no guess, so no limit to consult (nor a database round trip).
    const parts = ['rows', this.backend.name, user, pass];
    const remembered = this.cache.get<Row[]>(parts);
    if (remembered) return { rows: remembered };
    const attempt: LoginAttempt = { directory: this.directory, user, address };
    // A role change during the check (forget) must not be undone by remembering what was read before it.
    const mark = this.cache.mark();
    await this.limiter.begin(attempt);
    let checked: CredentialCheck;
    try {
      checked = await this.runAuthQuery(user, pass);
    } catch (error) {
      // No password was checked (the database failed): this attempt is no failure of the user's.
      await this.limiter.cancelled(attempt);
      throw error;
    }
    if (checked.rows.length === 0) return checked;
    await this.limiter.succeeded(attempt);
    const owner = checked.rows[0]!.user_id ?? checked.rows[0]!.sub;
    if (owner !== undefined && owner !== null)
      this.cache.set(parts, checked.rows, { owner: String(owner), seconds: this.backend.credentialCacheSeconds, mark });
    return checked;
  }

  /**
   * A password check for a plug-in (the token generator), remembered like
   * Basic's. The stored value is part of the key: a success proves this
   * password against this stored hash only, never against another user's row.
   */
  async verifyPassword(user: string, supplied: string, stored: unknown): Promise<boolean> {
    if (credentialProblem('user', user) || credentialProblem('password', supplied)) return false;
    if (typeof stored !== 'string') {
      // As long as a real check: no answer comes back faster for a user that does not exist.
      await checkPassword(stored, supplied);
      return false;
    }
    const parts = ['verified', this.directory, user, supplied, stored];
    if (this.cache.get<boolean>(parts)) return true;
    const mark = this.cache.mark();
    const ok = (await checkPassword(stored, supplied)).ok;
    // Owned by no user id: a changed password is a changed stored value, which no longer meets this key.
    if (ok) this.cache.set(parts, true, { owner: '', seconds: this.backend.credentialCacheSeconds, mark });
    return ok;
  }

  /** The login limits, for a door that checks the password itself (the token generator). */
  loginGuard(address: string): { begin(user?: string): void | Promise<void>; succeeded(user?: string): void | Promise<void> } {
    // begin and succeeded of one check name the same attempt, whose keys are then made once.
    let last: LoginAttempt | undefined;
    const attempt = (user: string | undefined): LoginAttempt =>
      last !== undefined && last.user === user ? last : (last = { directory: this.directory, user, address });
    return {
      begin: (user) => this.limiter.begin(attempt(user)),
      succeeded: (user) => this.limiter.succeeded(attempt(user)),
    };
    // The token generator checks the password after its query; a fault there never reaches `begin`.
  }

  /**
   * Runs the backend's auth query with `$user` and `$pass` bound. When it
   * returns the stored password rather than comparing it, the password is
   * verified here (argon2id, or a plain-text row from before in constant
   * time, upgraded to a hash when the backend asks), and dropped from the rows.
   */
  private async runAuthQuery(user: string, pass: string): Promise<CredentialCheck> {
    const query = this.backend.authQuery;
    if (query === null) return { rows: [], reason: 'unknown_user' };
    const values: SqlValue[] = query.binds.map((name) => (name === 'user' ? user : pass));
    const rows = await this.db.select<Row>(query.sql, values);
    const column = query.passwordColumn;
    // The SQL compared the password itself: no row says only that something was wrong.
    if (column === null) return rows.length > 0 ? { rows } : { rows, reason: 'bad_credentials' };
    const stored = rows[0]?.[column];
    const check = await checkPassword(stored, pass);
    if (!check.ok) return { rows: [], reason: rows.length === 0 ? 'unknown_user' : 'bad_password' };
    if (check.plain && this.backend.rehashPlaintext && this.backend.defaultTables) {
      const { users, password, userName } = DEFAULT_USER_TABLES;
      await this.db.write(`update ${users} set ${password} = ? where ${userName} = ? and ${password} = ?`, [await hashPassword(pass), user, stored]);
    }
    return { rows: rows.map(({ [column]: _password, ...rest }) => rest) };
  }
}

type Row = Record<string, unknown>;

/** The rows of a check, or none and why. */
export interface CredentialCheck {
  rows: Row[];
  /** `unknown_user` (no such user, or one who holds no role), `bad_password`, or `bad_credentials` when the SQL compared. */
  reason?: 'unknown_user' | 'bad_password' | 'bad_credentials';
}
