// An operation's answer as JSON text, written for the columns the database described (docs/internals/contract.md §17):
// one function per read step's row and one per operation, each the bytes JSON.stringify gives, through the runtime's
// few pieces (runtime/json-text.ts), which write the described type fast and any other value as JSON.stringify does.
import { type StatementStructures, StructureKind } from 'ts-morph';
import type { Operation, ResultColumn, SqlStep } from '../ir.js';
import { camel } from '../names.js';
import { pagedStep } from './handler.js';
import { handlerName, rowType } from './module-names.js';
import { propertyAccess, quote, templateLiteral } from './print.js';

/** The runtime's pieces an operation's JSON functions call, for the module's import. */
export function jsonPieces(operation: Operation): string[] {
  if (!writesJson(operation)) return [];
  const pieces = new Set<string>();
  for (const step of operation.steps) {
    if (!step.output || step.kind !== 'sql') continue;
    if (step.statement === 'write') pieces.add('jsonNumber');
    else {
      pieces.add('jsonRows');
      for (const column of step.typed ?? []) pieces.add(PIECE_OF_TYPE[column.tsType] ?? 'jsonValue');
    }
  }
  if (pagedStep(operation)) pieces.add('jsonString');
  return [...pieces];
}

/** The piece that writes a value of each type mysql2 gives (generator/types/columns.ts); any other, jsonValue. */
const PIECE_OF_TYPE: Record<string, string> = { number: 'jsonNumber', string: 'jsonString', Date: 'jsonDate' };

export function rowJsonName(step: SqlStep): string {
  return `${camel(step.id)}RowJson`;
}

export function operationJsonName(operation: Operation): string {
  return `${handlerName(operation)}Json`;
}

/**
 * Whether the operation's answer can be written when generating: every step in it a statement whose result is known.
 * Not: a plug-in's output (its shape is the plug-in's); a read not typed from the database; a read whose columns the
 * text does not name (`*`: a column added to the table later would be in the row); a column whose name mysql2 does not
 * make an own property (`__proto__`) or JSON.stringify writes first (an array index, `42`). The runtime then uses
 * JSON.stringify.
 */
export function writesJson(operation: Operation): boolean {
  return operation.steps.every((step) => !step.output || (step.kind === 'sql' && (step.statement === 'write' || rowWritable(step))));
}

function rowWritable(step: SqlStep): boolean {
  return step.columns !== null && step.typed !== null && step.typed.every((column) => column.name !== '__proto__' && !/^(0|[1-9][0-9]*)$/.test(column.name));
}

/** The read steps in the operation's answer whose rows get a function: each step's once. */
export function jsonRowSteps(operation: Operation): SqlStep[] {
  if (!writesJson(operation)) return [];
  return operation.steps.filter((step): step is SqlStep => step.output && step.kind === 'sql' && step.statement === 'read');
}

/** A piece of a JSON text: literal text, or an expression that gives a value's JSON text. */
type Piece = { text: string } | { expression: string };

/** A row's text: each column in the row's order (a repeated name at its first place, with its last value and type, as mysql2 makes it). */
export function rowJsonFunction(step: SqlStep): StatementStructures {
  const columns = [...new Map((step.typed as ResultColumn[]).map((column) => [column.name, column])).values()];
  return {
    kind: StructureKind.Function,
    docs: [`A row of step "${step.id}" as JSON text: JSON.stringify's bytes, each column written for the type the database described.`],
    name: rowJsonName(step),
    parameters: [{ name: 'row', type: rowType(step) }],
    returnType: 'string',
    statements: `return ${templateOf(objectPieces(columns.map((column) => [column.name, [{ expression: `${PIECE_OF_TYPE[column.tsType] ?? 'jsonValue'}(row${propertyAccess(column.name)})` }]])))};`,
  };
}

/** The operation's answer: its steps' fields in the handler's order, then a paged list's `next`. */
export function operationJsonFunction(operation: Operation, responseType: string): StatementStructures {
  const fields: [string, Piece[]][] = operation.steps
    .filter((step): step is SqlStep => step.output && step.kind === 'sql')
    .map((step) => {
      const value = `answer${propertyAccess(step.id)}`;
      if (step.statement === 'read') return [step.id, [{ expression: `jsonRows(${value}, ${rowJsonName(step)})` }]];
      // A write's result, as StatementRunner.write makes it (runtime/db/statements.ts).
      return [
        step.id,
        objectPieces([
          ['affectedRows', [{ expression: `jsonNumber(${value}.affectedRows)` }]],
          ['insertId', [{ expression: `jsonNumber(${value}.insertId)` }]],
        ]),
      ];
    });
  if (pagedStep(operation)) fields.push(['next', [{ expression: 'jsonString(answer.next)' }]]);
  return {
    kind: StructureKind.Function,
    docs: [`${operation.method}'s answer as JSON text (docs/internals/contract.md §17): the bytes JSON.stringify gives.`],
    name: operationJsonName(operation),
    parameters: [{ name: fields.length === 0 ? '_answer' : 'answer', type: responseType }],
    returnType: 'string',
    statements: `return ${templateOf(objectPieces(fields))};`,
  };
}

/** `{"key":value,...}`: each key's JSON text, then its value's pieces. */
function objectPieces(fields: [string, Piece[]][]): Piece[] {
  if (fields.length === 0) return [{ text: '{}' }];
  return [...fields.flatMap(([key, value], index) => [{ text: `${index === 0 ? '{' : ','}${JSON.stringify(key)}:` }, ...value]), { text: '}' }];
}

/** The pieces as one template literal, its texts escaped for it; a text alone, as a quoted string. */
function templateOf(pieces: Piece[]): string {
  if (pieces.every((piece) => 'text' in piece)) return quote(pieces.map((piece) => (piece as { text: string }).text).join(''));
  return `\`${pieces.map((piece) => ('text' in piece ? templateLiteral(piece.text).slice(1, -1) : `\${${piece.expression}}`)).join('')}\``;
}
