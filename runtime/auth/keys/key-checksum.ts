import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { errnoOf, NO_TABLE, type Queryable } from '../../db/index.js';

/**
 * What an API key's text is (docs/internals/contract.md §10): `xr_` + 32 random bytes in base62 (43 characters) + an
 * 11-character base62 tag, the first 64 bits of an HMAC-SHA-256 of what precedes it under the deployment's key
 * checksum secret. Only a holder of that secret makes a key that passes, so a made-up key is refused before any
 * query, however many are tried (a checksum anyone can compute, as CRC32 was, lets each made-up key cost a
 * query). The secret is one random value in the database (`xmlrest_secret`), made once by whichever door first
 * makes a key: every server and the CLI of a deployment share it, and it is no configuration to carry around.
 *
 * Keys made before this form (`xr_` + 43 + a 6-character CRC32) are told apart by their length: they are still
 * taken, through a path that counts each one not found against its client's address as a failed login
 * (runtime/auth/keys/api-key.ts), so that forging them is as limited as guessing passwords.
 */
export const API_KEY_PREFIX = 'xr_';
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const BODY_LENGTH = 43; // 62^43 > 2^256: 32 random bytes in base62, left-padded
const TAG_LENGTH = 11; // 62^11 > 2^64
const LEGACY_CHECK_LENGTH = 6; // 62^6 > 2^32
const KEY_SHAPE = new RegExp(`^${API_KEY_PREFIX}[0-9A-Za-z]{${BODY_LENGTH + TAG_LENGTH}}$`);
const LEGACY_SHAPE = new RegExp(`^${API_KEY_PREFIX}[0-9A-Za-z]{${BODY_LENGTH + LEGACY_CHECK_LENGTH}}$`);

/** A number in base62 (digits, then upper and lower case letters), left-padded to `length`. */
export function base62(value: bigint, length: number): string {
  let text = '';
  for (let rest = value; rest > 0n; rest /= 62n) text = ALPHABET[Number(rest % 62n)] + text;
  return text.padStart(length, '0');
}

/** 32 random bytes in base62: 43 characters. */
export function randomBase62(): string {
  return base62(BigInt(`0x${randomBytes(32).toString('hex')}`), BODY_LENGTH);
}

/** What a key's text says of it before any query: a key of the current form, one of the CRC32 form, or neither. */
export type KeyForm = 'current' | 'legacy' | 'malformed';

/** The deployment's key checksum: makes keys, and tells a key it made from any other text. */
export class KeyChecksum {
  constructor(private readonly secret: Buffer) {}

  /** A new key: shown once to whoever made it, never stored. */
  make(): string {
    const body = `${API_KEY_PREFIX}${randomBase62()}`;
    return body + this.tag(body);
  }

  formOf(key: string): KeyForm {
    if (KEY_SHAPE.test(key)) {
      const body = key.slice(0, -TAG_LENGTH);
      // Constant time: the answer's timing must not say how many characters of a guessed tag were right.
      return timingSafeEqual(Buffer.from(this.tag(body)), Buffer.from(key.slice(-TAG_LENGTH))) ? 'current' : 'malformed';
    }
    return isLegacyApiKey(key) ? 'legacy' : 'malformed';
  }

  private tag(body: string): string {
    return base62(createHmac('sha256', this.secret).update(body).digest().readBigUInt64BE(0), TAG_LENGTH);
  }
}

/** A key of the form made before keyed checksums: `xr_` + 43 + a CRC32 anyone can compute. */
export function isLegacyApiKey(key: string): boolean {
  return LEGACY_SHAPE.test(key) && base62(BigInt(crc32(key.slice(0, -LEGACY_CHECK_LENGTH))), LEGACY_CHECK_LENGTH) === key.slice(-LEGACY_CHECK_LENGTH);
}

/** Whether a text could be a key of either form, by its shape alone (no secret): what the doors that refuse keys look for. */
export function hasApiKeyShape(key: string): boolean {
  return KEY_SHAPE.test(key) || LEGACY_SHAPE.test(key);
}

/** Secrets of the deployment that live in its database (made by `xmlrest db init`). */
export const SECRET_TABLE = `create table if not exists xmlrest_secret (
  name varchar(64) character set ascii collate ascii_bin not null primary key,
  value binary(32) not null,
  created_on timestamp not null default current_timestamp
) engine = InnoDB`;

const KEY_SECRET = 'api key checksum';
/** A server that found no secret asks again after this long: a key made meanwhile (the first one) is then known. */
const ABSENT_MS = 5000;

/**
 * The key checksum secret of the database: read once and kept (it never changes), made by the first door that
 * makes a key. A server that finds none (no key of the current form exists yet) asks again at most every 5 s.
 */
export class KeySecret {
  private known: KeyChecksum | undefined;
  private reading: Promise<KeyChecksum | undefined> | undefined;
  private absentAt = 0;

  constructor(private readonly db: Queryable) {}

  /** The checksum, or undefined while the database holds no secret (then no key of the current form exists). */
  async checksum(): Promise<KeyChecksum | undefined> {
    if (this.known !== undefined) return this.known;
    if (Date.now() - this.absentAt < ABSENT_MS) return undefined;
    this.reading ??= this.read().finally(() => {
      this.reading = undefined;
    });
    return this.reading;
  }

  /** The checksum, making the secret when the database has none yet (the doors that make keys). */
  async made(): Promise<KeyChecksum> {
    const known = await this.checksum();
    if (known !== undefined) return known;
    // Two doors making the first key at once: one insert wins, and both read the winner's.
    try {
      await this.db.write('insert ignore into xmlrest_secret (name, value) values (?, ?)', [KEY_SECRET, randomBytes(32)]);
    } catch (error) {
      if (errnoOf(error) === NO_TABLE) throw new Error('the database has no xmlrest_secret table, where API keys are made from: run xmlrest db init');
      throw error;
    }
    this.absentAt = 0;
    const read = await this.read();
    if (read === undefined) throw new Error('the API key checksum secret was made but cannot be read');
    return read;
  }

  private async read(): Promise<KeyChecksum | undefined> {
    let rows: { value: Buffer }[];
    try {
      rows = await this.db.select<{ value: Buffer }>('select value from xmlrest_secret where name = ?', [KEY_SECRET]);
    } catch (error) {
      if (errnoOf(error) !== NO_TABLE) throw error;
      rows = [];
    }
    const value = rows[0]?.value;
    if (value === undefined) {
      this.absentAt = Date.now();
      return undefined;
    }
    this.known = new KeyChecksum(Buffer.from(value));
    return this.known;
  }
}
