// Writes a tenant golden case's column-types.json from its schema.json (tables, their columns and unique keys;
// `omit`: step keys left without facts), as `npm run generate` would from a database holding those tables: what
// the cases under test/golden/tenant-* and error-tenant-* need, since the golden runner has no database.
//   npx tsx test/support/tenant-golden-facts.ts test/golden/tenant-proven
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { analyseSources, describedSql, readSources, type SnapshotEntry, sqlSteps, type TableColumn } from '../../generator/index.js';
import { tenantsOf } from '../../generator/types/describe.js';
import { snapshotText } from '../../generator/types/snapshot.js';

interface Schema {
  /** Each table's columns and their types, unique keys, and the collation of a text column (`collations`). */
  tables: Record<string, { columns: Record<string, string>; unique: string[][]; collations?: Record<string, string> }>;
  views?: string[];
  /** The database's stored routines, in lower case. */
  routines?: string[];
  omit?: string[];
}

const caseDir = process.argv[2]!;
const schema = JSON.parse(readFileSync(path.join(caseDir, 'schema.json'), 'utf8')) as Schema;
const tsType = (sqlType: string) => (/int/.test(sqlType) ? 'number' : 'string');
const columnsOf = async (table: string): Promise<TableColumn[]> =>
  Object.entries(schema.tables[table.toLowerCase()]?.columns ?? {}).map(([name, sqlType]) => ({
    name,
    dataType: sqlType.split(' ')[0]!,
    columnType: sqlType,
    nullable: false,
    maxLength: /char|text/.test(sqlType) ? 100 : null,
    collation: schema.tables[table.toLowerCase()]?.collations?.[name] ?? null,
  }));
const database = {
  describe: async () => [],
  columnsOf,
  uniqueKeysOf: async (table: string) => schema.tables[table.toLowerCase()]?.unique ?? [],
  viewsAmong: async (tables: readonly string[]) => (schema.views ?? []).filter((view) => tables.includes(view)),
  routines: async () => schema.routines ?? [],
};
const typeOf = (column: string) => {
  for (const table of Object.values(schema.tables)) if (column in table.columns) return table.columns[column]!;
  return 'varchar';
};

const { project, diagnostics } = analyseSources(readSources(caseDir, 'resources'));
if (diagnostics.count > 0) throw new Error(diagnostics.lines().join('\n'));
const snapshot: Record<string, SnapshotEntry> = {};
for (const { key, step, resource } of sqlSteps(project)) {
  if (schema.omit?.includes(key)) continue;
  const backend = project.backends.find((candidate) => candidate.name === resource.backend)!;
  const entry: SnapshotEntry = {
    sql: describedSql(step),
    columns:
      step.statement === 'read' ? (step.columns ?? []).map((name) => ({ name, sqlType: typeOf(name), tsType: tsType(typeOf(name)), nullable: false })) : [],
  };
  if (step.list) {
    const terms = [...(step.list.page?.key ?? []), ...(step.list.sort?.allow.map((allowed) => allowed.term) ?? [])];
    entry.keys = Object.fromEntries(
      terms.map((term) => [
        `${term.table}.${term.tableColumn}`,
        {
          sqlType: typeOf(term.tableColumn),
          nullable: false,
          unique: (schema.tables[term.table ?? '']?.unique ?? []).some((key) => key.length === 1 && key[0] === term.tableColumn),
        },
      ]),
    );
  }
  if (backend.tenant) entry.tenants = await tenantsOf(step, backend.tenant.column, database, columnsOf);
  snapshot[key] = entry;
}
writeFileSync(path.join(caseDir, 'column-types.json'), snapshotText(snapshot));
