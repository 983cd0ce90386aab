import type { Command } from 'commander';
import { KeyStore } from '../../../console/keys.js';
import { revokeToken, revokeUserTokens } from '../../../runtime/auth/revocations.js';
import { queryableOf, userIdOf } from '../../schema.js';
import { type CommandKit, UsageError } from '../command.js';

/** `xmlrest token revoke`: Bearer tokens (and a user's API keys) that every server refuses within its poll. */
export function registerTokenCommands(xmlrest: Command, { command, withConnection, done }: CommandKit): void {
  const token = command(xmlrest, 'token', 'Bearer tokens');
  command(token, 'revoke', 'revoke one token (--jti) or every token and API key a user holds (--user); servers refuse it within their poll (5 s)')
    .requiredOption('--backend <backend>', 'the backend that issued it')
    .option('--jti <jti>', 'the token’s jti')
    .option('--until <seconds>', 'with --jti: when the token expires (Unix seconds); remembered a year otherwise')
    .option('--user <name>', 'every token and API key of this user on the backend')
    .action(async (options: { backend: string; jti?: string; until?: string; user?: string }) => {
      if ((options.jti === undefined) === (options.user === undefined)) throw new UsageError('token revoke takes --jti JTI or --user NAME, one of them');
      if (options.until !== undefined && !/^[0-9]{1,12}$/.test(options.until)) throw new UsageError('--until is a number of Unix seconds');
      await withConnection(async (connection) => {
        const db = { write: (sql: string, params: readonly unknown[]) => connection.execute(sql, params as never[]) };
        if (options.jti !== undefined) {
          // Remembered for a year unless told when the token expires: a revoked token must never come back.
          const until = options.until ? Number(options.until) : Math.floor(Date.now() / 1000) + 365 * 24 * 3600;
          await revokeToken(db, options.backend, options.jti, until);
          console.log(`revoked token ${options.jti} on ${options.backend}`);
        } else {
          const id = await userIdOf(connection, options.user!);
          if (id === undefined) throw new UsageError(`no such user: ${options.user}`);
          await revokeUserTokens(db, options.backend, String(id));
          // A user's API keys are theirs too: "every token a user holds" leaves none of them working.
          const keys = await new KeyStore(queryableOf(connection)).revokeUser(String(id), options.backend);
          console.log(`revoked every token of ${options.user} on ${options.backend} issued until now, and ${keys} API key${keys === 1 ? '' : 's'}`);
        }
      });
      console.log('running servers refuse it within their revocation poll (5 s by default)');
      done(0);
    });
}
