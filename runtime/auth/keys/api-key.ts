import { hash } from 'node:crypto';
import type { BackendModule, RateLimit } from '../../contract.js';
import { parseRateLimit } from '../../contract.js';
import { errnoOf, NO_COLUMN, type Queryable } from '../../db/index.js';
import { HttpError } from '../../errors.js';
import type { Logger } from '../../log.js';
import { readUserTenant } from '../../tenants/user-tenant.js';
import type { LoginAttempt, LoginLimiter } from '../limits/limiter.js';
import { withinLimits } from '../limits/within.js';
import { LOCKED } from '../passwords/passwords.js';
import type { Principal } from '../scheme.js';
import { hasApiKeyShape, isLegacyApiKey, KeySecret } from './key-checksum.js';

export { API_KEY_PREFIX, base62, randomBase62 } from './key-checksum.js';

/**
 * API keys (docs/internals/contract.md §10): `xr_` + 32 random bytes in base62 + a tag
 * only the deployment can make (key-checksum.ts), so that a mistyped or
 * made-up key is refused before any query. Only the key's SHA-256 and its
 * first 8 characters are stored, in `xmlrest_api_key`; a key belongs to a user
 * of a backend and lists roles, and admits only those its user still holds.
 * Sent as `X-API-Key: xr_...` or `Authorization: Bearer xr_...`, on a backend
 * with `api_keys="on"`, Basic or Bearer.
 */

export const API_KEY_TABLE = `create table if not exists xmlrest_api_key (
  key_id int unsigned not null auto_increment primary key,
  backend varchar(64) not null,
  user_id varchar(190) not null,
  name varchar(100) not null,
  prefix char(8) character set ascii collate ascii_bin not null,
  key_hash binary(32) not null,
  roles varchar(1000) not null,
  rate_limit varchar(16) null default null,
  created_on timestamp not null default current_timestamp,
  expires_on timestamp null default null,
  revoked_on timestamp null default null,
  last_used_on timestamp null default null,
  unique key xmlrest_api_key_hash (key_hash),
  key xmlrest_api_key_user (backend, user_id)
) engine = InnoDB`;

/** What is stored of a key: its SHA-256, and its first 8 characters to recognise it by in a list. */
export function storedForm(key: string): { hash: Buffer; prefix: string } {
  return { hash: hash('sha256', key, 'buffer'), prefix: key.slice(0, 8) };
}

/** The failed-login counters' directory of keys of the CRC32 form: their misses count per address as failed logins do. */
const LEGACY_KEYS = 'api keys (crc32 form)';

/** A key as the database holds it, with what its user holds now. */
interface KeyRow {
  key_id: number;
  user_id: string;
  roles: string;
  rate_limit: string | null;
  expired: number | string;
  revoked: number | string;
  held: string | null;
  /** The first end (Unix seconds) among the user's temporary grants that have not ended; null when none will. */
  held_until?: number | string | null;
  /** The key's own end (Unix seconds), null for a key that does not expire. */
  key_until?: number | string | null;
  pass_word: string | null;
}

interface Known {
  /** The key's principal, or why it is refused. */
  principal: (Principal & { keyId: number; rate: RateLimit | null }) | { refused: string };
  /** When the query that read it began (ms). */
  read: number;
  /** When a grant of its user (or the key itself) ends (ms): read again then, whatever its age. */
  until: number;
}

/** A revoked or expired key, a revoked role, a disabled user: refused on every server within this long. */
const FRESH_MS = 5000;
/** Past this age a use reads the key again in the background, so that busy keys never wait for the database. */
const REFRESH_MS = 2500;
const REMEMBERED = 10_000;

/**
 * A key with what its user holds now: a grant past its end is not held (runtime/auth/users/grants.ts), whether or not a
 * server has deleted it yet, and the first end to come is read with it so that the key is read again at that moment.
 */
