// A Request's `idempotency` (docs/internals/contract.md §15): whether a POST requires an Idempotency-Key.
import type { Diagnostics } from '../diagnostics.js';
import type { HttpMethod } from '../ir.js';
import { type AttributeRule, type RawAttribute, rule } from './elements.js';

interface RequestIdempotency {
  idempotency?: 'required';
}
const IDEMPOTENCY_ATTRIBUTES: readonly AttributeRule<RequestIdempotency>[] = [
  rule<RequestIdempotency, 'idempotency'>(
    'idempotency',
    'idempotency',
    (value) => (value === 'required' ? 'required' : undefined),
    (value) => `idempotency is required (a POST without an Idempotency-Key is refused, 400), not "${value}"`,
  ),
];
/** The names this table reads, which the schema must give Request too (test/unit/reference.test.ts). */
export const IDEMPOTENCY_ATTRIBUTE_NAMES: readonly string[] = IDEMPOTENCY_ATTRIBUTES.map((attribute) => attribute.name);

/**
 * `idempotency="required"`, or undefined. Only a POST takes it, and only one that runs a transaction (a write, or
 * several statements): every other request ignores the header, so requiring it there would refuse for nothing.
 */
export function readIdempotency(
  attribute: RawAttribute | undefined,
  request: { method: HttpMethod | undefined; transaction: boolean },
  diagnostics: Diagnostics,
): 'required' | undefined {
  if (attribute === undefined) return undefined;
  const target: RequestIdempotency = {};
  if (!IDEMPOTENCY_ATTRIBUTES[0]!.apply(attribute.value, target)) {
    diagnostics.error(attribute.at, IDEMPOTENCY_ATTRIBUTES[0]!.error(attribute.value));
    return undefined;
  }
  if (request.method !== undefined && request.method !== 'POST') {
    diagnostics.error(attribute.at, `idempotency is for a POST request, not ${request.method}`);
    return undefined;
  }
  if (!request.transaction) {
    diagnostics.error(attribute.at, 'idempotency="required" needs a request that writes (an Idempotency-Key is taken by a POST that runs a transaction)');
    return undefined;
  }
  return target.idempotency;
}
