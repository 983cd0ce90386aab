/** The algorithms an outside issuer's tokens may use (docs/internals/contract.md §9): public keys only, never HS* or `none`. */
export const ISSUER_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;
export type IssuerAlgorithm = (typeof ISSUER_ALGORITHMS)[number];

/** Where a claim is in a token's payload: the names from the top, such as `['realm_access', 'roles']`. */
export type ClaimPath = readonly string[];

/** How a role claim holds its names: a JSON array, one string split at spaces or commas, or a string holding a JSON array. */
export type RoleFormat = 'array' | 'space' | 'comma' | 'json';

/**
 * An identity provider whose access tokens a Bearer backend accepts beside
 * its own (docs/internals/contract.md §9, an `Issuer` in backend.xml). Its tokens are
 * told apart by `iss`, verified with the provider's public keys (JWKS), and
 * their roles and user id read from the claims these settings name.
 */
export interface IssuerSettings {
  /** The token's `iss`, matched exactly. */
  iss: string;
  /** The token's `aud` (a string or an array) must hold one of these. */
  audience: readonly string[];
  /** Where the keys are: a JWKS URL, or an OpenID Provider's discovery document naming one (read at start). */
  keys: { jwksUri: string } | { discovery: string };
  algorithms: readonly IssuerAlgorithm[];
  /** Seconds of clock difference allowed for exp, nbf and iat. */
  clockSkew: number;
  roles: { path: ClaimPath; format: RoleFormat };
  /** Provider role names to ours; a name may map to several. */
  roleMap: readonly { from: string; to: string }[];
  /** Only mapped roles count: a provider's role without a `Role` mapping is dropped. */
  mapOnly: boolean;
  /** The claim whose value is `$uid` (checked against the backend's id type), unless a user query maps it. */
  user: ClaimPath;
  /** Maps the token to a local user id (`user_id` of its first row); `binds` are the top-level claims for each `?`. */
  userQuery: { sql: string; binds: readonly string[] } | null;
  /** On a tenant backend (docs/internals/contract.md §14): the claim whose value is `$tenant` (checked against the tenant's type). */
  tenant?: ClaimPath;
}

/**
 * Why a URL is not one the server may fetch an issuer's keys or discovery
 * document from, or undefined when it is: https, or plain http to this machine
 * only (a provider beside the server, or in a test). Anything else would send
 * the server's requests, and trust the answers, over the open network. The
 * generator checks `jwks_uri` and `discovery` with it; the server, the
 * `jwks_uri` a discovery document names.
 */
export function keyUrlProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'is not a URL';
  }
  if (url.username !== '' || url.password !== '') return 'holds credentials';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol !== 'http:') return `is https (or http to a loopback address), not ${url.protocol.slice(0, -1)}`;
  return isLoopbackHost(url.hostname) ? undefined : 'is http to a host that is not loopback: use https';
}

function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127(?:\.(?:25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])){3}$/.test(hostname);
}
