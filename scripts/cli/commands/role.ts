import type { Command } from 'commander';
import { grantDetail, grantEnd } from '../../../console/grants.js';
import { checkRoleName } from '../../../console/names.js';
import { grantRole, recordFromCli, revokeRole, userIdOf } from '../../schema.js';
import { type CommandKit, UsageError } from '../command.js';

/** `xmlrest role grant|revoke`: roles of the default tables, each change in the console's history. */
export function registerRoleCommands(xmlrest: Command, { command, withConnection, done }: CommandKit): void {
  const role = command(xmlrest, 'role', 'roles of the default tables');
  command(role, 'grant', 'grant USER the role ROLE, for good or until a time; granting it again sets its end (idempotent)')
    .argument('<user>', 'the user name')
    .argument('<role>', 'the role name')
    .option('--until <time>', 'the grant ends then: an ISO time with its zone, such as 2026-12-01T18:00Z')
    .option('--for <duration>', 'the grant ends this long from now: 8h, 90m, 7d, 30s')
    .action(async (name: string, roleName: string, options: { until?: string; for?: string }) => {
      const checked = checkRoleName(roleName);
      if (!checked.ok) throw new UsageError(checked.message);
      const end = grantEnd(options.until, options.for);
      if (!end.ok)
        throw new UsageError(
          end.message
            .replace(/^until/, '--until')
            .replace(/^for/, '--for')
            .replace('until or for', '--until or --for'),
        );
      await withConnection(async (connection) => {
        const id = await userIdOf(connection, name);
        if (id === undefined) throw new UsageError(`no such user: ${name}`);
        const outcome = await grantRole(connection, id, checked.name, end.until);
        const detail = grantDetail(checked.name, end.until);
        if (outcome !== 'unchanged') await recordFromCli(connection, 'grant role', name, detail);
        const ends = end.until === null ? '' : ` until ${detail.slice(checked.name.length + ' until '.length)}`;
        console.log(
          outcome === 'unchanged'
            ? `${name} holds ${checked.name}${ends} already`
            : outcome === 'changed'
              ? `${name} holds ${checked.name}${end.until === null ? ' for good (its end removed)' : `${ends} (its end changed)`}`
              : `${name} holds ${checked.name}${ends}`,
        );
        if (end.until !== null) console.log('its tokens expire by then; when it ends every server stops admitting it within 5 s, as a revoke');
      });
      done(0);
    });
  command(role, 'revoke', 'revoke ROLE from USER; the user’s tokens end everywhere')
    .argument('<user>', 'the user name')
    .argument('<role>', 'the role name')
    .action(async (name: string, roleName: string) => {
      await withConnection(async (connection) => {
        const id = await userIdOf(connection, name);
        if (id === undefined) throw new UsageError(`no such user: ${name}`);
        const removed = await revokeRole(connection, id, roleName);
        if (removed > 0) await recordFromCli(connection, 'revoke role', name, roleName);
        console.log(removed > 0 ? `${name} no longer holds ${roleName}` : `${name} did not hold ${roleName}`);
      });
      done(0);
    });
}
