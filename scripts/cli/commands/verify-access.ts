import type { Command } from 'commander';
import { databaseUrlFromEnvironment } from '../../../generator/environment.js';
import { connectTo } from '../../connection.js';
import type { CommandKit } from '../command.js';

/** `xmlrest verify-access`: the command's line; its work (scripts/cli/verify-access.ts) is loaded when it runs. */
export function registerVerifyAccessCommand(xmlrest: Command, { command, done }: CommandKit): void {
  command(
    xmlrest,
    'verify-access',
    'prove that the server at BASE_URL admits and refuses as access.lock says, route by route (exit 0 all proven and agree, 1 a disagreement, 3 unproven checks, 2 cannot run or finish)',
  )
    .argument('<base-url>', 'the running server with its BASE_PATH, such as https://staging.example.com/api; it must use the database of DATABASE_URL')
    .option('--json', 'print {"checks", "disagreements", "unproven", ...} as JSON')
    .option('--lock <file>', 'the access.lock to prove', 'access.lock')
    .option('--resources <dir>', 'the resources it was written from', 'resources')
    .option(
      '--allow-unproven',
      'exit 0 with checks that cannot be proven (a backend with its own AuthQuery, identity providers, a write without parameters), when none disagrees',
    )
    .option('--insecure', 'send the temporary users’ credentials over plain http to a host other than this machine')
    .action(async (baseUrl: string, options: { json?: boolean; lock?: string; resources?: string; allowUnproven?: boolean; insecure?: boolean }) =>
      done(
        await (await import('../verify-access.js')).verifyAccessCommand(baseUrl, options, databaseUrlFromEnvironment(process.cwd()), (url) =>
          connectTo(url, { multipleStatements: false }),
        ),
      ),
    );
}
