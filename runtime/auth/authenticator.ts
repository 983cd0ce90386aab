import type { Queryable, SqlValue } from '../db.js';
import { forbidden, HttpError } from '../errors.js';
import { signToken, TokenRejected, verifyToken, type JwtKey, type TokenSettings, type VerifiedToken } from '../jwt.js';
import { checkPassword, hashPassword } from '../passwords.js';
import type { Revocations } from '../revocations.js';
import type { BackendModule } from '../contract.js';
import { credentialProblem } from './bounds.js';
import { CredentialCache } from './credential-cache.js';
import { parseAuthorization } from './header.js';
import { digestKey } from './keys.js';
import { LoginLimiter } from './limiter.js';

/** How many verified tokens an authenticator remembers. */
const VERIFIED_TOKENS = 10_000;

export interface AuthenticatorOptions {
  /** Signs and verifies tokens; required for a Bearer backend. */
  key: JwtKey | null;
  revocations?: Revocations | undefined;
  /** Failed-login limits; shared by the backends of one server. */
  limiter?: LoginLimiter | undefined;
  /** Remembered password checks; shared by the backends of one server. */
  credentials?: CredentialCache | undefined;
}

/**
 * The user tables a backend checks credentials against: the default usr
 * tables are one directory whichever backend reads them; a backend with its
 * own AuthQuery is a directory of its own.
 */
export function directoryOf(backend: BackendModule): string {
  return backend.defaultTables ? 'usr' : `backend:${backend.name}`;
}

/** The canonical text of a user id: what `$uid` binds, and the only `sub` a token may carry. */
export function isCanonicalUid(backend: BackendModule, uid: string): boolean {
  if (backend.uidType === 'integer') return /^(?:0|[1-9][0-9]{0,19})$/.test(uid);
  // Text ids: nothing a comparison could trim, fold or ignore (spaces at either end, controls, format characters).
  return uid !== '' && Buffer.byteLength(uid, 'utf8') <= 255 && !/^\s|\s$|[\p{Cc}\p{Cf}\p{Cs}]/u.test(uid);
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
  private readonly directory: string;

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
    this.credentials = options.credentials ?? new CredentialCache();
    this.directory = directoryOf(backend);
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
      if (credentialProblem('user', credentials.user) || credentialProblem('password', credentials.pass)) {
        throw this.unauthorized('Invalid credentials');
      }
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
   * still refused once its `exp` has passed, and when revoked. The key is a
   * digest of the whole token, so a token differing in any byte is verified
   * afresh, and a long token costs no more to remember than a short one.
   */
  private verifiedToken(token: string): VerifiedToken {
    const key = digestKey(token);
    const known = this.verified.get(key);
    if (known !== undefined) {
      if ((known.exp + this.backend.clockSkew) * 1000 > Date.now()) return this.unlessRevoked(known);
      this.verified.delete(key);
    }
    let verified: VerifiedToken;
    try {
      verified = verifyToken(this.key!, token, {
        issuer: this.backend.issuer,
        clockSkew: this.backend.clockSkew,
        lifetime: this.backend.tokenLifetime,
        isUid: (sub) => isCanonicalUid(this.backend, sub),
      });
    } catch (error) {
      if (error instanceof TokenRejected) throw this.invalidToken(error.description);
      throw error;
    }
    this.unlessRevoked(verified);
    // Bounded: the oldest entry goes first (a Map keeps insertion order).
    if (this.verified.size >= VERIFIED_TOKENS) this.verified.delete(this.verified.keys().next().value!);
    this.verified.set(key, verified);
    return verified;
  }

  /** Revocations are checked on every use, remembered token or not. */
  private unlessRevoked(token: VerifiedToken): VerifiedToken {
    if (this.revocations?.isRevoked(this.backend.name, token)) throw this.invalidToken('token revoked');
    return token;
  }

  /**
   * Checks a user name and password: the backend's auth query returns a row
   * per role the user holds, none for wrong credentials. The caller has
   * bounded both (bounds.ts). A failure counts towards the login limits.
   */
  async checkCredentials(user: string, pass: string, address: string): Promise<Record<string, unknown>[]> {
    // The exact right credentials, remembered: no guess, so no limit to consult (nor a database round trip).
    const parts = ['rows', this.backend.name, user, pass];
    const remembered = this.credentials.get<Record<string, unknown>[]>(parts);
    if (remembered) return remembered;
    const attempt = { directory: this.directory, user, address };
    // A role change during the check (forget) must not be undone by remembering what was read before it.
    const mark = this.credentials.mark();
    await this.limiter.begin(attempt);
    const rows = await this.runAuthQuery(user, pass);
    if (rows.length === 0) return rows;
    await this.limiter.succeeded(attempt);
    const owner = rows[0]!.user_id ?? rows[0]!.sub;
    if (owner !== undefined && owner !== null) {
      this.credentials.set(parts, rows, { owner: String(owner), seconds: this.backend.credentialCacheSeconds, mark });
    }
    return rows;
  }

  /**
   * A password check for a plug-in (the token generator), remembered like
   * Basic's. The stored value is part of the key: a success proves this
   * password against this stored hash only, never against another user's row.
   */
  async verifyPassword(user: string, supplied: string, stored: unknown): Promise<boolean> {
    if (credentialProblem('user', user) || credentialProblem('password', supplied)) return false;
    if (typeof stored !== 'string') {
      await checkPassword(stored, supplied);
      return false;
    }
    const parts = ['verified', this.directory, user, supplied, stored];
    if (this.credentials.get<boolean>(parts)) return true;
    const mark = this.credentials.mark();
    const ok = (await checkPassword(stored, supplied)).ok;
    // Owned by no user id: a changed password is a changed stored value, which no longer meets this key.
    if (ok) this.credentials.set(parts, true, { owner: '', seconds: this.backend.credentialCacheSeconds, mark });
    return ok;
  }

  /** For plug-ins that check credentials themselves (the token generator): the login limits. */
  loginGuard(address: string): { begin(user?: string): Promise<void>; succeeded(user?: string): Promise<void> } {
    const attempt = (user: string | undefined) => ({ directory: this.directory, user, address });
    return {
      begin: (user) => this.limiter.begin(attempt(user)),
      succeeded: (user) => this.limiter.succeeded(attempt(user)),
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
    // A token this server would refuse is never issued: the auth query must return the id as its canonical text.
    if (!isCanonicalUid(this.backend, claims.sub)) {
      throw new Error(`backend "${this.backend.name}": the auth query's sub is not the canonical text of a ${this.backend.uidType} user id`);
    }
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
