import type { Command } from 'commander';
import type { CommandKit } from '../command.js';

/** `xmlrest doctor`: the command's line; its work (scripts/cli/doctor.ts) is loaded when it runs. */
export function registerDoctorCommand(xmlrest: Command, { command, done }: CommandKit): void {
  command(xmlrest, 'doctor', 'check Node, the configuration, the database, the default tables, generated/ and the build, and say what to fix').action(
    async () => done(await (await import('../doctor.js')).doctor(process.cwd())),
  );
}
