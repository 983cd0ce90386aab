import type { Command } from 'commander';
import type { CommandKit } from '../command.js';

/** `xmlrest check`: the command's line; its work (scripts/cli/check.ts) is loaded when it runs. */
export function registerCheckCommand(xmlrest: Command, { command, done }: CommandKit): void {
  command(
    xmlrest,
    'check',
    'prepare every statement of every resource against DATABASE_URL and compare with generated/column-types.json (exit 0 all match, 1 not)',
  )
    .option('--json', 'print {"ok", "statements", "problems": [{"file", "line", "col", "method", "step", "kind", "column", "was", "now", "message"}]}')
    .action(async (options: { json?: boolean }) => {
      const { checkCommand } = await import('../check.js');
      done(await checkCommand(process.cwd(), { json: options.json ?? false }));
    });
}
