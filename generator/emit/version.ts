// A versioned write's pieces of its module (docs/internals/contract.md §15): the step's three statements as named
// constants, the handler's lines that run them, and the operation's `version`.
import { type CodeBlockWriter, type StatementStructures, StructureKind, VariableDeclarationKind } from 'ts-morph';
import type { Operation, SqlStep } from '../ir.js';
import { ifMatchConstant, sqlConstant, versionConstant } from './module-names.js';
import { quote, templateLiteral } from './print.js';

type Version = NonNullable<Operation['version']>;

export function versionConstants(operation: Operation, step: SqlStep): StatementStructures[] {
  const version = operation.version as Version;
  const constant = (name: string, docs: string, sql: string): StatementStructures => ({
    kind: StructureKind.VariableStatement,
    docs: [docs],
    declarationKind: VariableDeclarationKind.Const,
    declarations: [{ name, initializer: templateLiteral(sql) }],
  });
  const step_ = `${operation.method} step "${step.id}"${step.output ? '' : ' (not in the response)'}`;
  return [
    constant(
      sqlConstant(step),
      /^\s*delete\b/i.test(step.sql) ? `${step_}, without If-Match: as written.` : `${step_}, without If-Match: as written, moving ${version.column} on.`,
      version.statements.unconditional,
    ),
    constant(
      ifMatchConstant(step),
      `${step_}, with If-Match: only while ${version.column} is the version the caller names (its last bind).`,
      version.statements.conditional,
    ),
    constant(
      versionConstant(step),
      `${step_}: the row's ${version.column} when the write changed nothing, in its transaction (412 or 404).`,
      version.statements.probe,
    ),
  ];
}

/** The operation object's `version`, for OpenAPI, the console and batches. */
export function versionText(operation: Operation): string {
  const version = operation.version;
  return version === undefined ? '' : `version: { column: ${quote(version.column)}, required: ${version.required} }, `;
}

/** Before the transaction: the version the request's If-Match names, or null (428 when required and absent). */
export function writeIfMatch(writer: CodeBlockWriter, operation: Operation): void {
  if (operation.version !== undefined) writer.writeLine(`const expected = scope.ifMatch(${operation.version.required});`);
}

/**
 * The versioned step: the conditional form when the request named a version, else the unconditional; a write that
 * changed no row asks its probe whether the row moved on (412) or is not there (404).
 */
export function writeVersionedStep(writer: CodeBlockWriter, step: SqlStep, db: string, binds: string[], probeBinds: string[]): void {
  const values = binds.join(', ');
  const compared = [...binds, 'expected'].join(', ');
  writer.writeLine(
    `const ${step.id} = await ${db}.write(expected === null ? ${sqlConstant(step)} : ${ifMatchConstant(step)}, expected === null ? [${values}] : [${compared}]);`,
  );
  writer.writeLine(`if (${step.id}.affectedRows === 0) await scope.mismatch(${db}, ${versionConstant(step)}, [${probeBinds.join(', ')}]);`);
}
