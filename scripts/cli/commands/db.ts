import type { Command } from 'commander';
import { databaseUrlFromEnvironment } from '../../../generator/environment.js';
import { createDefaultTables, createDemoDatabase } from '../../schema.js';
import type { CommandKit } from '../command.js';

/** `xmlrest db init`: xmlrest's own tables on the database of DATABASE_URL (scripts/schema.ts). */
export function registerDbCommands(xmlrest: Command, { command, withConnection, done }: CommandKit): void {
  const db = command(xmlrest, 'db', 'the database xmlrest works on');
  command(db, 'init', 'create usr, usr_role, xmlrest’s own tables and the triggers that end revoked roles everywhere')
    .option('--demo', 'also the demo’s tables and users')
    .action(async (options: { demo?: boolean }) => {
      await withConnection(async (connection) => {
        await createDefaultTables(connection);
        if (options.demo) await createDemoDatabase(databaseUrlFromEnvironment(process.cwd())!);
      });
      console.log(`created usr and usr_role${options.demo ? ' and the demo tables' : ''}`);
      done(0);
    });
}
