import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import {
  analyseSources,
  databaseUrlFromEnvironment,
  describedSql,
  describeStep,
  driftText,
  NO_ANSWER,
  openDescriber,
  type ParamType,
  readSources,
  rejection,
  type SnapshotEntry,
  sqlSteps,
  type TypeSnapshot,
  tableColumns,
  tenantFactsAsker,
  typeDrift,
} from '../../generator/index.js';
import { NO_COLUMN, NO_TABLE } from '../../runtime/db/index.js';

/**
 * `xmlrest check` (docs/internals/contract.md §13): has the database drifted from what generated/ was made for? Every
 * statement of every resource is prepared against DATABASE_URL, as the generator's types stage does, and what
 * the database describes is compared with generated/column-types.json: a table or column that is gone, a
 * column whose type changed, a parameter whose column's type changed, a statement the database refuses. Each
 * is named at its step's `file:line:col`, with the column; the models are sqlc's `vet` and Prisma's drift check.
 * Exit 0 when everything matches, 1 on any difference, 2 when it cannot check (no DATABASE_URL, no database,
 * resources that do not generate, a connection lost on the way or a database that stops answering: each call
 * has QUERY_TIMEOUT_MS, 10 s by default).
 */
export interface CheckProblem {
  file: string;
  line: number;
  col: number;
  method: string;
  step: string;
  kind: 'stale' | 'missing-table' | 'missing-column' | 'refused' | 'column-type' | 'column-added' | 'column-removed' | 'param-type' | 'tenant-table';
  /** The table, column or parameter it is about, where there is one. */
  column?: string;
  /** What column-types.json holds, and what the database says now. */
  was?: string;
  now?: string;
  message: string;
}

export interface CheckReport {
  statements: number;
  resources: number;
  problems: CheckProblem[];
}

/** The database went away during the check (a lost connection, no answer in time): nothing it said can be trusted. */
export class DatabaseLost extends Error {
  constructor(
    readonly code: string,
    readonly checked: number,
  ) {
    super(`lost the database after ${checked} checked statements (${code})`);
  }
}

export async function checkProject(root: string, databaseUrl: string, deadlineMs?: number): Promise<CheckReport | { errors: string[] }> {
  const { project, diagnostics } = analyseSources(readSources(root, 'resources'), {
    resourcesDir: 'resources',
    exists: (file) => existsSync(path.join(root, file)),
  });
  if (diagnostics.count > 0) return { errors: diagnostics.lines() };
  const snapshotFile = path.join(root, 'generated/column-types.json');
  const snapshot = existsSync(snapshotFile) ? (JSON.parse(readFileSync(snapshotFile, 'utf8')) as TypeSnapshot) : {};
  const database = await openDescriber(databaseUrl, deadlineMs === undefined ? {} : { deadlineMs });
  const problems: CheckProblem[] = [];
  const columnsOf = tableColumns(database);
  const askTenants = tenantFactsAsker(database, columnsOf);
  let statements = 0;
  try {
    for (const { key, operation, step, resource } of sqlSteps(project)) {
      statements++;
      const at = { file: step.at.file, line: step.at.line, col: step.at.col, method: operation.method, step: step.id };
      const where = `${operation.method} step "${step.id}"`;
      const recorded = snapshot[key];
      if (!recorded || recorded.sql !== describedSql(step)) {
        problems.push({ ...at, kind: 'stale', message: `${where}: generated/column-types.json holds no types for this statement: run npm run generate` });
        continue;
      }
      let now: SnapshotEntry;
      try {
        const tenantColumn = project.backends.find((backend) => backend.name === resource.backend)?.tenant?.column;
        now = await describeStep(step, database, columnsOf, undefined, tenantColumn === undefined ? undefined : { column: tenantColumn, ask: askTenants });
      } catch (error) {
        // The connection's end, not the statement's: what is left cannot be checked, and none of it is "refused".
        const lost = error as { fatal?: boolean; errno?: unknown; code?: unknown };
        if (lost.fatal === true || typeof lost.errno !== 'number') throw new DatabaseLost(String(lost.code ?? 'no error number'), statements - 1);
        problems.push({ ...at, ...refusal(error, where) });
        continue;
      }
      for (const drift of typeDrift(recorded, now)) {
        if (drift.kind === 'param-type') {
          const column = drift.column ?? drift.param;
          // An exact drift names the column's types as the database writes them (`int(11)`, `varchar(100) utf8mb4_bin`).
          const was = drift.exact ? drift.was : paramText(drift.wasType);
          const now = drift.exact ? drift.now : paramText(drift.nowType);
          problems.push({ ...at, kind: 'param-type', column, was, now, message: `${where}: parameter ${drift.param} (${column}) was ${was}, now ${now}` });
        } else if (drift.kind === 'column-type') {
          problems.push({ ...at, ...drift, message: `${where}: column ${drift.column} was ${drift.was}, now ${drift.now}` });
        } else if (drift.kind === 'tenant-table') {
          // A table that gained or lost the tenant column changes what the proof proved: generate proves it again.
          problems.push({
            ...at,
            kind: 'tenant-table',
            column: drift.table,
            message: `${where}: ${driftText(drift)} (run npm run generate to prove the step again)`,
          });
        } else if (drift.kind === 'column-added') {
          problems.push({ ...at, ...drift, message: `${where}: column ${drift.column} is new, ${drift.now} (select * sees it)` });
        } else {
          problems.push({ ...at, ...drift, message: `${where}: column ${drift.column} (${drift.was}) is gone` });
        }
      }
    }
  } finally {
    await database.close();
  }
  const resources = project.backends.reduce((count, backend) => count + backend.resources.length, 0);
  return { statements, resources, problems };
}

