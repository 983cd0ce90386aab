import { Command, CommanderError } from 'commander';
import { knowStaleSources, packageVersion } from '../install.js';
import { type CommandKit, HINT, UsageError, withConnection } from './command.js';
import { registerBuildCommand } from './commands/build.js';
import { registerCheckCommand } from './commands/check.js';
import { registerDbCommands } from './commands/db.js';
import { registerDevCommand } from './commands/dev.js';
import { registerDoctorCommand } from './commands/doctor.js';
import { registerEventCommands } from './commands/events.js';
import { registerExplainCommand } from './commands/explain.js';
import { registerGenerateCommand } from './commands/generate.js';
import { registerInitCommand } from './commands/init.js';
import { registerKeyCommands } from './commands/key.js';
import { registerResourceCommands } from './commands/resource.js';
import { registerRoleCommands } from './commands/role.js';
import { registerStartCommand } from './commands/start.js';
import { registerTokenCommands } from './commands/token.js';
import { registerUserCommands } from './commands/user.js';
import { registerVerifyAccessCommand } from './commands/verify-access.js';

/**
 * The `xmlrest` command (commander): `--help` and `<command> --help` print
 * usage to stdout and exit 0; an unknown command or option, or a missing
 * argument, exits 2 with the error and a one-line hint on stderr; a command
 * that runs exits 0 when it did its work (explain: 0 allowed, 1 denied, 3 cannot tell).
 *
 * Each command, or family of subcommands, registers itself from its own file in commands/, given the kit of
 * command.ts; what a command does at length (doctor, check, verify-access) is loaded only when it runs.
 * Building it runs nothing: `npm run docs` reads its commands and options for docs/reference/cli.md.
 */
export function program(done: (code: number) => void): Command {
  const xmlrest = new Command('xmlrest')
    .description('XML resource files in, a REST backend on MySQL/MariaDB out.')
    .version(packageVersion(), '-V, --version', 'print the version')
    .helpOption('-h, --help', 'print this help')
    .addHelpText('after', '\nDatabase commands read DATABASE_URL (mysql://user:password@host:3306/database) from the environment or .env.')
    .showHelpAfterError(HINT)
    .exitOverride()
    .configureOutput({ writeOut: (text) => process.stdout.write(text), writeErr: (text) => process.stderr.write(text) });
  // Every subcommand behaves as the top one: help to stdout, errors with the hint, exit codes ours.
  const command = (parent: Command, name: string, description: string) =>
    parent
      .command(name)
      .description(description)
      .helpOption('-h, --help', 'print this help')
      .showHelpAfterError(HINT)
      .exitOverride()
      .configureOutput({ writeOut: (text) => process.stdout.write(text), writeErr: (text) => process.stderr.write(text) });

  const kit: CommandKit = { command, withConnection, usage: (message) => new UsageError(message), done };

  // One file per command, or per family of subcommands, in commands/; registered in the order --help lists them.
  registerInitCommand(xmlrest, kit);
  registerGenerateCommand(xmlrest, kit);
  // A team's project's life: npm run dev, npm run build, npm start.
  registerDevCommand(xmlrest, kit);
  registerBuildCommand(xmlrest, kit);
  registerStartCommand(xmlrest, kit);
  registerDbCommands(xmlrest, kit);
  registerUserCommands(xmlrest, kit);
  registerRoleCommands(xmlrest, kit);
  registerTokenCommands(xmlrest, kit);
  registerKeyCommands(xmlrest, kit);
  registerResourceCommands(xmlrest, kit);
  registerExplainCommand(xmlrest, kit);
  registerVerifyAccessCommand(xmlrest, kit);
  // events list|retry, audit list (docs/internals/contract.md §12).
  registerEventCommands(xmlrest, kit);
  registerCheckCommand(xmlrest, kit);
  registerDoctorCommand(xmlrest, kit);
  return xmlrest;
}

export async function main(argv: string[]): Promise<number> {
  let code = 0;
  const xmlrest = program((result) => (code = result));
  if (argv.length === 0) {
    xmlrest.outputHelp({ error: true });
    return 2;
  }
  try {
    await xmlrest.parseAsync(argv, { from: 'user' });
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    // --help and --version end here with exit code 0; a wrong command line with commander's own 1, which is ours 2.
    return error.exitCode === 0 ? 0 : 2;
  }
  return code;
}

/**
 * The whole command, its exit included: `scripts/xmlrest.mjs` (the package's bin) runs this, compiled or
 * through tsx. A wrong command line says where usage is.
 */
export function run(argv: string[], build?: { root: string; stale: readonly string[] }): void {
  // The bin has compared the build with its sources already: explain, key create and doctor need not walk dist/ again.
  if (build) knowStaleSources(build.root, build.stale);
  main(argv).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`xmlrest: ${error instanceof Error ? error.message : String(error)}\n`);
      if (error instanceof UsageError) process.stderr.write(`${HINT}\n`);
      process.exit((error as { exitCode?: number } | null)?.exitCode === 2 ? 2 : 1);
    },
  );
}

if (import.meta.url === `file://${process.argv[1]}`) run(process.argv.slice(2));
