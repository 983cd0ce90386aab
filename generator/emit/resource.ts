import path from 'node:path/posix';
import { type CodeBlockWriter, type StatementStructures, StructureKind, VariableDeclarationKind } from 'ts-morph';
import { listSpec, widestStatement } from '../analyse/list.js';
import type { Bind, Emit, Operation, ParamType, Resource, ResultColumn, SqlStep, Step } from '../ir.js';
import { constant, pascal } from '../names.js';
import { auditRuleConstant, auditRuleName } from './audit.js';
import type { EmitOptions } from './layout.js';
import { doc, finish, importPath, objectConstant, propertyAccess, propertyName, quote, templateLiteral } from './print.js';

/**
 * One resource's module: a named SQL constant per step, the row, parameter
 * and response types, one straight-line handler per method, and the
 * `resource` the backend's index lists.
 */

export function emitResource(resource: Resource, file: string, options: EmitOptions): string {
  const statements: (StatementStructures | string)[] = [];
  const runtime = importPath(options, file, path.join(options.runtimeDir, 'index.ts'));
  const typeName = pascal(resource.name) + (resource.version === '1.0' ? '' : `V${resource.version.replaceAll('.', '_')}`);

  const runtimeTypes = new Set(['RequestScope', 'ResourceModule']);
  const runtimeValues = new Set<string>();
  const plugins = new Map<string, Set<string>>();
  for (const operation of resource.operations) {
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
    for (const step of operation.steps) {
      if (step.kind !== 'sql') continue;
      if (step.list) statements.push(listConstant(operation, step));
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

  // Each event type the module emits, typed once: what its webhooks receive (docs/contract.md §12).
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
      // Hard-wired: the guard checks this constant, never a lookup (docs/contract.md §8).
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
          `  ${operation.method}: { status: ${operation.status}, access: ${accessExpression(resource, operation)}, ${rateLimitText(operation)}${operation.audit ? `audit: ${auditRuleName(resource, operation)}, ` : ''}${pagedStep(operation) ? 'pages: true, ' : ''}handler: ${handlerName(operation)} },`,
      ),
      '},',
    ]),
  );
  return finish(file, statements, resource.source);
}

function writeHandlerBody(writer: CodeBlockWriter, resource: Resource, operation: Operation, prefix: string): void {
  // Order is the contract's: authentication and role first, then parameters (docs/contract.md §3).
  if (operation.access !== null) {
    writer.writeLine(`${operation.usesUid ? 'const uid = ' : ''}await scope.authenticate(${accessExpression(resource, operation)});`);
  }
  if (operation.params.length > 0) {
    writer.writeLine(`const params = await scope.params<${prefix}Params>(${paramsConstant(resource, operation)});`);
  }
  const response =
    `{ ${[...operation.steps.filter((step) => step.output).map((step) => step.id), ...(pagedStep(operation) ? ['next: list.next'] : [])].join(', ')} }`.replace(
      '{  }',
      '{}',
    );
  const writeSteps = (db: string) =>
    operation.steps.forEach((step, index) => {
      writeStep(writer, step, db, operation);
      for (const emit of operation.emits ?? []) if (emit.after === index + 1) writeEmit(writer, emit, db);
    });
  if (operation.transaction) {
    writer.write('return scope.transaction(async (db) => {').newLine();
    writer.indent(() => {
      writeSteps('db');
      writer.writeLine(`return ${response};`);
    });
    writer.writeLine('});');
  } else {
    writeSteps('scope.db');
    writer.writeLine(`return ${response};`);
  }
}

/** An event into the outbox, on the request's transaction, when its writes found a row (docs/contract.md §12). */
function writeEmit(writer: CodeBlockWriter, emit: Emit, db: string): void {
  const key = emit.key === null ? '' : `, ${bindExpression(emit.key)}`;
  const changed = (emit.changes ?? []).map((step) => `${step}.affectedRows > 0`).join(' && ');
  writer.writeLine(`${changed === '' ? '' : `if (${changed}) `}await scope.emit<${eventType(emit)}>(${db}, ${quote(emit.event)}, { ${emit.step} }${key});`);
}

/** The TypeScript name of an event type's payload: `order.placed` is OrderPlacedEvent. */
export function eventType(emit: Pick<Emit, 'event'>): string {
  return `${pascal(emit.event)}Event`;
}

