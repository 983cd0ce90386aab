import { MAX_PASSWORD_BYTES, MAX_USER_BYTES } from '../runtime/auth/bounds.js';
import type { PluginRef, Project } from './ir.js';

/**
 * Plug-ins that ship with xmlrest. A backend.xml `<Plugin>` adds its own, or an
 * alias so that resource files ported from elsewhere keep their class names.
 */
export const BUILTIN_PLUGINS: ReadonlyMap<string, PluginRef> = new Map([
  [
    'xmlrest.auth.TokenGenerator',
    {
      classname: 'xmlrest.auth.TokenGenerator',
      module: 'auth/tokens/token-b.ts',
      exportName: 'tokenGenerator',
      builtin: true,
      // Credentials: a request parameter that reaches these arguments is bounded before any step runs.
      argBytes: { user: MAX_USER_BYTES, password: MAX_PASSWORD_BYTES },
      // A password, whatever the parameter that carries it is called (`$pw`, `$pin`): never in the audit.
      secretArgs: ['password'],
      // A token request: its fields, the credentials among them, come from the body only (never a URL).
      login: true,
    },
  ],
]);

/**
 * A request parameter passed straight to a plug-in argument with a byte limit
 * (the token generator's user name and password) takes that limit: the
 * runtime refuses a longer value with 400 before the first step runs, so an
 * over-long credential costs neither a query nor a hash. One passed to a
 * secret argument (the password) is marked so: the audit leaves it out
 * whatever its name (runtime/audit/).
 */
export function applyArgumentBounds(project: Project): void {
  for (const backend of project.backends) {
    for (const resource of backend.resources) {
      for (const operation of resource.operations) {
        for (const step of operation.steps) {
          if (step.kind !== 'execute' || !step.plugin.argBytes) continue;
          for (const arg of step.args) {
            const maxBytes = step.plugin.argBytes[arg.name];
            if (maxBytes === undefined || arg.bind.kind !== 'param') continue;
            const known = operation.paramTypes[arg.bind.name];
            const bounded =
              known && known.kind === 'string' ? known : { kind: 'string' as const, nullable: false, ...(known?.column ? { column: known.column } : {}) };
            const secret = known?.secret === true || step.plugin.secretArgs?.includes(arg.name) === true;
            operation.paramTypes[arg.bind.name] = {
              ...bounded,
              maxBytes: Math.min(maxBytes, known?.maxBytes ?? maxBytes),
              ...(secret ? { secret: true } : {}),
            };
          }
        }
      }
    }
  }
}
