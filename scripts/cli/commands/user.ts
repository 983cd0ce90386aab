import type { Command } from 'commander';
import { checkRoleName, checkUserName } from '../../../console/names.js';
import { credentialProblem, MAX_PASSWORD_BYTES } from '../../../runtime/auth/bounds.js';
import { addUser } from '../../schema.js';
import { type CommandKit, UsageError } from '../command.js';
import { readPasswordFromStdin } from '../password-stdin.js';

/** `xmlrest user add`: a user of the default tables. */
export function registerUserCommands(xmlrest: Command, { command, withConnection, done }: CommandKit): void {
  const user = command(xmlrest, 'user', 'users of the default tables');
  command(user, 'add', 'create a user, with roles')
    .argument('<name>', 'the user name (NFC-normalised; no control, zero-width or bidirectional characters)')
    .option('--password <password>', `the password (at most ${MAX_PASSWORD_BYTES} bytes; stored as an argon2id hash); visible in shell history and ps`)
    .option('--password-stdin', 'read the password from stdin, one line (printf \'%s\' "$PASSWORD" | xmlrest user add NAME --password-stdin)')
    .option('--role <role...>', 'a role to grant (repeat for several)')
    .action(async (name: string, options: { password?: string; passwordStdin?: boolean; role?: string[] }) => {
      const checked = checkUserName(name);
      if (!checked.ok) throw new UsageError(checked.message);
      if ((options.password === undefined) === !options.passwordStdin)
        throw new UsageError('give the password with exactly one of --password or --password-stdin');
      const password = options.password ?? (await readPasswordFromStdin('xmlrest user add NAME --password-stdin'));
      if (credentialProblem('password', password)) throw new UsageError(`a password has at most ${MAX_PASSWORD_BYTES} bytes`);
      const roles = (options.role ?? []).map((role) => {
        const checkedRole = checkRoleName(role);
        if (!checkedRole.ok) throw new UsageError(checkedRole.message);
        return checkedRole.name;
      });
      const id = await withConnection((connection) => addUser(connection, checked.name, password, roles));
      console.log(`created user ${checked.name} (user_id ${id})${roles.length ? ` with ${roles.join(', ')}` : ''}`);
      done(0);
    });
}
