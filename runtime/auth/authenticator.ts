import { createHmac, randomBytes } from 'node:crypto';
import { parseAuthorization } from './auth-header.js';
import type { Queryable, SqlValue } from './db.js';
import { forbidden, HttpError } from './errors.js';
import { signToken, TokenRejected, verifyToken, type JwtKey, type TokenSettings, type VerifiedToken } from './jwt.js';
import { LoginLimiter } from './limiter.js';
import { checkPassword, hashPassword } from './passwords.js';
import type { Revocations } from './revocations.js';
import type { BackendModule } from './types.js';

/** How many verified tokens an authenticator remembers. */
const VERIFIED_TOKENS = 10_000;

/**
 * Successful password checks, remembered for a short time so that HTTP
 * Basic, which sends the password on every request, does not pay for an
 * argon2id check (tens of milliseconds) and a query each time. Entries are
 * keyed by an HMAC of user and password under a key made at start-up, so
 * the cache holds no password; a wrong password never matches an entry.
 * One cache per backend name, kept across route reloads.
 */
class CredentialCache {
  private static readonly key = randomBytes(32);
  private readonly entries = new Map<string, { user: string; rows: Record<string, unknown>[]; expiresAt: number }>();
  private readonly generations = new Map<string, number>();
  private epoch = 0;

  get(user: string, pass: string): Record<string, unknown>[] | undefined {
    const key = CredentialCache.keyOf(user, pass);
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt > Date.now()) return entry.rows;
    this.entries.delete(key);
    return undefined;
  }

  /** Changes whenever `forget` drops this user: a check that began before must not be remembered. */
  generation(user: string): number {
    return this.epoch * 1_000_003 + (this.generations.get(user) ?? 0);
  }

  set(user: string, pass: string, rows: Record<string, unknown>[], seconds: number, generation: number, owner = user): void {
    if (seconds <= 0 || generation !== this.generation(owner)) return;
    if (this.entries.size >= VERIFIED_TOKENS) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(CredentialCache.keyOf(user, pass), { user: owner, rows, expiresAt: Date.now() + seconds * 1000 });
  }

  /** Drops what is remembered of one user, or of everyone. */
  forget(user?: string): void {
    if (user === undefined) this.epoch++;
    else this.generations.set(user, (this.generations.get(user) ?? 0) + 1);
    for (const [key, entry] of this.entries) if (user === undefined || entry.user === user) this.entries.delete(key);
  }

  private static keyOf(user: string, pass: string): string {
    return createHmac('sha256', CredentialCache.key).update(user).update('\0').update(pass).digest('base64');
  }
}

const credentialCaches = new Map<string, CredentialCache>();

function credentialCacheOf(backend: string): CredentialCache {
  let cache = credentialCaches.get(backend);
  if (!cache) credentialCaches.set(backend, (cache = new CredentialCache()));
  return cache;
}

/**
 * Forgets remembered password checks of a user (or of everyone): call it when
 * xmlrest changes a password or a role. Changes made elsewhere (SQL by hand,
 * another process) take effect when the entries expire (credential_cache).
 */
export function forgetCredentials(user?: string): void {
  for (const cache of credentialCaches.values()) cache.forget(user);
}

export interface AuthenticatorOptions {
  /** Signs and verifies tokens; required for a Bearer backend. */
  key: JwtKey | null;
  revocations?: Revocations | undefined;
  /** Failed-login limits; shared by the backends of one server. */
  limiter?: LoginLimiter | undefined;
}

/**
 * Authentication and the role check for one backend (contract §4). Generated
 * handlers call `authenticate(header, role)` with their role hard-wired.
 */
export class Authenticator {
  private readonly basicChallenge: string;
  private readonly bearerChallenge: string;
  private readonly tokenSettings: TokenSettings;
  private readonly verified = new Map<string, VerifiedToken>();

  private readonly key: JwtKey | null;
  private readonly revocations: Revocations | undefined;
  private readonly limiter: LoginLimiter;
  private readonly credentials: CredentialCache;

