import type Koa from 'koa';
import type { FieldReader } from '../../body.js';
import type { ParamSpecs } from '../../contract.js';
import { badRequest, HttpError } from '../../errors.js';
import { readParams } from '../../params.js';
import { MAX_PASSWORD_BYTES, MAX_USER_BYTES } from '../bounds.js';
import type { Guard } from '../guard.js';
import { type CredentialRules, screenLogin } from '../transport/transport.js';
import { GRANT_ENDS_COLUMN_NAME } from '../users/user-tables.js';

const FIELDS = {
  auth: { kind: 'string', nullable: false, maxBytes: 16 },
  userid: { kind: 'string', nullable: false, maxBytes: MAX_USER_BYTES },
  password: { kind: 'string', nullable: false, maxBytes: MAX_PASSWORD_BYTES },
} as const satisfies ParamSpecs;

/**
 * Token shape A (docs/internals/contract.md §5): `POST {base}/<backend>/` with
 * `auth=bearer&userid=..&password=..` answers `{"token", "type": "Bearer"}`,
 * one token whose `aud` holds every role the user holds.
 */
export function tokenShapeA(guard: Guard, readFields: FieldReader, credentials: CredentialRules): Koa.Middleware {
  return async (ctx) => {
    screenLogin(ctx, credentials);
    // Body only: a password in the query string would end up in access logs and browser history.
    // Bounded before anything else happens: no query and no hash for an over-long name or password.
    const fields = readParams<Record<keyof typeof FIELDS, string>>({}, await readFields(ctx, 10).body, FIELDS);
    if (fields.auth.toLowerCase() !== 'bearer') throw badRequest("Parameter 'auth' must be 'bearer'");
    ctx.status = 200;
    const { token, refreshToken } = await issueForCredentials(guard, fields.userid, fields.password, ctx.ip);
    ctx.body = refreshToken === undefined ? { token, type: 'Bearer' } : { token, type: 'Bearer', refresh_token: refreshToken };
  };
}

async function issueForCredentials(guard: Guard, user: string, pass: string, address: string): Promise<{ token: string; refreshToken?: string }> {
  if (guard.tokens === null) throw new Error(`backend "${guard.backend.name}" has no JWT key: set JWT_SECRET`);
  const { rows, reason, tenant } = await guard.credentials.check(user, pass, address);
  const first = rows[0];
  if (first === undefined || first.sub === null || first.sub === undefined) throw new HttpError(401, 'Invalid credentials', {}, reason ?? 'unknown_user');
  const roles = [
    ...new Set(
      rows
        .map((row) => row.aud)
        .filter((aud) => aud !== null && aud !== undefined)
        .map(String),
    ),
  ];
  if (roles.length === 0) throw new HttpError(401, 'Invalid credentials', {}, 'unknown_user');
  // On the default tables each row says when its grant ends (credentials.ts): the token ends by the first of them.
  const ends = GRANT_ENDS_COLUMN_NAME in first ? new Map(rows.map((row) => [String(row.aud), endOf(row[GRANT_ENDS_COLUMN_NAME])])) : undefined;
  return guard.issue(String(first.sub), roles.length === 1 ? roles[0]! : roles, ends, tenant);
}

function endOf(value: unknown): number | null {
  return value === null || value === undefined ? null : Math.floor(Number(value));
}
