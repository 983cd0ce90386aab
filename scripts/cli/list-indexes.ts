import type mysql from 'mysql2/promise';
import { listSpec } from '../../generator/analyse/list-spec.js';
import { analyseSources, readSources } from '../../generator/index.js';
import type { List, ListTerm, Project, SqlStep } from '../../generator/ir.js';
import type { ListOrderTerm } from '../../runtime/contract.js';
import { listStatement, orderOf } from '../../runtime/lists/statement.js';

/**
 * Whether an index serves each order of each list (docs/internals/contract.md §11): a page deep in a table sorted without
 * one reads, and sorts, every row before it. For each order a list can be asked for (its key's, its default
 * sort's, each allowed sort's; a descending one is the same order read backwards), the database's EXPLAIN of the
 * first page's statement says whether it sorts (filesort) or scans the whole table; where it does, an index on
 * the step's equality columns and then the order's is looked for among the table's (an InnoDB index ends with the
 * primary key's columns), since on a table of a few rows the database sorts rather than read an index. When none
 * serves the order, what to create. `xmlrest doctor` says these; so may `xmlrest check`.
 */
export interface IndexFinding {
  ok: boolean;
  /** Worth fixing, yet nothing is broken. */
  warning?: boolean;
  what: string;
}

interface IndexInfo {
  name: string;
  /** Columns in order, each with its direction; a secondary InnoDB index extended with the primary key's. */
  columns: { column: string; desc: boolean }[];
}

export async function listIndexFindings(root: string, connection: mysql.Connection): Promise<IndexFinding[]> {
  const { project, diagnostics } = analyseSources(readSources(root, 'resources'));
  if (diagnostics.count > 0) return [];
  const findings: IndexFinding[] = [];
  const indexes = new Map<string, Promise<IndexInfo[]>>();
  for (const { path, step, list } of listsOf(project)) {
    for (const order of ordersOf(list)) {
      const tables = new Set(order.map((term) => term.table));
      const table = order[0]!.table!;
      const described = `${order.map((term) => `${term.sql}${term.desc ? ' desc' : ''}`).join(', ')}`;
      const where = `list GET ${path}, order ${described}`;
      if (tables.size > 1) {
        findings.push({
          ok: true,
          warning: true,
          what: `${where}: its columns come from ${tables.size} tables, which no one index can serve; order by one table's columns`,
        });
        continue;
      }
      let known = indexes.get(table);
      if (!known) indexes.set(table, (known = indexesOf(connection, table)));
      const plan = await explain(connection, step, list, order);
      const equalities = list.equalities.filter((equality) => equality.table === table).map((equality) => equality.column.toLowerCase());
      const serving = (await known).find((index) => serves(index, equalities, order));
      if (plan.problem === undefined && plan.index !== undefined) findings.push({ ok: true, what: `${where}: served by the index ${plan.index}` });
      else if (serving) {
        const today = plan.problem === undefined ? '' : ` once ${table} grows (today the database sorts its ${plan.rows} rows)`;
        findings.push({ ok: true, what: `${where}: served by the index ${serving.name}${today}` });
      } else {
        const columns = [
          ...new Set([
            ...list.equalities.filter((equality) => equality.table === table).map((equality) => equality.column),
            ...order.map((term) => term.tableColumn),
          ]),
        ];
        const directions = new Map(order.map((term) => [term.tableColumn, term.desc !== order[0]!.desc]));
        const name = `${table}_${columns.join('_')}`.slice(0, 64);
        findings.push({
          ok: true,
          warning: true,
          what: `${where}: no index serves it (${plan.problem ? `EXPLAIN: ${plan.problem}` : 'none of its indexes has these columns'}), so a page deep in ${table} reads and sorts every row before it: create one, CREATE INDEX ${name} ON ${table} (${columns.map((column) => `${column}${directions.get(column) ? ' DESC' : ''}`).join(', ')})`,
        });
      }
    }
  }
  return findings;
}

function* listsOf(project: Project): Generator<{ path: string; step: SqlStep; list: List }> {
  for (const backend of project.backends) {
    for (const resource of backend.resources) {
      for (const operation of resource.operations) {
        for (const step of operation.steps) {
          if (step.kind === 'sql' && step.list?.page) {
            yield { path: `/${backend.name}/v${resource.version}/${resource.name}`, step, list: step.list };
          }
        }
      }
    }
  }
}