  constructor(
    readonly backend: BackendModule,
    private readonly db: Queryable,
    options: AuthenticatorOptions,
  ) {
    const { key } = options;
    this.key = key;
    this.revocations = options.revocations;
    this.limiter = options.limiter ?? new LoginLimiter();
    this.credentials = credentialCacheOf(backend.name);
    this.basicChallenge = `Basic realm="${backend.name}", charset="UTF-8"`;
    this.bearerChallenge = `Bearer realm="${backend.name}"`;
    this.tokenSettings = { issuer: backend.issuer, lifetime: backend.tokenLifetime, iatUnit: backend.iatUnit };
    if (backend.authScheme === 'Bearer' && key === null) {
      throw new Error(`backend "${backend.name}" uses Bearer tokens: set JWT_SECRET`);
    }
  }

  /** Returns `$uid`, or throws the 401/403 the contract asks for (429 after too many failed passwords). */
  async authenticate(header: string | undefined, role: string, address: string): Promise<string> {
    if (header === undefined) {
      if (this.backend.absentCredentialsStatus === 401) {
        throw new HttpError(401, 'Credentials required', { 'WWW-Authenticate': this.challengeFor() });
      }
      throw forbidden();
    }
    const credentials = parseAuthorization(header);
    if (this.backend.authScheme === 'Basic') {
      if (credentials?.scheme !== 'basic') throw this.unauthorized('Malformed or wrong-scheme credentials: use Basic');
      const rows = await this.checkCredentials(credentials.user, credentials.pass, address);
      if (rows.length === 0) throw this.unauthorized('Invalid credentials');
      const granted = rows.find((row) => String(row.role_name) === role);
      if (!granted) throw forbidden();
      return String(granted.user_id);
    }
    if (this.backend.authScheme === 'Bearer' && this.key !== null) {
      if (credentials?.scheme !== 'bearer') throw this.invalidToken('token is malformed or not a Bearer token');
      const verified = this.verifiedToken(credentials.token);
      if (!verified.aud.includes(role)) throw forbidden();
      return verified.sub;
    }
    // The generator refuses a protected resource on a backend with no scheme; this is a guard.
    throw forbidden();
  }

  /**
   * Verifies a token, remembering the claims of tokens already verified:
   * clients send the same token on every call, and checking its signature and
   * parsing it again is most of a protected GET's cost. A remembered token is
   * still refused once its `exp` has passed; the key is the whole token text,
   * so a token differing in any byte is verified afresh.
   */
  private verifiedToken(token: string): VerifiedToken {
    const known = this.verified.get(token);
    if (known !== undefined) {
      if ((known.exp + this.backend.clockSkew) * 1000 > Date.now()) return this.unlessRevoked(known);
      this.verified.delete(token);
    }
    let verified: VerifiedToken;
    try {
      verified = verifyToken(this.key!, this.backend.issuer, token, this.backend.clockSkew);
    } catch (error) {
      if (error instanceof TokenRejected) throw this.invalidToken(error.description);
      throw error;
    }
    this.unlessRevoked(verified);
    // Bounded: the oldest entry goes first (a Map keeps insertion order).
    if (this.verified.size >= VERIFIED_TOKENS) this.verified.delete(this.verified.keys().next().value!);
    this.verified.set(token, verified);
    return verified;
  }

  /** Revocations are checked on every use, remembered token or not. */
  private unlessRevoked(token: VerifiedToken): VerifiedToken {
    if (this.revocations?.isRevoked(this.backend.name, token)) throw this.invalidToken('token revoked');
    return token;
  }

  /**
   * Checks a user name and password: the backend's auth query returns a row
   * per role the user holds, none for wrong credentials. Failures count
   * towards the login limits, which are checked first.
   */
  async checkCredentials(user: string, pass: string, address: string): Promise<Record<string, unknown>[]> {
    // The exact right credentials, remembered: no guess, so no limit to consult (nor a database round trip).
    const remembered = this.credentials.get(user, pass);
    if (remembered) return remembered;
    const key = `${this.backend.name}\0${user}`;
    // A role change during the check (forget) must not be undone by remembering what was read before it.
    const generation = this.credentials.generation(user);
    await this.limiter.begin(key, address);
    const rows = await this.runAuthQuery(user, pass);
    if (rows.length === 0) return rows;
    await this.limiter.succeeded(key, address);
    this.credentials.set(user, pass, rows, this.backend.credentialCacheSeconds, generation);
    return rows;
  }

