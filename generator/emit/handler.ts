// A method's handler body: authentication, parameters, then each step and event in the XML's order, straight-line;
// apart from the module's declarations (resource.ts), which only name the handler.
import type { CodeBlockWriter } from 'ts-morph';
import type { Bind, Emit, Operation, Resource, SqlStep, Step } from '../ir.js';
import { accessExpression, eventType, listConstantName, paramsConstant, rowType, sqlConstant, VALIDATOR_CONSTANT } from './module-names.js';
import { propertyAccess, propertyName, quote } from './print.js';
import { writeIfMatch, writeVersionedStep } from './version.js';

export function writeHandlerBody(writer: CodeBlockWriter, resource: Resource, operation: Operation, prefix: string): void {
  // Order is the contract's: authentication and role first, then parameters (docs/internals/contract.md §3).
  if (operation.access !== null && operation.tenant) {
    // A tenant backend's method (docs/internals/contract.md §14): the caller's tenant too, or a 403 for one without.
    const names = [...(operation.usesUid ? ['uid'] : []), ...(operation.tenant.binds ? ['tenant'] : [])];
    writer.writeLine(`${names.length > 0 ? `const { ${names.join(', ')} } = ` : ''}await scope.caller(${accessExpression(resource, operation)});`);
  } else if (operation.access !== null) {
    writer.writeLine(`${operation.usesUid ? 'const uid = ' : ''}await scope.authenticate(${accessExpression(resource, operation)});`);
  }
  if (operation.params.length > 0) {
    writer.writeLine(`const params = await scope.params<${prefix}Params>(${paramsConstant(resource, operation)});`);
  }
  // A GET's Validator, before any step: a 304 ends the request here (docs/internals/contract.md §15).
  const validator = operation.validator;
  if (validator)
    writer.writeLine(`await scope.validate(${VALIDATOR_CONSTANT}, [${validator.binds.map(bindExpression).join(', ')}], ${quote(validator.kind)});`);
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
  writeIfMatch(writer, operation);
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

/** An event into the outbox, on the request's transaction, when its writes found a row (docs/internals/contract.md §12). */
function writeEmit(writer: CodeBlockWriter, emit: Emit, db: string): void {
  const key = emit.key === null ? '' : `, ${bindExpression(emit.key)}`;
  const changed = (emit.changes ?? []).map((step) => `${step}.affectedRows > 0`).join(' && ');
  writer.writeLine(`${changed === '' ? '' : `if (${changed}) `}await scope.emit<${eventType(emit)}>(${db}, ${quote(emit.event)}, { ${emit.step} }${key});`);
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
  } else if (step.kind === 'sql' && operation.version?.step === step.id) {
    writeVersionedStep(writer, step, db, step.binds.map(bindExpression), operation.version.probeBinds.map(bindExpression));
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
    case 'tenant':
      return 'tenant';
    case 'literal':
      return quote(bind.value);
    case 'ref':
      // A row that does not exist reads as null (docs/internals/contract.md §2).
      if (bind.target === 'write') return `${bind.step}.${bind.column}`;
      if (bind.target === 'plugin') return `cell(${bind.step}, ${bind.row}, ${quote(bind.column)})`;
      return `${bind.step}[${bind.row}]?.${propertyAccess(bind.column).replace(/^\./, '')} ?? null`;
  }
}

/** The operation's paged list step, if it has one: its answer carries `next`. */
export function pagedStep(operation: Operation): SqlStep | undefined {
  return operation.steps.find((step): step is SqlStep => step.kind === 'sql' && step.list?.page !== null && step.list !== undefined);
}
