import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { staleBuildLine, staleSources } from '../../build-state.mjs';
import type { CommandKit } from '../command.js';

/**
 * `xmlrest start` (a team's `npm start`): serves the project's build, dist/generated/, with the server the package
 * brings (scripts/serve.ts), configured by the environment. It never compiles: a build that is missing or older
 * than its sources is refused, naming what to run, as this repository's scripts/start.mjs refuses its own.
 */
export function registerStartCommand(xmlrest: Command, { command }: CommandKit): void {
  command(xmlrest, 'start', 'serve the built project (dist/generated/), configured by the environment or .env').action(async () => {
    const root = process.cwd();
    if (!existsSync(path.join(root, 'dist/generated/index.js'))) {
      process.stderr.write('xmlrest: no build to start (dist/generated/ is missing): run `npm run build`, then `npm start`\n');
      process.exit(1);
    }
    const stale = staleSources(root);
    if (stale.length > 0) {
      process.stderr.write(staleBuildLine(stale, ', then `npm start`'));
      process.exit(1);
    }
    process.setSourceMapsEnabled(true);
    await import('../../serve.js');
    // The server runs until a signal stops it (serve.ts exits then).
    await new Promise(() => {});
  });
}