  /** A password check for a plug-in (the token generator), remembered like Basic's under its own keys. */
  async verifyPassword(user: string, supplied: string, stored: unknown): Promise<boolean> {
    const key = `plugin\0${user}`;
    if (this.credentials.get(key, supplied)) return true;
    const generation = this.credentials.generation(user);
    const ok = (await checkPassword(stored, supplied)).ok;
    if (ok) this.credentials.set(key, supplied, [{ verified: true }], this.backend.credentialCacheSeconds, generation, user);
    return ok;
  }

  /** For plug-ins that check credentials themselves (the token generator): the limits by client address. */
  loginGuard(address: string): { begin(user?: string): Promise<void>; succeeded(user?: string): Promise<void> } {
    const key = (user: string | undefined) => (user === undefined ? undefined : `${this.backend.name}\0${user}`);
    return {
      begin: (user) => this.limiter.begin(key(user), address),
      succeeded: (user) => this.limiter.succeeded(key(user), address),
    };
  }

  /**
   * Runs the backend's auth query with `$user` and `$pass` bound. When it
   * returns the stored password rather than comparing it, the password is
   * verified here (argon2id, or a plain-text row from before in constant
   * time, upgraded to a hash when the backend asks), and dropped from the rows.
   */
  private async runAuthQuery(user: string, pass: string): Promise<Record<string, unknown>[]> {
    const query = this.backend.authQuery;
    if (query === null) return [];
    const values: SqlValue[] = query.binds.map((name) => (name === 'user' ? user : pass));
    const rows = await this.db.select<Record<string, unknown>>(query.sql, values);
    const column = query.passwordColumn;
    if (column === null) return rows;
    const stored = rows[0]?.[column];
    const check = await checkPassword(stored, pass);
    if (!check.ok) return [];
    if (check.plain && this.backend.rehashPlaintext && this.backend.defaultTables) {
      await this.db.write('update usr set pass_word = ? where user_name = ? and pass_word = ?', [await hashPassword(pass), user, stored]);
    }
    return rows.map(({ [column]: _password, ...rest }) => rest);
  }

  /** Token shape A (contract §5): one token whose `aud` holds every role the user holds. */
  async issueForCredentials(user: string, pass: string, address: string): Promise<string> {
    if (this.key === null) throw new Error('no JWT key');
    const rows = await this.checkCredentials(user, pass, address);
    const first = rows[0];
    if (first === undefined || first.sub === null || first.sub === undefined) {
      throw new HttpError(401, 'Invalid credentials');
    }
    const roles = [...new Set(rows.map((row) => row.aud).filter((aud) => aud !== null && aud !== undefined).map(String))];
    if (roles.length === 0) throw new HttpError(401, 'Invalid credentials');
    return this.sign({ sub: String(first.sub), aud: roles.length === 1 ? roles[0]! : roles });
  }

  sign(claims: { sub: string; aud: string | string[] }): string {
    if (this.key === null) throw new Error(`backend "${this.backend.name}" has no JWT key: set JWT_SECRET`);
    return signToken(this.key, this.tokenSettings, claims);
  }

  private challengeFor(): string {
    return this.backend.authScheme === 'Bearer' ? this.bearerChallenge : this.basicChallenge;
  }

  private unauthorized(message: string): HttpError {
    return new HttpError(401, message, { 'WWW-Authenticate': this.basicChallenge });
  }

  private invalidToken(description: string): HttpError {
    // The description is one of jwt.ts's fixed phrases: it never echoes the token.
    return new HttpError(401, `Invalid token: ${description}`, {
      'WWW-Authenticate': `${this.bearerChallenge}, error="invalid_token", error_description="${description}"`,
    });
  }
}