/** A statement the database refuses: a missing table or column named as the server names it. */
function refusal(error: unknown, where: string): Pick<CheckProblem, 'kind' | 'column' | 'message'> {
  const { message, errno } = rejection(error);
  if (errno === NO_TABLE) {
    // "Table 'shop.orders' doesn't exist": the table, without its database.
    const table = /Table '(?:[^'.]*\.)?([^']*)'/.exec(message)?.[1];
    return { kind: 'missing-table', ...(table ? { column: table } : {}), message: `${where}: table ${table ?? '?'} is missing (${message})` };
  }
  if (errno === NO_COLUMN) {
    const column = /Unknown column '([^']*)'/.exec(message)?.[1];
    return { kind: 'missing-column', ...(column ? { column } : {}), message: `${where}: column ${column ?? '?'} is missing (${message})` };
  }
  return { kind: 'refused', message: `${where}: the database refuses the statement: ${message}` };
}

/** A parameter's type as a person reads it: `integer unsigned`, `string(100) null`, `untyped`. */
function paramText(type: ParamType | undefined): string {
  if (!type) return 'untyped';
  const length = type.kind === 'string' && type.maxLength !== undefined ? `(${type.maxLength})` : '';
  const values = type.kind === 'enum' && type.values ? `(${type.values.map((value) => `'${value}'`).join(',')})` : '';
  return `${type.kind}${length}${values}${type.unsigned ? ' unsigned' : ''}${type.nullable ? ' null' : ''}`;
}

/** The command: prints each problem as `file:line:col: message` (or JSON), then says how it went. */
export async function checkCommand(root: string, options: { json: boolean }): Promise<number> {
  const url = databaseUrlFromEnvironment(root);
  const print = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);
  const cannot = (why: string) => {
    if (options.json) print({ ok: false, error: why });
    else process.stderr.write(`xmlrest check: ${why}\n`);
    return 2;
  };
  if (!url)
    return cannot('DATABASE_URL is not set: check compares the database at mysql://user:password@host:3306/database with generated/ (environment or .env)');
  const deadline = process.env.QUERY_TIMEOUT_MS;
  if (deadline !== undefined && deadline !== '' && !/^[1-9][0-9]{0,6}$/.test(deadline)) return cannot('QUERY_TIMEOUT_MS is a whole number of milliseconds');
  let report: Awaited<ReturnType<typeof checkProject>>;
  try {
    report = await checkProject(root, url, deadline ? Number(deadline) : undefined);
  } catch (error) {
    if (error instanceof DatabaseLost) {
      const why =
        error.code === NO_ANSWER
          ? `the database stopped answering (nothing within ${deadline || 10_000} ms, QUERY_TIMEOUT_MS)`
          : `the connection to the database was lost (${error.code})`;
      return cannot(`${why} after ${error.checked} statement${error.checked === 1 ? '' : 's'}: run xmlrest check again when it answers`);
    }
    const detail = error as { code?: string; message?: string };
    return cannot(`cannot reach the database (${detail.code ?? detail.message}): is it running, and does DATABASE_URL name it?`);
  }
  if ('errors' in report) {
    if (!options.json) for (const line of report.errors) process.stderr.write(`${line}\n`);
    return cannot(`the resources do not generate (${report.errors.length} error${report.errors.length === 1 ? '' : 's'}): run npm run generate`);
  }
  const { problems, statements, resources } = report;
  if (options.json) print({ ok: problems.length === 0, statements, problems });
  else {
    for (const problem of problems) process.stdout.write(`${problem.file}:${problem.line}:${problem.col}: ${problem.message}\n`);
    process.stdout.write(
      problems.length === 0
        ? `xmlrest check: all ${statements} statements of ${resources} resources match the database\n`
        : `xmlrest check: ${problems.length} difference${problems.length === 1 ? '' : 's'} between the database and generated/column-types.json (${statements} statements)\n`,
    );
  }
  return problems.length === 0 ? 0 : 1;
}
