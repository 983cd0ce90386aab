import type { Command } from 'commander';
import { checkNewKey, KeyStore, parseExpiry } from '../../../console/keys.js';
import type { BackendModule } from '../../../runtime/index.js';
import { queryableOf, rolesOf, userIdOf } from '../../schema.js';
import { type CommandKit, generatedBackends, UsageError } from '../command.js';

/** `xmlrest key create|list|revoke`: API keys of backends with api_keys="on" (docs/internals/contract.md §10). */
export function registerKeyCommands(xmlrest: Command, { command, withConnection, done }: CommandKit): void {
  const key = command(xmlrest, 'key', 'API keys of backends with api_keys="on" (docs/internals/contract.md §10)');
  command(key, 'create', 'make an API key for a user; it is shown once, now, and never again')
    .requiredOption('--backend <backend>', 'the backend it opens (api_keys="on" in its backend.xml)')
    .requiredOption('--user <name>', 'the user it acts as')
    .requiredOption('--name <name>', 'what it is for, such as "nightly export"')
    .requiredOption('--role <role...>', 'a role it admits (repeat for several); the user must hold it, and keep holding it')
    .option('--expires <when>', 'an ISO time (2027-01-31T00:00Z), or a time from now: 30d, 12h, 90m')
    .option('--rate <rate>', 'its own rate limit on every route it calls, such as 1000/h')
    .action(async (options: { backend: string; user: string; name: string; role: string[]; expires?: string; rate?: string }) => {
      const consoleRoles = (await requireKeyBackend(options.backend)).map((backend) => backend.consoleRole);
      const expires = options.expires === undefined ? null : (parseExpiry(options.expires) ?? null);
      if (options.expires !== undefined && expires === null) throw new UsageError(`--expires is an ISO time or 30d, 12h, 90m, not ${options.expires}`);
      const made = await withConnection(async (connection) => {
        const id = await userIdOf(connection, options.user);
        if (id === undefined) throw new UsageError(`no such user: ${options.user}`);
        const wanted = { backend: options.backend, userId: String(id), name: options.name, roles: options.role, expires, rate: options.rate ?? null };
        const checked = checkNewKey(wanted, await rolesOf(connection, id), consoleRoles);
        if (!checked.ok) throw new UsageError(checked.message);
        return new KeyStore(queryableOf(connection)).create(wanted);
      });
      console.log(made.key);
      process.stderr.write(`key ${made.id} (${made.prefix}...) for ${options.user} on ${options.backend}: store it now, it is not shown again\n`);
      done(0);
    });
  command(key, 'list', 'list API keys (never the keys themselves: their first 8 characters)')
    .option('--backend <backend>', 'only this backend’s')
    .option('--user <name>', 'only this user’s')
    .option('--json', 'print a JSON array')
    .action(async (options: { backend?: string; user?: string; json?: boolean }) => {
      const rows = await withConnection(async (connection) => {
        let userId: string | undefined;
        if (options.user !== undefined) {
          const id = await userIdOf(connection, options.user);
          if (id === undefined) throw new UsageError(`no such user: ${options.user}`);
          userId = String(id);
        }
        return new KeyStore(queryableOf(connection)).list({ backend: options.backend, userId });
      });
      if (options.json) console.log(JSON.stringify(rows));
      else {
        const when = (value: Date | null) => (value === null ? '-' : new Date(value).toISOString().slice(0, 16).replace('T', ' '));
        console.log('id  backend  user  name  prefix  roles  rate  created  expires  revoked  last used');
        for (const row of rows) {
          console.log(
            [
              row.key_id,
              row.backend,
              row.user_name ?? row.user_id,
              JSON.stringify(row.name),
              `${row.prefix}...`,
              row.roles,
              row.rate_limit ?? '-',
              when(row.created_on),
              when(row.expires_on),
              when(row.revoked_on),
              when(row.last_used_on),
            ].join('  '),
          );
        }
      }
      done(0);
    });
  command(key, 'revoke', 'revoke an API key by its id (key list shows it); every server refuses it within 5 s')
    .argument('<id>', 'the key’s id')
    .option('--backend <backend>', 'only if it is this backend’s')
    .action(async (id: string, options: { backend?: string }) => {
      if (!/^[1-9][0-9]{0,9}$/.test(id)) throw new UsageError(`a key id is a number (xmlrest key list), not ${id}`);
      const revoked = await withConnection((connection) => new KeyStore(queryableOf(connection)).revoke(Number(id), options.backend));
      if (!revoked) throw new UsageError(`no key ${id}${options.backend ? ` on ${options.backend}` : ''} that is not revoked already`);
      console.log(`revoked key ${id}; running servers refuse it within 5 s`);
      done(0);
    });
}

/** The backend `xmlrest key create` names must take keys: generated/ says which do. Answers every backend. */
async function requireKeyBackend(name: string): Promise<BackendModule[]> {
  const backends = await generatedBackends();
  const backend = backends.find((candidate) => candidate.name === name);
  if (!backend) throw new UsageError(`no backend ${name} (the backends are ${backends.map((candidate) => candidate.name).join(', ')})`);
  if (!backend.apiKeys) throw new UsageError(`backend ${name} takes no API keys: add api_keys="on" to resources/${name}/backend.xml and run npm run generate`);
  return backends;
}
