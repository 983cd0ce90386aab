import type { Command } from 'commander';
import type { CommandKit } from '../command.js';

/** `xmlrest init [DIR]`: a new project's files (scripts/cli/init/), loaded only when it runs. */
export function registerInitCommand(xmlrest: Command, { command, done }: CommandKit): void {
  command(xmlrest, 'init', "write a new project's files in DIR (default .): package.json, tsconfig.json, a backend and an example resource")
    .argument('[dir]', 'the project folder, created when missing', '.')
    .option('--scheme <scheme>', 'how callers authenticate: Basic or Bearer', 'Basic')
    .option('--backend <name>', 'the backend: its folder under resources/ and its paths /<name>/v1.0/...', 'api')
    .option('--force', 'overwrite files that exist')
    .action(async (dir: string, options: { scheme: string; backend: string; force?: boolean }) => {
      const { init } = await import('../init/index.js');
      const outcome = init({ dir, ...options });
      for (const line of outcome.out) process.stdout.write(`${line}\n`);
      for (const line of outcome.err) process.stderr.write(`${line}\n`);
      done(outcome.code);
    });
}
