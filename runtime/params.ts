import type { ParamSpec, ParamSpecs, ParamValue } from './contract.js';
import { badRequest } from './errors.js';

/**
 * Request parameters come from the query string and the body (form-encoded or
 * JSON); the body wins (docs/internals/contract.md §2), and a parameter whose spec says
 * `from: 'body'` (a token request's) is read from the body only: a password in
 * a URL ends up in access logs, proxies and browser history. Only scalars are parameters: an object,
 * an array or a repeated query key is a 400, never silently flattened. Each is
 * then checked against its spec and converted to what the column takes; a
 * parameter of no known type is text, whatever JSON type it came as.
 */
export function readParams<Params>(query: Record<string, string | string[] | undefined>, body: unknown, specs: ParamSpecs): Params {
  const fromBody = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  // No prototype: a parameter named __proto__ is a parameter like any other.
  const values = Object.create(null) as Record<string, unknown>;
  for (const name in specs) {
    const spec = specs[name] as ParamSpec;
    const value = Object.hasOwn(fromBody, name) ? fromBody[name] : spec.from === 'body' ? undefined : query[name];
    if (value === undefined) {
      // A list's filter, sort, limit or cursor: left out is not sent, never a 400 (docs/internals/contract.md §11).
      if (spec.optional) continue;
      throw badRequest(`Missing parameter '${name}'`);
    }
    if (!(value === null || typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value)))) {
      throw badRequest(`Parameter '${name}' must be a single string, number, boolean or null`);
    }
    // A lone surrogate (possible in JSON's \u escapes) has no UTF-8 form: the database would store U+FFFD instead.
    if (typeof value === 'string' && LONE_SURROGATE.test(value)) throw badRequest(`Parameter '${name}' is not well-formed Unicode`);
    values[name] = convert(name, value, spec);
  }
  return values as Params;
}

const INTEGER = /^-?[0-9]+$/;
/** In a `u` pattern a surrogate pair is one code point: only a lone one is of category Cs. */
const LONE_SURROGATE = /\p{Cs}/u;
const DECIMAL = /^-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)$/;
const FLOAT = /^-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$/;
const DATE = /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/;
const DATETIME = /^[0-9]{4}-[0-9]{2}-[0-9]{2}(?:[ T][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]{1,6})?)?)?Z?$/;
const TIME = /^-?[0-9]{1,3}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]{1,6})?)?$/;

function convert(name: string, value: ParamValue, spec: ParamSpec): unknown {
  if (value === null) {
    if (spec.nullable || spec.kind === 'any') return null;
    throw badRequest(`Parameter '${name}' must not be null`);
  }
  const text = typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined;
  switch (spec.kind) {
    case 'any':
      // Untyped: text, as a form would send it (docs/concepts.md, Typed parameters). Bound as a number, a JSON 0 would meet a
      // text column as a number, and MariaDB compares 'alice' = 0 as true: a password check passed without one.
      return typeof value === 'string' ? value : String(value);
    case 'integer':
    case 'bigint': {
      if (spec.min !== undefined || spec.max !== undefined) return bounded(name, value, text, spec);
      // A JSON number past 2^53 has already lost digits: the exact value must come as a string.
      if (typeof value === 'number' && !Number.isSafeInteger(value)) throw fail(name, 'a whole number in range (send a larger one as a string)');
      if (text === undefined || !INTEGER.test(text)) throw fail(name, spec.unsigned ? 'a whole number, 0 or more' : 'a whole number');
      if (spec.unsigned && text.startsWith('-')) throw fail(name, 'a whole number, 0 or more');
      if (spec.kind === 'bigint') return text;
      const number = Number(text);
      if (!Number.isSafeInteger(number)) throw fail(name, 'a whole number in range');
      return number;
    }
    case 'decimal':
      if (typeof value === 'number' && Math.abs(value) >= Number.MAX_SAFE_INTEGER) throw fail(name, 'a decimal number in range (send it as a string)');
      if (text === undefined || !DECIMAL.test(text)) throw fail(name, 'a decimal number');
      return text;
    case 'number':
      if (text === undefined || !FLOAT.test(text)) throw fail(name, 'a number');
      return Number(text);
    case 'string': {
      const string = typeof value === 'boolean' ? String(value) : (text as string);
      if (spec.maxBytes !== undefined && string.length * 3 > spec.maxBytes && Buffer.byteLength(string, 'utf8') > spec.maxBytes) {
        throw fail(name, `at most ${spec.maxBytes} bytes`);
      }
      if (spec.maxLength !== undefined && string.length > spec.maxLength && [...string].length > spec.maxLength)
        throw fail(name, `at most ${spec.maxLength} characters`);
      return string;
    }
    case 'enum':
      if (text === undefined || !spec.values?.includes(text)) throw fail(name, `one of ${(spec.values ?? []).join(', ')}`);
      return text;
    case 'date':
      if (text === undefined || !DATE.test(text)) throw fail(name, 'a date (YYYY-MM-DD)');
      return text;
    case 'datetime':
      if (text === undefined || !DATETIME.test(text)) throw fail(name, 'a date and time (YYYY-MM-DD HH:MM:SS)');
      return text;
    case 'time':
      if (text === undefined || !TIME.test(text)) throw fail(name, 'a time (HH:MM:SS)');
      return text;
  }
}

/**
 * A parameter's 400. A plain function, not a closure made in `convert` for each parameter: that closure alone cost
 * some 0.5 µs of a one-parameter GET's check (node 20, issue 46), more than the check itself.
 */
function fail(name: string, what: string): Error {
  return badRequest(`Parameter '${name}' must be ${what}`);
}

/** A whole number within the spec's bounds (a list's `limit`): anything else, however large or long, one 400 that says the range. */
function bounded(name: string, value: ParamValue, text: string | undefined, spec: ParamSpec): number {
  const min = spec.min ?? Number.MIN_SAFE_INTEGER;
  const max = spec.max ?? Number.MAX_SAFE_INTEGER;
  const number = typeof value === 'number' ? value : text !== undefined && text.length <= 16 && INTEGER.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(number) || number < min || number > max) throw fail(name, `a whole number from ${min} to ${max}`);
  return number;
}
