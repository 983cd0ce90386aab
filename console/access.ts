import type { Access, BackendModule, HttpMethod } from '../runtime/index.js';

/**
 * Who may call what, and why (docs/contract.md §8): the routes of the
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
  allowed: boolean;
  backend: string;
  /** `public`, `*` (any authenticated user), or the roles any one of which admits. */
  needs: 'public' | '*' | string[];
  /** The roles the user holds; null when they cannot be known (a backend with its own user tables, or no such user). */
  holds: string[] | null;
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
