import { claimText, rolesOf, type SelectUsers, userIdOf } from '../runtime/auth/issuer/claims.js';
import type { Access, BackendModule, HttpMethod } from '../runtime/index.js';

/**
 * Who may call what, and why (docs/internals/contract.md §8): the routes of the
 * backends served, each with the access its module hard-wires, and the
 * answer to "may this user call this route?". The console and
 * `xmlrest explain` give the same answers from here.
 */
export interface RouteAccess {
  backend: string;
  /** The served path without BASE_PATH, as access.lock writes it. */
  path: string;
  method: HttpMethod;
  access: Access;
}

export function routesOf(backends: readonly BackendModule[]): RouteAccess[] {
  return backends.flatMap((backend) =>
    backend.resources.flatMap((resource) =>
      Object.entries(resource.operations).map(([method, operation]) => ({
        backend: backend.name,
        path: `/${backend.name}/v${resource.version}/${resource.name}`,
        method: method as HttpMethod,
        access: operation!.access,
      })),
    ),
  );
}

/** Whether a user holding `holds` is admitted; `holds` null for an anonymous caller. */
export function admits(access: Access, holds: readonly string[] | null): boolean {
  if (access === null) return true;
  if (holds === null) return false;
  // With the default auth queries a user holding no role gets no row: to them `*` is a wrong password.
  if (access === '*') return holds.length > 0;
  return access.some((role) => holds.includes(role));
}

export interface Explanation {
  /** Null when it cannot be told: a backend with its own AuthQuery gives a user's roles only for their password. */
  allowed: boolean | null;
  backend: string;
  /** `public`, `*` (any authenticated user), or the roles any one of which admits. */
  needs: 'public' | '*' | string[];
  /** The roles the user holds; null when they cannot be known (a backend with its own user tables, or no such user). */
  holds: string[] | null;
  /** The roles whose grant ends, each with its end (ISO), when the user tables say so (runtime/auth/users/grants.ts). */
  ends?: Record<string, string>;
  method: HttpMethod;
  path: string;
  /** Why, in words. */
  reason: string;
}

/** Finds the route (a trailing slash or none); undefined when no backend serves that method at that path. */
export function findRoute(routes: readonly RouteAccess[], method: string, path: string): RouteAccess | undefined {
  const wanted = path.replace(/\/+$/, '');
  return routes.find((route) => route.method === method.toUpperCase() && route.path === wanted);
}

export function explain(route: RouteAccess, user: string, holds: string[] | null): Explanation {
  const needs = route.access === null ? 'public' : route.access === '*' ? '*' : [...route.access];
  const allowed = admits(route.access, holds);
  let reason: string;
  if (route.access === null) reason = `${route.method} ${route.path} is public: anyone may call it`;
  else if (holds === null) reason = `the roles of ${user} are not known here`;
  else if (allowed)
    reason =
      route.access === '*' ? `${user} is an authenticated user with a role` : `${user} holds ${route.access.filter((role) => holds.includes(role)).join(', ')}`;
  else reason = route.access === '*' ? `${user} holds no role at all` : `${user} holds none of ${route.access.join(', ')}`;
  return { allowed, backend: route.backend, needs, holds, method: route.method, path: route.path, reason };
}

/**
 * The same answer for a user of an outside issuer (docs/internals/contract.md §9), from a token's claims: which of the
 * backend's issuers it is, whether its audience is accepted, the roles its claims give after mapping, and
 * the user id the server would bind to `$uid` (through the issuer's UserQuery when it has one, when `select`
 * is given). The token's signature and times are not the question here: only what its claims would admit.
 */
