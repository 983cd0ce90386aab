import type { Command } from 'commander';
import { type CommandKit, requireBuildTools } from '../command.js';

/**
 * `xmlrest dev` (a team's `npm run dev`): generates, serves with live reload, and with DATABASE_URL unset starts a
 * private MariaDB under .xmlrest/ with the default tables (scripts/dev-server.ts).
 */
export function registerDevCommand(xmlrest: Command, { command }: CommandKit): void {
  command(xmlrest, 'dev', 'generate, serve and reload on every change; a private MariaDB under .xmlrest/ when DATABASE_URL is unset').action(async () => {
    // It regenerates, as generate does: a production install has no build tools, and its build would not serve what it wrote.
    requireBuildTools('xmlrest dev');
    const { serveDev } = await import('../../dev-server.js');
    await serveDev(process.cwd());
    // Serves until a signal stops it (dev-server.ts exits then).
    await new Promise(() => {});
  });
}