const LOOKUP_SQL = `select k.key_id, k.user_id, k.roles, k.rate_limit,
  coalesce(k.expires_on <= now(), 0) as expired, k.revoked_on is not null as revoked,
  (select group_concat(r.role_name separator ' ') from usr_role r where r.user_id = k.user_id and (r.expires_on is null or r.expires_on > now())) as held,
  (select unix_timestamp(min(r.expires_on)) from usr_role r where r.user_id = k.user_id and r.expires_on > now()) as held_until,
  unix_timestamp(k.expires_on) as key_until,
  (select u.pass_word from usr u where u.user_id = k.user_id) as pass_word
from xmlrest_api_key k
where k.key_hash = ? and k.backend = ?`;

/** The same for a role table of an earlier version, without `expires_on` (`xmlrest db init` adds it): no grant of it ends. */
const LOOKUP_SQL_WITHOUT_GRANT_ENDS = `select k.key_id, k.user_id, k.roles, k.rate_limit,
  coalesce(k.expires_on <= now(), 0) as expired, k.revoked_on is not null as revoked,
  (select group_concat(r.role_name separator ' ') from usr_role r where r.user_id = k.user_id) as held,
  unix_timestamp(k.expires_on) as key_until,
  (select u.pass_word from usr u where u.user_id = k.user_id) as pass_word
from xmlrest_api_key k
where k.key_hash = ? and k.backend = ?`;

/**
 * The keys of the server's backends: each used key read from the database at
 * most every 2.5 s while in use (and never served older than 5 s), and the
 * time of last use written for all used keys in one statement every 5 s,
 * never a write per request. Only keys found in the database are remembered:
 * made-up keys, however many, never take a real key's place.
 */
export class ApiKeys {
  private readonly known = new Map<string, Known>();
  /** Reads under way, by key: at most one per key at a time. */
  private readonly reading = new Map<string, Promise<Known>>();
  private used = new Set<number>();
  private timer: NodeJS.Timeout | undefined;
  /** Until a role table of an earlier version says it has no `expires_on`. */
  private lookup = LOOKUP_SQL;
  private readonly secret: KeySecret;

  constructor(
    private readonly db: Queryable,
    private readonly logger: Logger,
    /** The server's failed-login limits: a key of the CRC32 form not found counts against its client's address. */
    private readonly limiter: LoginLimiter,
  ) {
    this.secret = new KeySecret(db);
  }

