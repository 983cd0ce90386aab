import type { Command } from 'commander';
import { databaseUrlFromEnvironment } from '../../../generator/environment.js';
import type { BackendModule } from '../../../runtime/index.js';
import { createDefaultTables, createDemoDatabase } from '../../schema.js';
import { createTenantTriggers } from '../../tenant-triggers.js';
import { type CommandKit, generatedBackends } from '../command.js';

/** `xmlrest db init`: xmlrest's own tables on the database of DATABASE_URL (scripts/schema.ts). */
export function registerDbCommands(xmlrest: Command, { command, withConnection, done }: CommandKit): void {
  const db = command(xmlrest, 'db', 'the database xmlrest works on');
  command(db, 'init', 'create usr, usr_role, xmlrest’s own tables and the triggers that end revoked roles everywhere (and tenant tables’ triggers)')
    .option('--demo', 'also the demo’s tables and users')
    .action(async (options: { demo?: boolean }) => {
      const backends = await projectBackends();
      const made = await withConnection(async (connection) => {
        await createDefaultTables(connection);
        if (options.demo) await createDemoDatabase(databaseUrlFromEnvironment(process.cwd())!);
        return createTenantTriggers(connection, backends);
      });
      console.log(`created usr and usr_role${options.demo ? ' and the demo tables' : ''}`);
      for (const { column, tables, skipped } of made) {
        console.log(`tenant triggers (${column}) on ${tables.length === 0 ? 'no table yet' : tables.join(', ')}`);
        if (skipped.length > 0) console.log(`no tenant triggers on ${skipped.join(', ')}: the name is too long for a trigger's name`);
      }
      done(0);
    });
}

/**
 * The project's backends, for their tenants' triggers; none in a folder that has generated nothing yet (db init
 * comes first there, `npm run dev` runs it so). A project whose generated/ cannot be read now still gets its
 * tables, and is told that its tenants' triggers were not made.
 */
async function projectBackends(): Promise<BackendModule[]> {
  try {
    return await generatedBackends();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (!/holds no generated\//.test(message)) process.stderr.write(`xmlrest: no tenant triggers made: generated/ could not be read (${message})\n`);
    return [];
  }
}
