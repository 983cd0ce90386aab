import path from 'node:path/posix';
import { type StatementStructures, StructureKind, VariableDeclarationKind } from 'ts-morph';
import type { Operation, Resource, ResultColumn, SqlStep } from '../ir.js';
import { pascal } from '../names.js';
import { auditRuleConstant, auditRuleName } from './audit.js';
import { pagedStep, writeHandlerBody } from './handler.js';
import { jsonPieces, jsonRowSteps, operationJsonFunction, operationJsonName, rowJsonFunction, writesJson } from './json.js';
import type { EmitOptions } from './layout.js';
import { listConstant } from './list-constant.js';
import {
  accessExpression,
  eventType,
  handlerName,
  paramsConstant,
  rolesConstant,
  rowType,
  sqlConstant,
  stepResultType,
  VALIDATOR_CONSTANT,
} from './module-names.js';
import { paramDoc, paramSpecLiteral, paramTsType } from './params.js';
import { doc, finish, importPath, objectConstant, propertyName, quote, runtimeImport, templateLiteral } from './print.js';
import { versionConstants, versionText } from './version.js';

/**
 * One resource's module: a named SQL constant per step, the row, parameter
 * and response types, one straight-line handler per method, and the
 * `resource` the backend's index lists.
 */

export function emitResource(resource: Resource, file: string, options: EmitOptions): string {
  const statements: (StatementStructures | string)[] = [];
  const runtime = runtimeImport(options, file);
  const typeName = pascal(resource.name) + (resource.version === '1.0' ? '' : `V${resource.version.replaceAll('.', '_')}`);

  const runtimeTypes = new Set(['RequestScope', 'ResourceModule']);
  const runtimeValues = new Set<string>();
  const plugins = new Map<string, Set<string>>();
  for (const operation of resource.operations) {
    for (const piece of jsonPieces(operation)) runtimeValues.add(piece);
    if (operation.params.length > 0) runtimeTypes.add('ParamSpecs');
    if (operation.emits !== undefined) runtimeTypes.add('EventPayload');
    if (operation.audit) runtimeTypes.add('AuditRule');
    // An event's data is its step's result: a write's, even when the step is not in the response.
    for (const emit of operation.emits ?? []) {
      const step = operation.steps.find((candidate) => candidate.id === emit.step);
      if (step?.kind === 'sql' && step.statement === 'write') runtimeTypes.add('WriteResult');
    }
    for (const step of operation.steps) {
      if (step.kind === 'sql' && step.statement === 'write' && step.output) runtimeTypes.add('WriteResult');
      if (step.kind === 'sql' && step.list) runtimeTypes.add('ListSpec');
      if (step.kind === 'execute') {
        // Built-in plug-ins come through the runtime's public entry, like everything else of the runtime.
        if (step.plugin.builtin) runtimeValues.add(step.plugin.exportName);
        else {
          const module = importPath(options, file, step.plugin.module);
          plugins.set(module, (plugins.get(module) ?? new Set()).add(step.plugin.exportName));
        }
        for (const arg of step.args) if (arg.bind.kind === 'ref' && arg.bind.target === 'plugin') runtimeValues.add('cell');
      }
      if (step.kind === 'sql') for (const bind of step.binds) if (bind.kind === 'ref' && bind.target === 'plugin') runtimeValues.add('cell');
    }
  }
  if (runtimeValues.size > 0) statements.push({ kind: StructureKind.ImportDeclaration, moduleSpecifier: runtime, namedImports: [...runtimeValues].sort() });
  statements.push({ kind: StructureKind.ImportDeclaration, moduleSpecifier: runtime, isTypeOnly: true, namedImports: [...runtimeTypes].sort() });
  for (const [module, names] of [...plugins].sort(([a], [b]) => (a < b ? -1 : 1))) {
    statements.push({ kind: StructureKind.ImportDeclaration, moduleSpecifier: module, namedImports: [...names].sort() });
  }

  for (const operation of resource.operations) {
    if (operation.validator) {
      const tag = operation.validator.kind === 'version' ? 'the version it reads' : 'a digest of its rows, the route, the caller and the query string';
      statements.push({
        kind: StructureKind.VariableStatement,
        docs: [`${operation.method}'s Validator: run before the steps; the answer's ETag is ${tag}, and a matching If-None-Match is a 304.`],
        declarationKind: VariableDeclarationKind.Const,
        declarations: [{ name: VALIDATOR_CONSTANT, initializer: templateLiteral(operation.validator.sql) }],
      });
    }
    for (const step of operation.steps) {
      if (step.kind !== 'sql') continue;
      if (step.list) statements.push(listConstant(operation, step));
      else if (operation.version?.step === step.id) statements.push(...versionConstants(operation, step));
      else {
        statements.push({
          kind: StructureKind.VariableStatement,
          docs: [`${operation.method} step "${step.id}"${step.output ? '' : ' (not in the response)'}.`],
          declarationKind: VariableDeclarationKind.Const,
          declarations: [{ name: sqlConstant(step), initializer: templateLiteral(step.sql) }],
        });
      }
      if (step.statement === 'read') {
        statements.push({
          kind: StructureKind.Interface,
          docs: [rowDoc(step)],
          isExported: true,
          name: rowType(step),
          ...(step.typed !== null
            ? {
                properties: uniqueColumns(step.typed).map((column) => ({
                  docs: [doc(`${column.sqlType}${column.nullable ? ', nullable' : ''}`)],
                  name: propertyName(column.name),
                  type: column.tsType + (column.nullable ? ' | null' : ''),
                })),
              }
            : step.columns === null
              ? { extends: ['Record<string, unknown>'] }
              : { properties: unique(step.columns).map((column) => ({ name: propertyName(column), type: 'unknown' })) }),
        });
      }
    }
  }

  // Each event type the module emits, typed once: what its webhooks receive (docs/internals/contract.md §12).
  const declared = new Set<string>();
  for (const operation of resource.operations) {
    for (const emit of operation.emits ?? []) {
      if (declared.has(emit.event)) continue;
      declared.add(emit.event);
      const step = operation.steps.find((candidate) => candidate.id === emit.step)!;
      statements.push({
        kind: StructureKind.Interface,
        docs: [
          doc(`The event "${emit.event}", as its webhooks receive it once ${operation.method}'s transaction commits: the Standard Webhooks payload, signed.`),
        ],
        isExported: true,
        name: eventType(emit),
        extends: ['EventPayload'],
        properties: [
          { name: 'type', type: quote(emit.event) },
          ...(emit.key === null
            ? []
            : [{ docs: ['What the event is about: the value of its key (a text or a number).'], name: 'key', type: 'string | number | null' }]),
          { name: 'data', type: `{ ${propertyName(step.id)}: ${stepResultType(step)} }` },
        ],
      });
    }
  }

  for (const operation of resource.operations) {
    const prefix = typeName + pascal(operation.method.toLowerCase());
    if (Array.isArray(operation.access)) {
      // Hard-wired: the guard checks this constant, never a lookup (docs/internals/contract.md §8).
      statements.push({
        kind: StructureKind.VariableStatement,
        docs: [`Who may call ${operation.method}: a holder of ${operation.access.join(' or ')}.`],
        declarationKind: VariableDeclarationKind.Const,
        declarations: [{ name: rolesConstant(resource, operation), initializer: `[${operation.access.map(quote).join(', ')}] as const` }],
      });
    }
    if (operation.params.length > 0) {
      const fromBody = operation.paramsFromBody === true;
      statements.push(
        objectConstant(
          `What the parameters of ${operation.method} must be, from the columns they meet; checked before any step runs.${fromBody ? ' A token request: from the body only, never the query string.' : ''}`,
          `export const ${paramsConstant(resource, operation)}: ParamSpecs`,
          operation.params.map((name) => `${propertyName(name)}: ${paramSpecLiteral(operation.paramTypes[name], fromBody)},`),
        ),
      );
      statements.push({
        kind: StructureKind.Interface,
        docs: [
          `Request parameters of ${operation.method}, from ${fromBody ? 'the body only' : 'the query string or the body'}, converted to what their columns take.`,
        ],
        isExported: true,
        name: `${prefix}Params`,
        properties: operation.params.map((name) => {
          const type = operation.paramTypes[name];
          const about = paramDoc(operation, name, type);
          return { ...(about ? { docs: [doc(about)] } : {}), name: propertyName(name), hasQuestionToken: type?.optional === true, type: paramTsType(type) };
        }),
      });
    }
    if (operation.audit) statements.push(auditRuleConstant(resource, operation));
    const outputs = operation.steps.filter((step) => step.output);
    const responseDoc = `Response body of ${operation.method}: one field per step with output="true".`;
    statements.push(
      outputs.length === 0
        ? { kind: StructureKind.TypeAlias, docs: [responseDoc], isExported: true, name: `${prefix}Response`, type: 'Record<string, never>' }
        : {
            kind: StructureKind.Interface,
            docs: [responseDoc],
            isExported: true,
            name: `${prefix}Response`,
            properties: [
              ...outputs.map((step) => ({ name: propertyName(step.id), type: stepResultType(step) })),
              ...(pagedStep(operation)
                ? [{ docs: ['The cursor of the next page (send it as `after`), or null on the last page.'], name: 'next', type: 'string | null' }]
                : []),
            ],
          },
    );
    statements.push({
      kind: StructureKind.Function,
      docs: [doc(`${operation.method} ${resource.backend}/v${resource.version}/${resource.name}${operation.description ? `: ${operation.description}` : ''}`)],
      isAsync: true,
      name: handlerName(operation),
      parameters: [{ name: 'scope', type: 'RequestScope' }],
      returnType: `Promise<${prefix}Response>`,
      statements: (writer) => writeHandlerBody(writer, resource, operation, prefix),
    });
    // Its answer's JSON text, where every field of it is known now (json.ts).
    for (const step of jsonRowSteps(operation)) statements.push(rowJsonFunction(step));
    if (writesJson(operation)) statements.push(operationJsonFunction(operation, `${prefix}Response`));
  }

  statements.push(
    objectConstant(resource.description ?? `The ${resource.name} resource.`, 'export const resource: ResourceModule', [
      `name: ${quote(resource.name)},`,
      `version: ${quote(resource.version)},`,
      `auth: ${resource.auth === null ? 'null' : quote(resource.auth)},`,
      `source: ${quote(resource.source)},`,
      'operations: {',
      ...resource.operations.map(
        (operation) =>
          `  ${operation.method}: { status: ${operation.status}, access: ${accessExpression(resource, operation)}, ${rateLimitText(operation)}${operation.audit ? `audit: ${auditRuleName(resource, operation)}, ` : ''}${operation.idempotency ? `idempotency: '${operation.idempotency}', ` : ''}${pagedStep(operation) ? 'pages: true, ' : ''}${operation.validator ? 'validator: true, ' : ''}${versionText(operation)}${operation.maxAge !== undefined ? `maxAge: ${operation.maxAge}, ` : ''}${writesJson(operation) ? `json: ${operationJsonName(operation)}, ` : ''}handler: ${handlerName(operation)} },`,
      ),
      '},',
    ]),
  );
  return finish(file, statements, resource.source, options.generatorVersion);
}

function rowDoc(step: SqlStep): string {
  if (step.typed !== null) return `A row of step "${step.id}"; types as the database describes the columns.`;
  const hint = 'Not typed yet: run npm run generate with DATABASE_URL set.';
  return `A row of step "${step.id}". ${step.columns === null ? 'Its columns are not known from the SQL text (`*`). ' : ''}${hint}`;
}

/** A repeated column name: mysql2 keeps the last value, so the last type wins. */
function uniqueColumns(columns: ResultColumn[]): ResultColumn[] {
  return [...new Map(columns.map((column) => [column.name, column])).values()];
}

function unique(names: string[]): string[] {
  return [...new Set(names)];
}

/** The operation's rate limit as the runtime reads it (docs/internals/contract.md §10), or nothing when it has none. */
function rateLimitText(operation: Operation): string {
  return operation.rateLimit === null ? '' : `rateLimit: { limit: ${operation.rateLimit.limit}, seconds: ${operation.rateLimit.seconds} }, `;
}
