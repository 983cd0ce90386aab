import type { Command } from 'commander';
import { databaseUrlFromEnvironment } from '../../../generator/environment.js';
import { type CommandKit, requireBuildTools } from '../command.js';

/** `xmlrest generate`: the generator itself is loaded when the command runs, never when another does. */
export function registerGenerateCommand(xmlrest: Command, { command, done }: CommandKit): void {
  command(xmlrest, 'generate', 'write generated/ (and access.lock) from resources/; only changed files are written')
    .option('--check', 'write nothing; exit 1 naming every file that would change')
    .option('--refresh-types', 'ask the database for every statement’s types again and name what changed')
    .option('--strict', 'warnings (a protected read of rows that belong to users without $uid) are errors: nothing is written, exit 1')
    .action(async (options: { check?: boolean; refreshTypes?: boolean; strict?: boolean }) => {
      const root = process.cwd();
      if (!options.check) requireBuildTools('xmlrest generate');
      const { generateProject: generate } = await import('../../../generator/index.js');
      done(
        await generate({
          root,
          check: options.check ?? false,
          refreshTypes: options.refreshTypes ?? false,
          databaseUrl: databaseUrlFromEnvironment(root),
          strict: options.strict ?? false,
        }),
      );
    });
}