  /** Writes the times of last use every `intervalMs`. */
  start(intervalMs = FRESH_MS): void {
    this.timer = setInterval(() => void this.flush(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /**
   * Who presents `key` on `backend` from `address`, or the 401 (a 429 for a client whose keys of the CRC32 form
   * missed too often). The roles are those the key lists that its user still holds.
   */
  async authenticate(backend: BackendModule, key: string, address: string): Promise<Principal & { keyId: number; rate: RateLimit | null }> {
    if (!hasApiKeyShape(key)) throw refusal('malformed_key');
    const { hash: digest } = storedForm(key);
    const id = `${backend.name} ${digest.toString('base64url')}`;
    const now = Date.now();
    let known = this.known.get(id);
    if (known === undefined) {
      known = await this.first(id, backend, digest, key, address);
    } else if (now - known.read >= FRESH_MS || now >= known.until) {
      known = await this.read(id, backend, digest);
    } else if (now - known.read >= REFRESH_MS) {
      void this.read(id, backend, digest).catch(() => undefined);
    }
    const { principal } = known;
    if ('refused' in principal) throw refusal(principal.refused);
    this.used.add(principal.keyId);
    return principal;
  }

  /**
   * A key this server does not remember: its tag first, which only the deployment can make, so that a made-up
   * key costs no query. A key of the CRC32 form (made before keyed tags; anyone can compute its checksum) is read
   * only within the failed-login limits of its client's address, and counts as a failed login when not found.
   */
  private async first(id: string, backend: BackendModule, digest: Buffer, key: string, address: string): Promise<Known> {
    if (isLegacyApiKey(key)) {
      const attempt: LoginAttempt = { directory: LEGACY_KEYS, user: undefined, address };
      // Not found: a failed login, as a wrong password is.
      return withinLimits(
        this.limiter,
        attempt,
        () => this.read(id, backend, digest),
        () => this.known.has(id),
      );
    }
    const checksum = await this.secret.checksum();
    if (checksum?.formOf(key) !== 'current') throw refusal('malformed_key');
    return this.read(id, backend, digest);
  }

  /**
   * Reads a key's record, one read at a time per key (the callers of a key share it). A record is as old as the
   * moment its query began, and never replaces a newer one: a slow read must not stretch the 5 s. A key not
   * found is forgotten, never remembered.
   */
  private read(id: string, backend: BackendModule, digest: Buffer): Promise<Known> {
    let reading = this.reading.get(id);
    if (reading === undefined) {
      const started = Date.now();
      reading = this.select([digest, backend.name])
        .then(async ([row]) => {
          const principal = row === undefined ? undefined : principalOf(row);
          // A tenant backend's key answers its user's tenant, read with the key and kept with it (docs/internals/contract.md §14).
          if (principal !== undefined && !('refused' in principal)) {
            const tenant = await readUserTenant(this.db, backend, principal.userId);
            if (tenant !== undefined) principal.tenant = tenant;
          }
          const newer = this.known.get(id);
          if (newer !== undefined && newer.read > started) return newer;
          if (row === undefined || principal === undefined) {
            this.known.delete(id);
            return { principal: { refused: 'unknown_key' }, read: started, until: started };
          }
          const ends = [row.held_until, row.key_until].filter((end) => end !== null && end !== undefined).map((end) => Number(end) * 1000);
          const known: Known = { principal, read: started, until: Math.min(Infinity, ...ends) };
          if (newer === undefined && this.known.size >= REMEMBERED) this.known.delete(this.known.keys().next().value!);
          this.known.set(id, known);
          return known;
        })
        .finally(() => this.reading.delete(id));
      this.reading.set(id, reading);
    }
    return reading;
  }

  private async select(values: unknown[]): Promise<KeyRow[]> {
    const sql = this.lookup;
    try {
      return await this.db.select<KeyRow>(sql, values);
    } catch (error) {
      if (sql === LOOKUP_SQL_WITHOUT_GRANT_ENDS || errnoOf(error) !== NO_COLUMN) throw error;
      this.lookup = LOOKUP_SQL_WITHOUT_GRANT_ENDS;
      return this.db.select<KeyRow>(LOOKUP_SQL_WITHOUT_GRANT_ENDS, values);
    }
  }

  /** Writes when each key used since the last flush was last used. */
  async flush(): Promise<void> {
    if (this.used.size === 0) return;
    const ids = [...this.used];
    this.used = new Set();
    try {
      await this.db.write(`update xmlrest_api_key set last_used_on = now() where key_id in (${ids.map(() => '?').join(', ')})`, ids);
    } catch (error) {
      this.logger.warn({ error: (error as Error).message }, 'cannot record when API keys were last used');
    }
  }
}

function principalOf(row: KeyRow): Known['principal'] {
  if (Number(row.revoked) === 1) return { refused: 'revoked_key' };
  if (Number(row.expired) === 1) return { refused: 'expired_key' };
  // A user deleted or disabled (a locked password) holds nothing, keys included.
  if (row.pass_word === null || row.pass_word.startsWith(LOCKED)) return { refused: 'disabled_user' };
  const held = new Set((row.held ?? '').split(' '));
  const roles = row.roles.split(' ').filter((role) => role !== '' && held.has(role));
  // Its user holds none of its roles any more: nothing left to admit, not even as "any authenticated caller".
  if (roles.length === 0) return { refused: 'roles_revoked' };
  return { userId: String(row.user_id), roles, keyId: row.key_id, rate: row.rate_limit === null ? null : (parseRateLimit(row.rate_limit) ?? null) };
}

function refusal(reason: string): HttpError {
  return new HttpError(401, 'Invalid API key', {}, reason);
}

/** The key a request presents: `X-API-Key`, or a Bearer credential of a key's shape; undefined when none. */
export function presentedKey(authorization: string | undefined, apiKey: string | undefined): string | undefined {
  if (apiKey !== undefined) return apiKey.trim();
  if (authorization === undefined) return undefined;
  const match = /^\s*bearer\s+(xr_\S*)\s*$/i.exec(authorization);
  return match?.[1];
}
