import { storedForm } from '../runtime/auth/keys/api-key.js';
import { KeySecret } from '../runtime/auth/keys/key-checksum.js';
import { parseRateLimit, ROLE_NAME } from '../runtime/contract.js';
import type { Queryable } from '../runtime/index.js';

/**
 * API keys as their owners and operators manage them (docs/internals/contract.md §10):
 * made, listed and revoked by `xmlrest key` and by the console's Keys page,
 * the same way. A key is shown once, when it is made; only its SHA-256 and
 * its first 8 characters are stored.
 */
export interface KeyRow {
  key_id: number;
  backend: string;
  user_id: string;
  user_name: string | null;
  name: string;
  prefix: string;
  roles: string;
  rate_limit: string | null;
  created_on: Date;
  expires_on: Date | null;
  revoked_on: Date | null;
  last_used_on: Date | null;
}

export interface NewKey {
  backend: string;
  userId: string;
  name: string;
  roles: readonly string[];
  expires: Date | null;
  rate: string | null;
}

export type KeyCheck = { ok: true } | { ok: false; message: string };

/**
 * What a new key may be: a name, roles its user holds now, a rate, an expiry in the future. No console role
 * (`consoleRoles`: every backend's): the console takes a person's credentials only (runtime/auth/guard.ts), and a
 * key listing the role that opens it would be a machine credential that looks like an operator's.
 */
export function checkNewKey(key: NewKey, held: readonly string[], consoleRoles: readonly string[], now = new Date()): KeyCheck {
  if (!/^[\p{L}\p{N} ._:@/-]{1,100}$/u.test(key.name)) return { ok: false, message: 'a key name is 1 to 100 letters, digits, spaces and . _ : @ / -' };
  if (key.roles.length === 0) return { ok: false, message: 'a key lists at least one role (--role)' };
  const bad = key.roles.find((role) => !ROLE_NAME.test(role));
  if (bad !== undefined) return { ok: false, message: `not a role name: ${bad}` };
  const operating = key.roles.find((role) => consoleRoles.includes(role));
  if (operating !== undefined) {
    return { ok: false, message: `${operating} is a console role: a key may not list it (the console takes a person's own credentials only)` };
  }
  const missing = key.roles.filter((role) => !held.includes(role));
  if (missing.length > 0) {
    return {
      ok: false,
      message: `the user does not hold ${missing.join(', ')} (holds ${held.join(', ') || 'no role'}): a key admits only roles its user holds`,
    };
  }
  if (key.rate !== null && parseRateLimit(key.rate) === undefined) return { ok: false, message: `a rate is <calls>/<s|m|h>, such as 1000/h, not ${key.rate}` };
  if (key.expires !== null && !(key.expires.getTime() > now.getTime())) return { ok: false, message: 'a key expires in the future' };
  return { ok: true };
}

/** `--expires`: an ISO time, or a time from now (`30d`, `12h`, `90m`); undefined when it is neither. */
export function parseExpiry(text: string, now = new Date()): Date | undefined {
  const relative = /^([1-9][0-9]{0,5})([dhm])$/.exec(text);
  if (relative) {
    const unit = { d: 86_400_000, h: 3_600_000, m: 60_000 }[relative[2] as 'd' | 'h' | 'm'];
    return new Date(now.getTime() + Number(relative[1]) * unit);
  }
  if (!/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2})?(\.\d+)?(Z|[+-]\d{2}:\d{2}))?$/.test(text)) return undefined;
  const time = new Date(text);
  return Number.isNaN(time.getTime()) ? undefined : time;
}

export class KeyStore {
  private readonly secret: KeySecret;

  constructor(private readonly db: Queryable) {
    this.secret = new KeySecret(db);
  }

  /** Makes a key, tagged with the database's key checksum secret; the only time its text exists outside its owner's hands. */
  async create(key: NewKey): Promise<{ id: number; key: string; prefix: string }> {
    const text = (await this.secret.made()).make();
    const { hash, prefix } = storedForm(text);
    const result = await this.db.write(
      'insert into xmlrest_api_key (backend, user_id, name, prefix, key_hash, roles, rate_limit, expires_on) values (?, ?, ?, ?, ?, ?, ?, ?)',
      [key.backend, key.userId, key.name, prefix, hash, [...new Set(key.roles)].join(' '), key.rate, key.expires],
    );
    return { id: result.insertId!, key: text, prefix };
  }

  async list(filter: { backend?: string | undefined; userId?: string | undefined; id?: number } = {}): Promise<KeyRow[]> {
    const where: string[] = [];
    const values: (string | number)[] = [];
    if (filter.id !== undefined) {
      where.push('k.key_id = ?');
      values.push(filter.id);
    }
    if (filter.backend !== undefined) {
      where.push('k.backend = ?');
      values.push(filter.backend);
    }
    if (filter.userId !== undefined) {
      where.push('k.user_id = ?');
      values.push(filter.userId);
    }
    return this.db.select<KeyRow>(
      `select k.key_id, k.backend, k.user_id, u.user_name, k.name, k.prefix, k.roles, k.rate_limit, k.created_on, k.expires_on, k.revoked_on, k.last_used_on
       from xmlrest_api_key k left join usr u on cast(u.user_id as char) = k.user_id
       ${where.length > 0 ? `where ${where.join(' and ')}` : ''}
       order by k.key_id`,
      values,
    );
  }

  /**
   * Revokes every key of a user (of `backend`, when given), as its user's removal and "revoke tokens" do: a key
   * never outlives its user, nor comes back when the user's id is used again. Answers how many it revoked.
   */
  async revokeUser(userId: string, backend?: string): Promise<number> {
    const result = await this.db.write(
      `update xmlrest_api_key set revoked_on = now() where user_id = ? and revoked_on is null${backend === undefined ? '' : ' and backend = ?'}`,
      backend === undefined ? [userId] : [userId, backend],
    );
    return result.affectedRows;
  }

  /** Revokes a key (of `backend`, when given); false when there is no such key, or it was revoked already. */
  async revoke(id: number, backend?: string): Promise<boolean> {
    const result = await this.db.write(
      `update xmlrest_api_key set revoked_on = now() where key_id = ? and revoked_on is null${backend === undefined ? '' : ' and backend = ?'}`,
      backend === undefined ? [id] : [id, backend],
    );
    return result.affectedRows === 1;
  }
}
