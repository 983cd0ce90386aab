// JSON Schemas of a step's rows and of a parameter, from the types the database gave: apart since the operations
// and the webhooks' bodies both use them.
import type { ParamType, ResultColumn, Step } from '../ir.js';
import type { Schema } from './responses.js';

export function stepSchema(step: Step): Schema {
  if (step.kind === 'execute') return { description: `What the plug-in ${step.plugin.classname} returns.` };
  if (step.statement === 'write') return { $ref: '#/components/schemas/WriteResult' };
  if (step.typed === null) {
    const properties = step.columns === null ? undefined : Object.fromEntries(step.columns.map((name) => [name, {}]));
    return { type: 'array', items: { type: 'object', ...(properties ? { properties } : {}) } };
  }
  return {
    type: 'array',
    items: {
      type: 'object',
      required: step.typed.map((column) => column.name),
      properties: Object.fromEntries(step.typed.map((column) => [column.name, columnSchema(column)])),
    },
  };
}

function columnSchema(column: ResultColumn): Schema {
  const nullable = (schema: Schema): Schema =>
    column.nullable ? (schema.type ? { ...schema, type: [schema.type, 'null'] } : { anyOf: [schema, { type: 'null' }] }) : schema;
  const description = { description: column.sqlType };
  switch (column.tsType) {
    case 'number':
      return nullable({ type: /int|year/.test(column.sqlType) ? 'integer' : 'number', ...description });
    case 'string':
      return nullable({ type: 'string', ...description, ...(/bigint|decimal/.test(column.sqlType) ? { pattern: '^-?[0-9]+(\\.[0-9]+)?$' } : {}) });
    case 'Date':
      return nullable({ type: 'string', format: 'date-time', ...description });
    case 'Buffer':
      return nullable({ type: 'object', ...description, properties: { type: { const: 'Buffer' }, data: { type: 'array', items: { type: 'integer' } } } });
    default:
      return description;
  }
}

export function paramSchema(type: ParamType | undefined, inQuery: boolean): Schema {
  const described = type?.column ? { description: `Compared with or stored in ${type.column}.` } : {};
  const nullable = (schema: Schema): Schema => (type?.nullable && !inQuery && schema.type ? { ...schema, type: [schema.type, 'null'] } : schema);
  switch (type?.kind) {
    case 'integer':
      return nullable({
        type: 'integer',
        ...(type.unsigned ? { minimum: 0 } : {}),
        ...(type.min !== undefined ? { minimum: type.min } : {}),
        ...(type.max !== undefined ? { maximum: type.max } : {}),
        ...described,
      });
    case 'bigint':
    case 'decimal':
      return nullable({ type: 'string', pattern: type.kind === 'bigint' ? '^-?[0-9]+$' : '^-?([0-9]+(\\.[0-9]*)?|\\.[0-9]+)$', ...described });
    case 'number':
      return nullable({ type: 'number', ...described });
    case 'string': {
      // JSON Schema counts characters; a byte limit bounds them too (a character is at least one byte).
      const maxLength = Math.min(type.maxLength ?? Infinity, type.maxBytes ?? Infinity);
      const bytes = type.maxBytes !== undefined ? `At most ${type.maxBytes} bytes of UTF-8.` : undefined;
      const description = [described.description, bytes].filter(Boolean).join(' ');
      return nullable({
        type: 'string',
        ...(type.secret ? { format: 'password' } : {}),
        ...(maxLength !== Infinity ? { maxLength } : {}),
        ...(description ? { description } : {}),
      });
    }
    case 'enum':
      return nullable({ type: 'string', enum: type.values ?? [], ...described });
    case 'date':
      return nullable({ type: 'string', format: 'date', ...described });
    case 'datetime':
      return nullable({ type: 'string', pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}([ T][0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]{1,6})?)?)?Z?$', ...described });
    case 'time':
      return nullable({ type: 'string', pattern: '^-?[0-9]{1,3}:[0-9]{2}(:[0-9]{2}(\\.[0-9]{1,6})?)?$', ...described });
    default: {
      const text = { description: [described.description, 'Bound as text: a number or boolean as its text, as a form sends it.'].filter(Boolean).join(' ') };
      return inQuery ? { type: 'string', ...text } : { type: ['string', 'number', 'boolean', 'null'], ...text };
    }
  }
}
