import { ts } from 'ts-morph';
import { jsonRowSteps, operationJsonFunction, operationJsonName, rowJsonFunction } from '../../generator/emit/json.js';
import { morphProject } from '../../generator/emit/print.js';
import type { Operation, ResultColumn, SqlStep } from '../../generator/ir.js';
import type { Operation as RuntimeOperation } from '../../runtime/contract.js';
import { jsonDate, jsonNumber, jsonRows, jsonString, jsonValue } from '../../runtime/json-text.js';

/** The answers' JSON text the generator writes (docs/internals/contract.md §17), for the tests that compare it with JSON.stringify. */

/** An output step of the IR, as the analyser and the database's types make it. */
export function step(id: string, typed: ResultColumn[] | null, statement: 'read' | 'write' = 'read', list?: SqlStep['list']): SqlStep {
  const names = typed?.map((column) => column.name) ?? null;
  return {
    kind: 'sql',
    id,
    output: true,
    description: null,
    sql: '',
    binds: [],
    statement,
    columns: names,
    typed,
    paramTargets: {},
    at: {} as SqlStep['at'],
    ...(list ? { list } : {}),
  };
}

/** A paged list's step: its answer carries `next`. */
export const PAGED = { page: { size: 20, max: 100, key: [] } } as unknown as SqlStep['list'];

export function operationOf(steps: SqlStep[]): Operation {
  return { method: 'GET', steps } as unknown as Operation;
}

/** The operation's json function as the generator writes it, compiled as a module would be. */
export function compiled(operation: Operation): RuntimeOperation['json'] {
  const structures = [...jsonRowSteps(operation).map(rowJsonFunction), operationJsonFunction(operation, 'object')];
  const source = morphProject().createSourceFile('/answer-json-probe.ts', { statements: structures }, { overwrite: true });
  const typescript = source.getFullText();
  morphProject().removeSourceFile(source);
  const javascript = ts.transpileModule(typescript, { compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext } }).outputText;
  const pieces = { jsonDate, jsonNumber, jsonRows, jsonString, jsonValue };
  return new Function(...Object.keys(pieces), `${javascript}\nreturn ${operationJsonName(operation)};`)(...Object.values(pieces));
}

/** What a call gives: its text, or the kind of error it throws. */
export function outcome(make: () => string): string {
  try {
    return make();
  } catch (error) {
    return `threw ${(error as Error).constructor.name}`;
  }
}
