import type Router from '@koa/router';
import type { RouterContext } from '@koa/router';
import bodyParser from 'koa-bodyparser';
import { parseAuth } from '../runtime/contract.js';
import { HttpError } from '../runtime/errors.js';
import type { Access, BackendModule, Database, ReloadableApp, ResourceModule } from '../runtime/index.js';
import type { Logger } from '../runtime/log.js';
import { AuditLog } from './audit.js';
import { type UserRow, UserStore } from './store.js';

/** What the console is given by the server it is part of (scripts/serve.ts, scripts/dev.ts). */
export interface ConsoleOptions {
  basePath: string;
  /** The backends served now (they change when a role is set). */
  backends: () => readonly BackendModule[];
  database: Database;
  /** The project folder that resource sources are relative to. */
  root: string;
  /** Regenerates the project and swaps the new routes into the running server; `errors` are the generator's. */
  regenerate: () => Promise<{ ok: boolean; ms: number; errors?: readonly string[] }>;
  /** The built page (vite build of console/ui). */
  assetsDir: string;
  /**
   * The server the console is part of (late-bound: the console is among its middleware). Operators sign in
   * through the very guard the API uses, so that a revoked token does not open the console, guesses here
   * count with guesses at the API, and a role change here reaches the API's remembered logins. A user's MCP tools
   * are the ones its endpoints serve, by its own rule (console/tools.ts).
   */
  server: () => Pick<ReloadableApp, 'guardFor' | 'toolsFor' | 'revocations' | 'peers'> | undefined;
  logger?: Logger;
  /** Refuse credentials sent over plain HTTP from anywhere but loopback (REQUIRE_TLS_FOR_CREDENTIALS). */
  requireTlsForCredentials?: boolean;
}

export interface State {
  requestId: string;
  backend: BackendModule;
  /** The signed-in operator's user id. */
  operator: string;
  /** What the operator signed in with: the history says it beside their name. */
  credential: 'password' | 'token';
}

export type ConsoleRouter = Router<State>;
export type ConsoleContext = RouterContext<State>;

/** What every part of the console API shares. */
export class Console {
  readonly store: UserStore;
  readonly audit: AuditLog;
  /** Console calls carry small JSON bodies only. */
  readonly json = bodyParser({ enableTypes: ['json'], jsonLimit: '64kb', strict: true });

  constructor(readonly options: ConsoleOptions) {
    this.store = new UserStore(options.database);
    this.audit = new AuditLog(options.database);
  }

  /** Records a change the operator made (console/audit.ts), and with which credential: `bob (2) by password`, `by token`. */
  async record(ctx: ConsoleContext, action: string, target: string, detail = ''): Promise<void> {
    const id = Number(ctx.state.operator);
    const name = manageable(ctx.state.backend) && Number.isSafeInteger(id) ? (await this.store.user(id))?.user_name : undefined;
    const who = name ? `${name} (${id})` : ctx.state.operator;
    await this.audit.record({ backend: ctx.state.backend.name, actor: `${who} by ${ctx.state.credential}`, action, target, detail, address: ctx.ip });
  }

  /** Reads the change just made through the user tables' triggers now, so that this server sees it at once. */
  async refresh(): Promise<void> {
    await this.options.server()?.revocations.refresh();
  }

  /** The user of an id in a path, read once; 400 for what is no id, 404 for nobody. */
  async existingUser(id: string): Promise<UserRow> {
    if (!/^[0-9]{1,10}$/.test(id)) throw new HttpError(400, 'Not a user id');
    const user = await this.store.user(Number(id));
    if (!user) throw new HttpError(404, 'No such user');
    return user;
  }
}

/**
 * The console manages the default user tables only. A backend whose
 * AuthQuery reads other tables keeps its users there: writing to the default
 * ones would change nothing it checks.
 */
export function manageable(backend: BackendModule): boolean {
  return backend.defaultTables;
}

export function requireManageable(backend: BackendModule): void {
  if (!manageable(backend)) {
    throw new HttpError(409, `Backend ${backend.name} checks credentials with its own AuthQuery over other tables: manage its users and roles there`);
  }
}

/**
 * An `auth` as the console's JSON carries it: a string is the attribute's
 * value as the file would hold it, checked by the rule every door shares
 * (`parseAuth`, docs/internals/contract.md §8), for the resource or for one method
 * (where exactly `""` is a public method); null is no attribute at all (a
 * public resource; a method that inherits the resource's). A missing `auth`
 * is a mistake: public is said explicitly.
 */
export function parseAccess(value: unknown, on: 'Resource' | 'Request'): { auth: string | null; access: Access | 'inherit' } {
  if (value === null) return { auth: null, access: on === 'Resource' ? null : 'inherit' };
  if (typeof value !== 'string') throw new HttpError(400, 'auth is role names separated by spaces, *, or null');
  const checked = parseAuth(value, on);
  if (!checked.ok) throw new HttpError(400, checked.message);
  return { auth: value, access: checked.access };
}

/** The access a resource's own `auth` attribute gives the methods that do not override it. */
export function resourceAccess(resource: ResourceModule): Access {
  if (resource.auth === null) return null;
  const checked = parseAuth(resource.auth, 'Resource');
  // The generator refused any other value: a module holding one is not ours.
  if (!checked.ok) throw new Error(`${resource.source}: ${checked.message}`);
  return checked.access;
}

/** The roles an access names (none for public or `*`). */
export function rolesOf(access: Access): string[] {
  return access === null || access === '*' ? [] : [...access];
}

export function describe(basePath: string, backend: BackendModule, resource: ResourceModule) {
  return {
    name: resource.name,
    version: resource.version,
    path: `${basePath}/${backend.name}/v${resource.version}/${resource.name}`,
    methods: Object.keys(resource.operations),
    auth: resource.auth,
    /** Each method's access, a Request's own `auth` included: `public`, `*`, or the roles. */
    access: Object.fromEntries(
      Object.entries(resource.operations).map(([method, operation]) => [
        method,
        operation!.access === null ? 'public' : operation!.access === '*' ? '*' : [...operation!.access],
      ]),
    ),
    source: resource.source,
    /** Each method's safe writes (docs/internals/contract.md §15), for the methods that have any. */
    safeWrites: Object.fromEntries(
      Object.entries(resource.operations).flatMap(([method, operation]) => {
        const { validator, version, idempotency, maxAge } = operation!;
        const shown = {
          ...(validator ? { validator } : {}),
          ...(version ? { version } : {}),
          ...(idempotency ? { idempotency } : {}),
          ...(maxAge !== undefined ? { maxAge } : {}),
        };
        return Object.keys(shown).length > 0 ? [[method, shown]] : [];
      }),
    ),
  };
}

export function label(resource: ResourceModule): string {
  return `${resource.name} v${resource.version}`;
}

export function cursor(value: unknown): number {
  return typeof value === 'string' && /^[0-9]{1,10}$/.test(value) ? Number(value) : 0;
}

export const PAGE_SIZE = 50;