function writeStep(writer: CodeBlockWriter, step: Step, db: string, operation: Operation): void {
  const emitted = (operation.emits ?? []).some(
    (emit) => emit.step === step.id || (emit.key?.kind === 'ref' && emit.key.step === step.id) || emit.changes?.includes(step.id),
  );
  const unused = !step.output && !emitted && !operation.steps.some((other) => referencesStep(other, step.id));
  const target = unused ? '' : `const ${step.id} = `;
  if (step.kind === 'sql' && step.list) {
    // The statement this request needs, from the list's pieces: the filters sent, the sort, the page (runtime/lists/).
    writer.writeLine(`const list = scope.list(${listConstantName(step)}, params);`);
    const select = `await ${db}.select<${rowType(step)}>(list.sql, list.values(${step.binds.map(bindExpression).join(', ')}))`;
    writer.writeLine(`${target}${step.list.page ? `list.page(${select})` : select};`);
  } else if (step.kind === 'sql') {
    const values = `[${step.binds.map(bindExpression).join(', ')}]`;
    const call = step.statement === 'read' ? `${db}.select<${rowType(step)}>` : `${db}.write`;
    writer.writeLine(`${target}await ${call}(${sqlConstant(step)}, ${values});`);
  } else {
    const args = step.args.length === 0 ? '{}' : `{ ${step.args.map((arg) => `${propertyName(arg.name)}: ${bindExpression(arg.bind)}`).join(', ')} }`;
    writer.writeLine(`${target}await ${step.plugin.exportName}(${args}, scope.plugin);`);
  }
}

function referencesStep(step: Step, id: string): boolean {
  const binds = step.kind === 'sql' ? step.binds : step.args.map((arg) => arg.bind);
  return binds.some((bind) => bind.kind === 'ref' && bind.step === id);
}

function bindExpression(bind: Bind): string {
  switch (bind.kind) {
    case 'param':
      return `params${propertyAccess(bind.name)}`;
    case 'uid':
      return 'uid';
    case 'literal':
      return quote(bind.value);
    case 'ref':
      // A row that does not exist reads as null (docs/contract.md §2).
      if (bind.target === 'write') return `${bind.step}.${bind.column}`;
      if (bind.target === 'plugin') return `cell(${bind.step}, ${bind.row}, ${quote(bind.column)})`;
      return `${bind.step}[${bind.row}]?.${propertyAccess(bind.column).replace(/^\./, '')} ?? null`;
  }
}

function stepResultType(step: Step): string {
  if (step.kind === 'execute') return `Awaited<ReturnType<typeof ${step.plugin.exportName}>>`;
  return step.statement === 'read' ? `${rowType(step)}[]` : 'WriteResult';
}

function rolesConstant(resource: Resource, operation: Operation): string {
  return `${constant(resource.name)}_${operation.method}_ROLES`;
}

/** How the module names an operation's access: its roles constant, `'*'`, or null (public). */
function accessExpression(resource: Resource, operation: Operation): string {
  if (operation.access === null) return 'null';
  return operation.access === '*' ? quote('*') : rolesConstant(resource, operation);
}

function sqlConstant(step: SqlStep): string {
  return `${constant(step.id)}_SQL`;
}

function rowType(step: SqlStep): string {
  return `${pascal(step.id)}Row`;
}

function handlerName(operation: Operation): string {
  return operation.method === 'DELETE' ? 'remove' : operation.method.toLowerCase();
}

function paramsConstant(resource: Resource, operation: Operation): string {
  return `${constant(resource.name)}_${operation.method}_PARAMS`;
}

function paramSpecLiteral(type: ParamType | undefined, fromBody: boolean): string {
  const fields = type ? [`kind: ${quote(type.kind)}`, `nullable: ${type.nullable}`] : ["kind: 'any'", 'nullable: true'];
  if (type?.unsigned) fields.push('unsigned: true');
  if (type?.maxLength !== undefined) fields.push(`maxLength: ${type.maxLength}`);
  if (type?.maxBytes !== undefined) fields.push(`maxBytes: ${type.maxBytes}`);
  if (type?.values) fields.push(`values: [${type.values.map(quote).join(', ')}]`);
  if (type?.min !== undefined) fields.push(`min: ${type.min}`);
  if (type?.max !== undefined) fields.push(`max: ${type.max}`);
  if (type?.optional) fields.push('optional: true');
  if (fromBody) fields.push("from: 'body'");
  if (type?.secret) fields.push('secret: true');
  return `{ ${fields.join(', ')} }`;
}

