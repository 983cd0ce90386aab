import type { Command } from 'commander';
import { type CommandKit, generatedBackends, UsageError } from '../command.js';
import { type RevokeOptions, RevokeUsage, revokeTokens } from '../token-revoke.js';

/** `xmlrest token revoke`: Bearer tokens, sessions and a user's API keys, which every server refuses within its poll. */
export function registerTokenCommands(xmlrest: Command, { command, withConnection, done }: CommandKit): void {
  const token = command(xmlrest, 'token', 'Bearer tokens');
  command(
    token,
    'revoke',
    'revoke one token (--jti), or every token, session and API key of one user of the backend; servers refuse them within their poll (5 s)',
  )
    .requiredOption('--backend <backend>', 'the backend that issued it')
    .option('--jti <jti>', 'the token’s jti')
    .option('--until <seconds>', 'with --jti: when the token expires (Unix seconds); remembered a year otherwise')
    .option('--user-id <id>', 'every token, session and API key of the user with this id on the backend (the id its AuthQuery gives as sub)')
    .option('--user <name>', 'every token, session and API key of this user of usr (backends on the default user tables)')
    .action(async (options: RevokeOptions) => {
      try {
        console.log(await withConnection((connection) => revokeTokens(connection, options, generatedBackends)));
      } catch (error) {
        if (error instanceof RevokeUsage) throw new UsageError(error.message);
        throw error;
      }
      console.log('running servers refuse it within their revocation poll (5 s by default)');
      done(0);
    });
}
