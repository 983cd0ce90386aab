import { type StatementStructures, StructureKind, VariableDeclarationKind } from 'ts-morph';
import type { Operation, Resource } from '../ir.js';
import { constant } from '../names.js';
import { auditKeeps } from '../secrets.js';
import { quote } from './print.js';

/**
 * An audited operation's `AuditRule` (docs/internals/contract.md §12), a constant of its module: the parameters whose
 * values its rows keep, decided here (generator/secrets.ts), and, in its comment, why each other one is left out.
 */
export function auditRuleConstant(resource: Resource, operation: Operation): StatementStructures {
  const keeps = auditKeeps(operation);
  const leftOut = operation.params
    .filter((name) => !keeps.includes(name))
    .map((name) => `${name} (${operation.paramTypes[name]?.secretBecause ?? 'not in audit_params'})`);
  const kept = keeps.length === 0 ? 'no parameter value' : `the values of ${keeps.join(', ')}`;
  return {
    kind: StructureKind.VariableStatement,
    docs: [`What an audited call of ${operation.method} keeps in its row: ${kept}.${leftOut.length > 0 ? ` Left out: ${leftOut.join(', ')}.` : ''}`],
    declarationKind: VariableDeclarationKind.Const,
    declarations: [{ name: auditRuleName(resource, operation), type: 'AuditRule', initializer: `{ keeps: [${keeps.map(quote).join(', ')}] }` }],
  };
}

export function auditRuleName(resource: Resource, operation: Operation): string {
  return `${constant(resource.name)}_${operation.method}_AUDIT`;
}