/** The TypeScript type of a parameter after the runtime has checked and converted it. */
function paramTsType(type: ParamType | undefined): string {
  // The runtime binds an untyped parameter as text (runtime/params.ts), never as a number.
  if (!type || type.kind === 'any') return 'string | null';
  const base =
    type.kind === 'integer' || type.kind === 'number' ? 'number' : type.kind === 'enum' ? (type.values ?? []).map(quote).join(' | ') || 'string' : 'string';
  return type.nullable ? `${base} | null` : base;
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

/** The operation's rate limit as the runtime reads it (docs/contract.md §10), or nothing when it has none. */
function rateLimitText(operation: Operation): string {
  return operation.rateLimit === null ? '' : `rateLimit: { limit: ${operation.rateLimit.limit}, seconds: ${operation.rateLimit.seconds} }, `;
}

/** The operation's paged list step, if it has one: its answer carries `next`. */
function pagedStep(operation: Operation): SqlStep | undefined {
  return operation.steps.find((step): step is SqlStep => step.kind === 'sql' && step.list?.page !== null && step.list !== undefined);
}

function listConstantName(step: SqlStep): string {
  return `${constant(step.id)}_LIST`;
}

/**
 * A list step's pieces (runtime's ListSpec), headed by the statement the runtime makes from them for the widest
 * request (every filter, after a cursor), so that a reader sees the SQL that runs.
 */
function listConstant(operation: Operation, step: SqlStep): string {
  const spec = listSpec(step.list!);
  const term = (part: { sql: string; column: string; desc: boolean; type: string }) =>
    `{ sql: ${quote(part.sql)}, column: ${quote(part.column)}, desc: ${part.desc}, type: ${quote(part.type)} }`;
  const lines = [
    `sql: ${templateLiteral(spec.sql)},`,
    `where: ${spec.where},`,
    `tail: ${spec.tail === '' ? "''" : templateLiteral(spec.tail)},`,
    spec.filters.length === 0 ? 'filters: [],' : 'filters: [',
    ...spec.filters.map((filter) => `  { param: ${quote(filter.param)}, sql: ${templateLiteral(filter.sql)}, uses: ${filter.uses} },`),
    ...(spec.filters.length === 0 ? [] : ['],']),
    ...(spec.sort
      ? [
          'sort: {',
          `  param: ${quote(spec.sort.param)},`,
          '  allow: {',
          ...Object.entries(spec.sort.allow).map(([name, part]) => `    ${propertyName(name)}: ${term(part)},`),
          '  },',
          `  default: ${spec.sort.default ? `{ name: ${quote(spec.sort.default.name)}, desc: ${spec.sort.default.desc} }` : 'null'},`,
          '},',
        ]
      : ['sort: null,']),
    ...(spec.page
      ? ['page: {', `  size: ${spec.page.size},`, `  max: ${spec.page.max},`, '  key: [', ...spec.page.key.map((part) => `    ${term(part)},`), '  ],', '},']
      : ['page: null,']),
  ];
  const what = [step.list!.filters.length > 0 ? 'the filters sent' : '', step.list!.sort ? 'the sort asked for' : '', step.list!.page ? 'the page' : '']
    .filter(Boolean)
    .join(', ');
  const about = `${operation.method} step "${step.id}", a list${step.output ? '' : ' (not in the response)'}: the runtime makes each request's statement from these pieces (${what}), every value a \`?\`. The widest it makes:`;
  const head = [
    '/**',
    ...wrap(doc(about), 110).map((line) => ` * ${line}`),
    ' *',
    ...widestStatement(step.list!)
      .split('\n')
      .map((line) => ` *     ${doc(line)}`.trimEnd()),
    ' */',
  ];
  return [...head, `export const ${listConstantName(step)}: ListSpec = {`, ...lines.map((line) => `  ${line}`), '};'].join('\n');
}

/** What a parameter's documentation says: the column it meets, and for a list's own what it does. */
function paramDoc(operation: Operation, name: string, type: ParamType | undefined): string | undefined {
  const list = operation.steps.find((step): step is SqlStep => step.kind === 'sql' && step.list !== undefined)?.list;
  if (list?.page && name === 'limit') return `Rows in the page: ${list.page.size} unless given, at most ${list.page.max}.`;
  if (list?.page && name === 'after') return 'The cursor `next` of the page before: the page goes on after it, in its sort.';
  if (list?.sort && name === list.sort.param)
    return `The order: a name, - before it for descending${list.sort.default ? `; ${list.sort.default.desc ? '-' : ''}${list.sort.default.name} unless given` : ''}.`;
  if (list?.filters.some((filter) => filter.param === name))
    return `${type?.column ? `${type.column}; ` : ''}a filter: its condition applies only when it is sent.`;
  return type?.column;
}

/** Words in lines of at most `width` characters. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  for (const word of text.split(' ')) {
    const last = lines.at(-1);
    if (last !== undefined && last.length + 1 + word.length <= width) lines[lines.length - 1] = `${last} ${word}`;
    else lines.push(word);
  }
  return lines;
}
