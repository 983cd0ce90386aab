import type { Command } from 'commander';
import { checkRoleName, checkUserName } from '../../../console/names.js';
import { setUserTenant } from '../../../console/user-tenant.js';
import { credentialProblem, MAX_PASSWORD_BYTES } from '../../../runtime/auth/bounds.js';
import { addUser, queryableOf, recordFromCli, userIdOf } from '../../schema.js';
import { type CommandKit, generatedBackends, UsageError } from '../command.js';
import { readPasswordFromStdin } from '../password-stdin.js';
import { checkedTenant, TenantUsage, type UserTenantTarget, userTenantTarget } from '../user-tenant.js';

/** `xmlrest user add` and `xmlrest user tenant`: users of the default tables. */
export function registerUserCommands(xmlrest: Command, { command, withConnection, done }: CommandKit): void {
  const user = command(xmlrest, 'user', 'users of the default tables');
  command(user, 'add', 'create a user, with roles')
    .argument('<name>', 'the user name (NFC-normalised; no control, zero-width or bidirectional characters)')
    .option('--password <password>', `the password (at most ${MAX_PASSWORD_BYTES} bytes; stored as an argon2id hash); visible in shell history and ps`)
    .option('--password-stdin', 'read the password from stdin, one line (printf \'%s\' "$PASSWORD" | xmlrest user add NAME --password-stdin)')
    .option('--role <role...>', 'a role to grant (repeat for several)')
    .option('--tenant <tenant>', 'the user’s tenant, on a project with a tenant backend (<Tenant user_column="…"/>), checked against its type')
    .option('--backend <backend>', 'with --tenant: the backend whose tenant it is, when the project’s tenant backends read different columns')
    .action(async (name: string, options: { password?: string; passwordStdin?: boolean; role?: string[]; tenant?: string; backend?: string }) => {
      const checked = checkUserName(name);
      if (!checked.ok) throw new UsageError(checked.message);
      if ((options.password === undefined) === !options.passwordStdin)
        throw new UsageError('give the password with exactly one of --password or --password-stdin');
      if (options.backend !== undefined && options.tenant === undefined) throw new UsageError('--backend goes with --tenant');
      // Checked before the password is read or anything is written: a wrong tenant creates nobody.
      const target = options.tenant === undefined ? undefined : await tenantTarget(options.backend);
      const tenant = target === undefined ? undefined : usage(() => checkedTenant(target, options.tenant!));
      const password = options.password ?? (await readPasswordFromStdin('xmlrest user add NAME --password-stdin'));
      if (credentialProblem('password', password)) throw new UsageError(`a password has at most ${MAX_PASSWORD_BYTES} bytes`);
      const roles = (options.role ?? []).map((role) => {
        const checkedRole = checkRoleName(role);
        if (!checkedRole.ok) throw new UsageError(checkedRole.message);
        return checkedRole.name;
      });
      const id = await withConnection((connection) =>
        addUser(connection, checked.name, password, roles, target && tenant !== undefined ? { column: target.column, tenant } : undefined),
      );
      const withTenant = tenant === undefined ? '' : ` in tenant ${tenant}`;
      console.log(`created user ${checked.name} (user_id ${id})${roles.length ? ` with ${roles.join(', ')}` : ''}${withTenant}`);
      done(0);
    });

  command(user, 'tenant', 'move a user to another tenant; their tokens, sessions and API keys end on every backend that reads it')
    .argument('<name>', 'the user name')
    .argument('[tenant]', 'the new tenant, checked against the tenant’s type')
    .option('--none', 'take the user’s tenant away: every tenant backend then refuses them (403 no_tenant)')
    .option('--backend <backend>', 'the backend whose tenant it is, when the project’s tenant backends read different columns')
    .action(async (name: string, given: string | undefined, options: { none?: boolean; backend?: string }) => {
      if ((given === undefined) === !options.none) throw new UsageError('give the new tenant, or --none to take it away');
      const target = await tenantTarget(options.backend);
      const tenant = given === undefined ? null : usage(() => checkedTenant(target, given));
      const said = await withConnection(async (connection) => {
        const id = await userIdOf(connection, name);
        if (id === undefined) throw new UsageError(`no such user: ${name}`);
        const { keys, sessions } = await setUserTenant(queryableOf(connection), target.column, target.readers, id, tenant);
        const ended = `${sessions > 0 ? `, ${sessions} session(s) ended` : ''}${keys > 0 ? `, ${keys} API key${keys === 1 ? '' : 's'} revoked` : ''}`;
        await recordFromCli(connection, 'set tenant', name, `${tenant ?? 'none'}${ended}`);
        const on = target.readers.map((backend) => backend.name).join(', ');
        return `${tenant === null ? `took the tenant of ${name} away` : `moved ${name} to tenant ${tenant}`}; revoked every token of ${name} on ${on} issued until now${ended}`;
      });
      console.log(said);
      console.log('running servers refuse the old tokens within their revocation poll (5 s by default)');
      done(0);
    });
}

async function tenantTarget(backend: string | undefined): Promise<UserTenantTarget> {
  return usage(async () => userTenantTarget(await generatedBackends(), backend));
}

/** A TenantUsage as the command line's usage error (exit 2). */
function usage<T>(work: () => T): T {
  const fail = (error: unknown): never => {
    if (error instanceof TenantUsage) throw new UsageError(error.message);
    throw error;
  };
  try {
    const result = work();
    return (result instanceof Promise ? result.catch(fail) : result) as T;
  } catch (error) {
    return fail(error);
  }
}
