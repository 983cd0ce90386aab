// What a module says of an operation's parameters: the runtime's spec of each, its TypeScript type and its
// documentation; apart from the module's other declarations, since a list's own parameters are explained here too.
import type { Operation, ParamType, SqlStep } from '../ir.js';
import { quote } from './print.js';

export function paramSpecLiteral(type: ParamType | undefined, fromBody: boolean): string {
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
export function paramTsType(type: ParamType | undefined): string {
  // The runtime binds an untyped parameter as text (runtime/params.ts), never as a number.
  if (!type || type.kind === 'any') return 'string | null';
  const base =
    type.kind === 'integer' || type.kind === 'number' ? 'number' : type.kind === 'enum' ? (type.values ?? []).map(quote).join(' | ') || 'string' : 'string';
  return type.nullable ? `${base} | null` : base;
}

/** What a parameter's documentation says: the column it meets, and for a list's own what it does. */
export function paramDoc(operation: Operation, name: string, type: ParamType | undefined): string | undefined {
  const list = operation.steps.find((step): step is SqlStep => step.kind === 'sql' && step.list !== undefined)?.list;
  if (list?.page && name === 'limit') return `Rows in the page: ${list.page.size} unless given, at most ${list.page.max}.`;
  if (list?.page && name === 'after') return 'The cursor `next` of the page before: the page goes on after it, in its sort.';
  if (list?.sort && name === list.sort.param)
    return `The order: a name, - before it for descending${list.sort.default ? `; ${list.sort.default.desc ? '-' : ''}${list.sort.default.name} unless given` : ''}.`;
  if (list?.filters.some((filter) => filter.param === name))
    return `${type?.column ? `${type.column}; ` : ''}a filter: its condition applies only when it is sent.`;
  return type?.column;
}
