import type { Connection } from 'mysql2/promise';
import type { BackendModule } from '../runtime/index.js';
import { TENANT_TABLES_SQL, tenantTriggerStatements, triggerNames } from '../runtime/tenants/triggers.js';

/** What `xmlrest db init` did for one tenant column: the tables it put triggers on, and those whose names are too long for them. */
export interface TenantTriggersMade {
  column: string;
  tables: string[];
  skipped: string[];
}

/**
 * The second line (runtime/tenants/triggers.ts) on the database of the connection, for each tenant backend that
 * asks for it (`<Tenant … triggers="on"/>`): triggers on every table that has its tenant column now, found by
 * asking information_schema, never listed by hand. Safe to run again (each trigger is dropped and made anew), and
 * run again after a migration adds a tenant table: a table made later has no triggers until then.
 */
export async function createTenantTriggers(connection: Connection, backends: readonly BackendModule[]): Promise<TenantTriggersMade[]> {
  const columns = [...new Set(backends.flatMap((backend) => (backend.tenant?.triggers ? [backend.tenant.column] : [])))];
  const made: TenantTriggersMade[] = [];
  for (const column of columns) {
    const [rows] = await connection.query(TENANT_TABLES_SQL, [column]);
    const tables = (rows as { name: string }[]).map((row) => row.name);
    const done: TenantTriggersMade = { column, tables: [], skipped: [] };
    for (const table of tables) {
      if (triggerNames(table) === undefined) {
        done.skipped.push(table);
        continue;
      }
      for (const statement of tenantTriggerStatements(table, column)) await connection.query(statement);
      done.tables.push(table);
    }
    made.push(done);
  }
  return made;
}
