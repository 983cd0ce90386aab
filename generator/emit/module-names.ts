// The names a resource's module gives its constants, types and handlers, and the type and access expressions that
// refer to them: apart from the module's declarations (resource.ts), since the handler's body (handler.ts) uses them too.
import type { Emit, Operation, Resource, SqlStep, Step } from '../ir.js';
import { constant, pascal } from '../names.js';
import { quote } from './print.js';

/** The TypeScript name of an event type's payload: `order.placed` is OrderPlacedEvent. */
export function eventType(emit: Pick<Emit, 'event'>): string {
  return `${pascal(emit.event)}Event`;
}

export function stepResultType(step: Step): string {
  if (step.kind === 'execute') return `Awaited<ReturnType<typeof ${step.plugin.exportName}>>`;
  return step.statement === 'read' ? `${rowType(step)}[]` : 'WriteResult';
}

export function rolesConstant(resource: Resource, operation: Operation): string {
  return `${constant(resource.name)}_${operation.method}_ROLES`;
}

/** How the module names an operation's access: its roles constant, `'*'`, or null (public). */
export function accessExpression(resource: Resource, operation: Operation): string {
  if (operation.access === null) return 'null';
  return operation.access === '*' ? quote('*') : rolesConstant(resource, operation);
}

/** The module's one `<Validator>` statement (a resource has one GET); no step id may take its name (analyse/validator.ts). */
export const VALIDATOR_CONSTANT = 'VALIDATOR_SQL';

export function sqlConstant(step: SqlStep): string {
  return `${constant(step.id)}_SQL`;
}

/** A versioned write's conditional form and its probe (docs/internals/contract.md §15), beside the step's own. */
export function ifMatchConstant(step: Pick<SqlStep, 'id'>): string {
  return `${constant(step.id)}_IF_MATCH_SQL`;
}

export function versionConstant(step: Pick<SqlStep, 'id'>): string {
  return `${constant(step.id)}_VERSION_SQL`;
}

export function rowType(step: SqlStep): string {
  return `${pascal(step.id)}Row`;
}

export function handlerName(operation: Operation): string {
  return operation.method === 'DELETE' ? 'remove' : operation.method.toLowerCase();
}

export function paramsConstant(resource: Resource, operation: Operation): string {
  return `${constant(resource.name)}_${operation.method}_PARAMS`;
}

export function listConstantName(step: SqlStep): string {
  return `${constant(step.id)}_LIST`;
}
