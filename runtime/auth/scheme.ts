import type { BackendModule } from '../contract.js';
import type { Queryable } from '../db/index.js';
import type { IssuerKeyRing } from './issuer/ring.js';
import type { CredentialChecker } from './passwords/credentials.js';
import type { JwtKey } from './tokens/jwt.js';
import type { Revocations } from './tokens/revocations.js';

/**
 * The seam every authentication scheme sits behind. A scheme reads an
 * `Authorization` header value and says who sent it (the principal), or
 * refuses with a 401 naming its own challenge. What a backend does with the
 * principal (the role check, `$uid`) is the guard's (guard.ts), the same for
 * every scheme. Adding a scheme (an API key, a JWKS issuer) is one module
 * exporting a `SchemeFactory`, named in schemes.ts.
 */
export interface Principal {
  /** The canonical text of the user's id: what `$uid` binds. */
  userId: string;
  /** Every role the user holds. */
  roles: readonly string[];
  /** The session of the token presented (docs/internals/contract.md §10), when it belongs to one. */
  sessionId?: string;
  /**
   * The outside issuer whose token it is (docs/internals/contract.md §9), absent for the backend's own users: `userId` is
   * only a claim's value there, which another issuer, or a local user, may hold too.
   */
  issuer?: string;
  /**
   * On a tenant backend (docs/internals/contract.md §14): the canonical text of the user's tenant, read where the
   * roles were read; absent when the user has none, which a tenant backend's route refuses (403 `no_tenant`).
   */
  tenant?: string;
}

/**
 * Who the principal is to xmlrest's own records (the log, the audit, the console's history): its user id, or for
 * an outside issuer's user, the issuer and the user id together (`<iss> <uid>`), so that users of two issuers, or
 * of an issuer and the backend, are never one. What the server keys by (rate limits, cursors) keeps the issuer
 * apart in the key's structure rather than in this text (scope.ts).
 */
export function principalName(principal: Pick<Principal, 'userId' | 'issuer'>): string {
  return principal.issuer === undefined ? principal.userId : `${principal.issuer} ${principal.userId}`;
}

export interface AuthScheme {
  /** The `WWW-Authenticate` value of a plain 401 on this backend. */
  readonly challenge: string;
  /** Returns who sent `header`, or throws an HttpError: 401 (with a challenge), 429 past the login limits. */
  authenticate(header: string, address: string): Promise<Principal>;
}

/** What a scheme may use: the backend, its database, and the server's shared security services. */
export interface SchemeServices {
  backend: BackendModule;
  db: Queryable;
  credentials: CredentialChecker;
  /** The token key, when the server has one (JWT_SECRET). */
  key: JwtKey | null;
  revocations: Revocations | undefined;
  /** The keys of outside issuers (docs/internals/contract.md §9), shared by every backend of the server. */
  issuerKeys: IssuerKeyRing;
}

export type SchemeFactory = (services: SchemeServices) => AuthScheme;

/** The canonical text of a user id: what `$uid` binds, and the only `sub` a token may carry. */
export function isCanonicalUid(uidType: BackendModule['uidType'], uid: string): boolean {
  if (uidType === 'integer') return /^(?:0|[1-9][0-9]{0,19})$/.test(uid);
  // Text ids: nothing a comparison could trim, fold or ignore (spaces at either end, controls, format characters).
  return uid !== '' && Buffer.byteLength(uid, 'utf8') <= 255 && !/^\s|\s$|[\p{Cc}\p{Cf}\p{Cs}]/u.test(uid);
}