export async function explainClaims(
  route: RouteAccess,
  backend: BackendModule,
  payload: unknown,
  select?: SelectUsers,
): Promise<Explanation & { user: string }> {
  const claims = typeof payload === 'object' && payload !== null && !Array.isArray(payload) ? (payload as Record<string, unknown>) : {};
  const iss = typeof claims.iss === 'string' ? claims.iss : undefined;
  const denied = (user: string, reason: string) => {
    const answer = explain(route, user, null);
    return { ...answer, user, reason: route.access === null ? answer.reason : reason };
  };
  const audience = typeof claims.aud === 'string' ? [claims.aud] : Array.isArray(claims.aud) ? claims.aud.filter((aud) => typeof aud === 'string') : [];
  if (iss !== undefined && iss === backend.issuer) {
    // One of the backend's own tokens: its roles are its aud.
    const user = claimText(claims.sub) ?? "the token's user";
    return { ...explain(route, user, audience), user };
  }
  const issuer = backend.issuers.find((candidate) => candidate.iss === iss);
  if (issuer === undefined) {
    const accepted = [backend.issuer, ...backend.issuers.map((candidate) => candidate.iss)].join(', ');
    return denied(
      "the token's user",
      `backend ${backend.name} accepts no token of the issuer ${iss === undefined ? '(none named)' : iss}: it accepts ${accepted}`,
    );
  }
  if (!audience.some((aud) => issuer.audience.includes(aud))) {
    return denied(
      "the token's user",
      `the token's audience (${audience.join(', ') || 'none'}) holds none of ${issuer.audience.join(', ')}, which ${iss} tokens need here`,
    );
  }
  const holds = rolesOf(claims, issuer, backend.consoleRole);
  if (issuer.userQuery !== null && select === undefined)
    return denied("the token's user", `issuer ${iss} maps its users with a UserQuery, which needs the database`);
  const user = await userIdOf(claims, issuer, backend.uidType, select ?? (() => Promise.resolve([])));
  if (user === undefined) {
    return denied(
      "the token's user",
      issuer.userQuery === null
        ? `the claim ${issuer.user.join('.')} is not a user id of backend ${backend.name} (${backend.uidType}): the server refuses the token (unknown_user)`
        : `the UserQuery of issuer ${iss} finds no local user for these claims: the server refuses the token (unknown_user)`,
    );
  }
  // An outside token with no role claim still holds "a role" as far as * goes: * admits any authenticated caller.
  const answer =
    route.access === '*'
      ? { ...explain(route, user, holds), allowed: true, reason: `${user} is an authenticated user of ${iss}` }
      : explain(route, user, holds);
  return { ...answer, user };
}

/**
 * On a backend with its own AuthQuery the user's roles come from that query, which needs the password
 * (docs/internals/contract.md §8): without it, a protected route's answer is "cannot tell", never a guess.
 */
export function cannotTell(route: RouteAccess, user: string, backend: string): Explanation {
  const answer = explain(route, user, null);
  if (route.access === null) return answer;
  return {
    ...answer,
    allowed: null,
    reason: `backend ${backend} checks credentials with its own AuthQuery, which gives a user's roles only for their password: without it this cannot be told (give the password, as --password-stdin does)`,
  };
}

/** What a credential check answered (runtime/auth/passwords/credentials.ts `CredentialCheck`): the query's rows, or why none. */
export interface CheckedCredentials {
  rows: Record<string, unknown>[];
  reason?: string;
}

/**
 * The answer from the backend's AuthQuery run with the user's password, as the server runs it: the roles its rows
 * give (`role_name` on Basic, `aud` on Bearer), or, for no row, that the server would refuse these credentials.
 */
export function explainChecked(route: RouteAccess, user: string, scheme: 'Basic' | 'Bearer' | null, checked: CheckedCredentials): Explanation {
  if (checked.rows.length > 0) {
    const column = scheme === 'Basic' ? 'role_name' : 'aud';
    const roles = [
      ...new Set(
        checked.rows
          .map((row) => row[column])
          .filter((role) => role !== null && role !== undefined)
          .map(String),
      ),
    ];
    return explain(route, user, roles);
  }
  const answer = explain(route, user, null);
  if (route.access === null) return answer;
  const why =
    checked.reason === 'bad_password'
      ? `the password is wrong for ${user}`
      : checked.reason === 'unknown_user'
        ? `the AuthQuery finds no row for ${user}: no such user, or one who holds no role`
        : `the AuthQuery finds no row for ${user} with that password: the password is wrong, or there is no such user`;
  return { ...answer, allowed: false, reason: `${why}; the server would refuse these credentials (401)` };
}