/** Each order a list can be asked for, once (a descending sort is its ascending one read backwards). */
function ordersOf(list: List): (ListOrderTerm & ListTerm)[][] {
  const spec = listSpec(list);
  const names = ['', ...(list.sort?.default ? [list.sort.default.name] : []), ...(list.sort?.allow.map((allowed) => allowed.name) ?? [])];
  const terms = new Map<string, ListTerm>(
    [...(list.page?.key ?? []), ...(list.sort?.allow.map((allowed) => allowed.term) ?? [])].map((term) => [term.sql, term]),
  );
  const seen = new Set<string>();
  const orders: (ListOrderTerm & ListTerm)[][] = [];
  for (const name of names) {
    const order = orderOf(spec, name).map((term) => ({ ...terms.get(term.sql)!, ...term }));
    // An order and its reverse are one index read either way.
    const key = JSON.stringify(order.map((term) => [term.sql, term.desc !== order[0]!.desc]));
    if (order.length === 0 || seen.has(key)) continue;
    seen.add(key);
    orders.push(order);
  }
  return orders;
}

/** Whether an index is the equality columns (any of them, in any order), then the order's columns, all one way or all the other. */
function serves(index: IndexInfo, equalities: string[], order: ListTerm[]): boolean {
  let at = 0;
  while (
    at < index.columns.length &&
    equalities.includes(index.columns[at]!.column.toLowerCase()) &&
    index.columns[at]!.column.toLowerCase() !== order[0]!.tableColumn.toLowerCase()
  )
    at++;
  const flip = index.columns[at] !== undefined && index.columns[at]!.desc !== order[0]!.desc;
  return order.every((term, offset) => {
    const column = index.columns[at + offset];
    return column !== undefined && column.column.toLowerCase() === term.tableColumn.toLowerCase() && (column.desc !== term.desc) === flip;
  });
}

async function indexesOf(connection: mysql.Connection, table: string): Promise<IndexInfo[]> {
  const [rows] = (await connection.execute(
    `select index_name as name, column_name as \`column\`, collation = 'D' as descending
       from information_schema.statistics where table_schema = database() and table_name = ? order by index_name, seq_in_index`,
    [table],
  )) as unknown as [{ name: string; column: string; descending: number }[]];
  const byName = new Map<string, IndexInfo>();
  for (const row of rows) {
    const index = byName.get(row.name) ?? { name: row.name, columns: [] };
    index.columns.push({ column: row.column, desc: Boolean(row.descending) });
    byName.set(row.name, index);
  }
  // InnoDB keeps the primary key's columns at the end of every other index, and MariaDB reads them there.
  const primary = byName.get('PRIMARY')?.columns ?? [];
  for (const index of byName.values()) {
    if (index.name !== 'PRIMARY') for (const column of primary) if (!index.columns.some((own) => own.column === column.column)) index.columns.push(column);
  }
  return [...byName.values()];
}

/**
 * EXPLAIN of the list's first page in `order`, the step's own values taken from its table (a column the step
 * compares with `=`: one of its values), others null.
 */
async function explain(
  connection: mysql.Connection,
  step: SqlStep,
  list: List,
  order: ListOrderTerm[],
): Promise<{ problem: string | undefined; index: string | undefined; rows: number }> {
  const spec = listSpec(list);
  const sql = listStatement(spec, { filters: [], order, after: false, limit: true });
  const values: unknown[] = [];
  for (let bind = 0; bind < step.binds.length; bind++) {
    const equality = list.equalities.find((candidate) => candidate.bind === bind);
    values.push(equality ? await sample(connection, equality.table, equality.column) : null);
  }
  values.push(spec.page?.size ?? 20);
  const [plan] = (await connection.execute(`explain ${sql}`, values as (string | number | null)[])) as unknown as [
    { table: string; type: string; key: string | null; rows: number; Extra: string | null }[],
  ];
  const first = plan[0];
  const sorts = plan.some((row) => (row.Extra ?? '').includes('filesort'));
  const scans = first?.type === 'ALL';
  // No key and no sort (an empty table: "no matching row in const table"): the plan cannot tell, the indexes must.
  return { problem: sorts ? 'Using filesort' : scans ? 'a full scan' : undefined, index: first?.key ?? undefined, rows: Number(first?.rows ?? 0) };
}

async function sample(connection: mysql.Connection, table: string, column: string): Promise<unknown> {
  const quoted = (name: string) => `\`${name.replaceAll('`', '``')}\``;
  const [rows] = (await connection.query({ sql: `select ${quoted(column)} as value from ${quoted(table)} limit 1` })) as unknown as [{ value: unknown }[]];
  return rows[0]?.value ?? null;
}
