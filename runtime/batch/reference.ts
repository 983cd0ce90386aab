import { badRequest } from '../errors.js';

/**
 * An operation's body with every `{"$ref": "/<index>/<pointer>"}` replaced by the value it points at in the answers
 * of the operations before it (docs/internals/contract.md §15): a JSON Pointer (RFC 6901) into that list. A
 * reference to an operation not run yet, or to nothing, is a 400 naming the operation. A body without one is
 * answered as it is, unchanged.
 */
export function resolveReferences(body: Record<string, unknown>, answers: (index: number) => unknown, index: number): Record<string, unknown> {
  return resolve(body, answers, index, 0) as Record<string, unknown>;
}

/**
 * Deepest nesting an operation's body may have: JSON.parse takes a 1 MB body of brackets 500,000 deep, which this
 * recursion would answer with a stack overflow (500). No parameter is nested at all; a `$ref` is two levels.
 */
const MAX_DEPTH = 256;

function resolve(value: unknown, answers: (index: number) => unknown, index: number, depth: number): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (depth >= MAX_DEPTH) throw badRequest(`Operation ${index}: body is nested deeper than ${MAX_DEPTH} levels`);
  if (Array.isArray(value)) {
    let items: unknown[] | undefined;
    value.forEach((item, i) => {
      const resolved = resolve(item, answers, index, depth + 1);
      if (resolved !== item) (items ??= value.slice())[i] = resolved;
    });
    return items ?? value;
  }
  const keys = Object.keys(value);
  const ref = (value as Record<string, unknown>).$ref;
  if (keys.length === 1 && typeof ref === 'string') return pointAt(ref, answers, index);
  // Copied only once a reference is met below it: a body with none (most) is the object JSON.parse made, with no
  // copy made of it for each operation (a CPU profile of the bench's batch of 50 inserts: some 4 µs an operation).
  let resolved: Record<string, unknown> | undefined;
  keys.forEach((key, k) => {
    const field = (value as Record<string, unknown>)[key];
    const made = resolve(field, answers, index, depth + 1);
    if (made === field && resolved === undefined) return;
    if (resolved === undefined) {
      resolved = {};
      for (const before of keys.slice(0, k)) define(resolved, before, (value as Record<string, unknown>)[before]);
    }
    define(resolved, key, made);
  });
  return resolved ?? value;
}

/** Defined, not assigned: a field named __proto__ stays a field, as JSON.parse made it. */
function define(object: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
}

function pointAt(pointer: string, answers: (index: number) => unknown, index: number): unknown {
  const refuse = (why: string) => badRequest(`Operation ${index}: $ref ${JSON.stringify(pointer)} ${why}`);
  if (!pointer.startsWith('/')) throw refuse('is a JSON Pointer: /<operation>/<field>...');
  const tokens = pointer
    .slice(1)
    .split('/')
    .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'));
  const first = tokens[0]!;
  // The operation's index, in canonical digits: an earlier one, whose answer is known.
  if (!/^(0|[1-9][0-9]*)$/.test(first) || Number(first) >= index) throw refuse('names no earlier operation');
  let at: unknown = answers(Number(first));
  for (const token of tokens.slice(1)) {
    if (Array.isArray(at) && /^(0|[1-9][0-9]*)$/.test(token) && Number(token) < at.length) at = at[Number(token)];
    else if (typeof at === 'object' && at !== null && !Array.isArray(at) && Object.hasOwn(at, token)) at = (at as Record<string, unknown>)[token];
    else throw refuse('points at nothing');
  }
  return at;
}
