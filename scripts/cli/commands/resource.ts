import type { Command } from 'commander';
import { databaseUrlFromEnvironment } from '../../../generator/environment.js';
import { HTTP_METHODS, type HttpMethod, parseAuth } from '../../../runtime/contract.js';
import { type CommandKit, requireBuildTools, UsageError } from '../command.js';

/** `xmlrest resource auth`: who may call a resource, set from a terminal as the console sets it. */
export function registerResourceCommands(xmlrest: Command, { command, done }: CommandKit): void {
  const resource = command(xmlrest, 'resource', 'resource files');
  command(
    resource,
    'auth',
    'set who may call a resource, or one of its methods (docs/internals/contract.md §8): rewrites its XML file and regenerates, as the console does; the file is put back when the project does not generate with the change',
  )
    .argument('<resource>', 'BACKEND/NAME, or BACKEND/NAME@VERSION (default 1.0)')
    .option('--method <method>', 'the method’s own rule, which replaces the resource’s for that method')
    .option('--roles <roles>', 'role names separated by spaces: a caller holding any one of them may call')
    .option('--any', 'any signed-in caller, whatever its roles (*)')
    .option('--public', 'no credentials needed: the resource without auth; with --method, auth="" on that method')
    .option('--inherit', 'with --method: remove the method’s own rule, so that it follows the resource’s')
    .action(async (target: string, options: ResourceAuthOptions) => {
      requireBuildTools('xmlrest resource auth');
      done(await resourceAuthCommand(target, options));
    });
}

interface ResourceAuthOptions {
  method?: string;
  roles?: string;
  any?: boolean;
  public?: boolean;
  inherit?: boolean;
}

const RESOURCE_ARGUMENT = /^([a-z][a-z0-9_-]*)\/([a-z][a-z0-9_-]*)(?:@([0-9]+(?:\.[0-9]+)*))?$/;

/**
 * `xmlrest resource auth BACKEND/NAME[@VERSION] [--method M] (--roles "a b" | --any | --public | --inherit)`:
 * the console's set-auth from a terminal, through the same change (generator/auth-change.ts). Exit 0 done,
 * 1 when the project does not generate with it (the file is put back), 2 on a wrong command line or value.
 */
async function resourceAuthCommand(target: string, options: ResourceAuthOptions): Promise<number> {
  const parsed = RESOURCE_ARGUMENT.exec(target);
  if (!parsed) throw new UsageError(`name the resource as BACKEND/NAME or BACKEND/NAME@VERSION, not ${target}`);
  const [, backend, name, version = '1.0'] = parsed as unknown as [string, string, string, string | undefined];
  const chosen = (['roles', 'any', 'public', 'inherit'] as const).filter((option) => options[option] !== undefined);
  if (chosen.length !== 1) throw new UsageError('resource auth takes one of --roles "ROLE ...", --any, --public or --inherit');
  let method: HttpMethod | undefined;
  if (options.method !== undefined) {
    method = options.method.toUpperCase() as HttpMethod;
    if (!HTTP_METHODS.includes(method)) throw new UsageError(`--method is one of ${HTTP_METHODS.join(', ')}, not ${options.method}`);
  }
  if (options.inherit && !method) throw new UsageError('--inherit removes a method’s own rule: give --method');
  let auth: string | null;
  if (options.roles !== undefined) {
    // --roles is a list of names: with or without --method, one with no name in it is refused, never public.
    const checked = parseAuth(options.roles, 'Resource');
    if (!checked.ok) throw new UsageError(checked.message);
    auth = options.roles;
  } else if (options.any) auth = '*';
  else if (options.public) auth = method ? '' : null;
  else auth = null;

  const root = process.cwd();
  const { changeAuth, findResourceFile, regenerateProject } = await import('../../../generator/index.js');
  const source = findResourceFile(root, 'resources', backend, name, version);
  if (!source) throw new UsageError(`no resource ${name} v${version} in resources/${backend}/`);
  const result = await changeAuth({
    root,
    source,
    method,
    auth,
    // Quiet: the outcome is said once below, the generator's reasons included when it refuses.
    regenerate: () => regenerateProject({ root, check: false, databaseUrl: databaseUrlFromEnvironment(root) }),
  });
  if (!result.ok) {
    if (result.reason === 'refused') {
      process.stderr.write(`xmlrest: ${result.message}\n`);
      return 1;
    }
    throw new UsageError(result.message);
  }
  const shown = (value: string | null) =>
    value === null ? (method ? 'inherits the resource’s' : 'public') : value === '' ? 'public' : value === '*' ? '* (any signed-in caller)' : value;
  console.log(
    `${source}: ${name} v${version}${method ? ` ${method}` : ''}: ${shown(result.before)} -> ${shown(result.after)}; generated/ and access.lock rewritten`,
  );
  return 0;
}
