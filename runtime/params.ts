import { badRequest } from './errors.js';
import type { ParamValue } from './types.js';

/**
 * Request parameters come from the query string and the body (form-encoded or
 * JSON); the body wins (contract §2). Only scalars are parameters: an object,
 * an array or a repeated query key is a 400, never silently flattened.
 */
export function readParams<Name extends string>(
  query: Record<string, string | string[] | undefined>,
  body: unknown,
  names: readonly Name[],
): Record<Name, ParamValue> {
  const fromBody = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  // No prototype: a parameter named __proto__ is a parameter like any other.
  const values = Object.create(null) as Record<Name, ParamValue>;
  for (const name of names) {
    const value = Object.hasOwn(fromBody, name) ? fromBody[name] : query[name];
    if (value === undefined) throw badRequest(`Missing parameter '${name}'`);
    if (value === null || typeof value === 'string' || typeof value === 'boolean') {
      values[name] = value;
    } else if (typeof value === 'number' && Number.isFinite(value)) {
      values[name] = value;
    } else {
      throw badRequest(`Parameter '${name}' must be a single string, number, boolean or null`);
    }
  }
  return values;
}
