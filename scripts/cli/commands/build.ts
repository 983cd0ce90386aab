import type { Command } from 'commander';
import type { CommandKit } from '../command.js';

/** `xmlrest build` (a team's `npm run build`): generated/ and plug-ins compiled into dist/ (../build.ts). */
export function registerBuildCommand(xmlrest: Command, { command, done }: CommandKit): void {
  command(xmlrest, 'build', 'compile generated/ and plug-ins into dist/, as xmlrest start serves them (a team’s project)').action(async () => {
    const { buildProject } = await import('../build.js');
    done(await buildProject(process.cwd(), (line) => process.stderr.write(`${line}\n`)));
  });
}
