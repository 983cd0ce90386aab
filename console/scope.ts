import { HttpError } from '../runtime/errors.js';
import type { BackendModule } from '../runtime/index.js';
import type { UserRow, UserStore } from './store.js';

/**
 * What a backend's console may change in the user tables that every backend
 * shares (docs/internals/contract.md §6). Roles there are plain names, so without a
 * rule the operator of one backend could grant themselves another backend's
 * console role, or any role another backend checks, and reach everything.
 *
 * A backend *uses* a role when one of its resources names it (any method's
 * `auth`), when it is its console role, or when it was created on its console
 * (xmlrest_role.backend). Its console then
 * - grants, revokes and deletes only roles its backend uses, and never another backend's console role;
 * - creates only roles no other backend uses;
 * - names on a resource only roles its backend uses already, or that no other backend uses;
 * - changes no user who holds another backend's console role (grant, revoke, disable, enable, password, removal).
 *
 * Other backends are every other backend served here, whatever tables they check (an AuthQuery of one's own
 * may read the default tables too), and those whose consoles created roles in the catalog.
 */
export class RoleScope {
  private constructor(
    readonly backend: BackendModule,
    /** Role name to the other backends that use it. */
    private readonly others: ReadonlyMap<string, readonly string[]>,
    /** Console role to the other backends it opens (never this backend's own console role). */
    private readonly consoles: ReadonlyMap<string, readonly string[]>,
    private readonly own: ReadonlySet<string>,
    /** Every role created on a console, whichever. */
    readonly created: readonly string[],
  ) {}

  static async of(backend: BackendModule, backends: readonly BackendModule[], store: UserStore): Promise<RoleScope> {
    const catalog = await store.catalog();
    const others = new Map<string, string[]>();
    const consoles = new Map<string, string[]>();
    const add = (map: Map<string, string[]>, role: string, name: string) => {
      const list = map.get(role) ?? [];
      if (!list.includes(name)) list.push(name);
      map.set(role, list);
    };
    for (const other of backends) {
      if (other.name === backend.name) continue;
      for (const role of rolesUsedBy(other)) add(others, role, other.name);
      if (other.consoleRole !== backend.consoleRole) add(consoles, other.consoleRole, other.name);
    }
    const own = new Set(rolesUsedBy(backend));
    for (const [role, creator] of catalog) {
      if (creator === backend.name) own.add(role);
      else if (creator !== '') add(others, role, creator);
    }
    return new RoleScope(backend, others, consoles, own, [...catalog.keys()]);
  }

  /** Whether this backend uses the role. */
  uses(role: string): boolean {
    return this.own.has(role);
  }

  /** Whether its console may grant, revoke or delete the role. */
  grantable(role: string): boolean {
    return this.own.has(role) && !this.consoles.has(role);
  }

  /** Whether the console shows the role: its own, and those no backend uses (which a resource may name). */
  listed(role: string): boolean {
    return this.own.has(role) || !this.others.has(role);
  }

  /** 403 unless the console may grant, revoke or delete the role. */
  requireGrantable(role: string): void {
    const name = this.backend.name;
    const opens = this.consoles.get(role);
    if (opens) throw refused(`The role ${role} opens the console of ${list(opens)}: the console of ${name} does not grant, revoke or delete it`);
    if (this.own.has(role)) return;
    const users = this.others.get(role);
    if (users) throw refused(`The role ${role} belongs to ${list(users)}, and ${name} does not use it: manage it on the console of ${list(users)}`);
    throw refused(
      `${name} does not use the role ${role}: no resource of ${name} names it, it is not its console role, and it was not created on its console (create it on the Roles page first)`,
    );
  }

  /** 403 when another backend uses the role: a role created here belongs to this backend. */
  requireNew(role: string): void {
    const users = this.own.has(role) ? undefined : this.others.get(role);
    if (users) throw refused(`The role ${role} belongs to ${list(users)}: the console of ${this.backend.name} creates roles of its own only`);
  }

  /**
   * 403 when a resource would name a role that other backends use and this one does not yet: the console
   * could then grant it. Sharing a role between backends is a change to resources/ in the repository.
   */
  requireNameable(roles: readonly string[]): void {
    for (const role of roles) {
      const users = this.own.has(role) ? undefined : this.others.get(role);
      if (users) {
        throw refused(
          `The role ${role} belongs to ${list(users)}: naming it on a resource of ${this.backend.name} here would let this console grant it. To share it, change resources/ in the repository and deploy`,
        );
      }
    }
  }

  /** 403 when the user holds another backend's console role: only that backend's operators change them. */
  requireChangeable(user: UserRow): void {
    for (const role of user.roles) {
      const opens = this.consoles.get(role);
      if (opens) {
        throw refused(
          `${user.user_name} holds ${role}, the console role of ${list(opens)}: the console of ${this.backend.name} does not change a user who operates another backend`,
        );
      }
    }
  }
}

/** The roles a backend's resources name (every method's own access) and its console role. */
export function rolesUsedBy(backend: BackendModule): Set<string> {
  const roles = new Set<string>([backend.consoleRole]);
  for (const resource of backend.resources) {
    for (const operation of Object.values(resource.operations)) {
      const access = operation!.access;
      if (access !== null && access !== '*') for (const role of access) roles.add(role);
    }
  }
  return roles;
}

function list(backends: readonly string[]): string {
  const named = backends.map((name) => `backend ${name}`);
  return named.length === 1 ? named[0]! : `${named.slice(0, -1).join(', ')} and ${named.at(-1)}`;
}

function refused(message: string): HttpError {
  return new HttpError(403, message, {}, 'console_scope');
}
