import type { Diagnostics, SourceLocation } from '../diagnostics.js';
import type { Operation } from '../ir.js';
import { type AttributeRule, type RawAttribute, rule } from './elements.js';

/**
 * `audit_params="id,qty"` on a Resource or a Request (docs/internals/contract.md §12): the parameters whose values its
 * audit rows keep, and no others (an allow-list; a Request's own replaces its resource's). Without it a row
 * keeps every parameter that is no secret (generator/secrets.ts); with it, only those it names, and never a
 * secret (an error once the secrets are known). Each name must be a parameter of the audited Request, or of
 * one of the resource's audited Requests: an error at its place otherwise, so that a typo does not quietly keep
 * nothing.
 */
export interface AuditParams {
  names: string[];
  at: SourceLocation;
}

const PARAM_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The attribute's row in the Resource's and the Request's attribute tables. */
interface AuditAttributes {
  names?: string[];
}
const AUDIT_ATTRIBUTES: readonly AttributeRule<AuditAttributes>[] = [
  rule<AuditAttributes, 'names'>(
    'audit_params',
    'names',
    (value) => {
      const names = value.split(/[\s,]+/).filter((name) => name !== '');
      return names.every((name) => PARAM_NAME.test(name.replace(/^\$/, ''))) ? [...new Set(names.map((name) => name.replace(/^\$/, '')))] : undefined;
    },
    (value) => `audit_params is parameter names separated by commas, such as audit_params="id,qty", not "${value}"`,
  ),
];
/** The names this table reads, which the schema must give the element too (test/unit/reference.test.ts). */
export const AUDIT_ATTRIBUTE_NAMES: readonly string[] = AUDIT_ATTRIBUTES.map((attribute) => attribute.name);

/** `audit_params` as written, or undefined when absent or wrong (the diagnostic says why). */
export function readAuditParams(attribute: RawAttribute | undefined, diagnostics: Diagnostics): AuditParams | undefined {
  if (attribute === undefined) return undefined;
  const target: AuditAttributes = {};
  const row = AUDIT_ATTRIBUTES.find((candidate) => candidate.name === attribute.name)!;
  if (!row.apply(attribute.value, target)) {
    diagnostics.error(attribute.at, row.error(attribute.value));
    return undefined;
  }
  return { names: target.names!, at: attribute.at };
}

/**
 * A Request's allow-list: its own (each name one of its parameters, and the Request audited), else its
 * resource's (checked by `checkResourceAuditParams`); none when the Request is not audited.
 */
export function requestAuditParams(
  own: AuditParams | undefined,
  inherited: AuditParams | undefined,
  request: { audit: boolean; method: string; params: readonly string[] },
  diagnostics: Diagnostics,
): AuditParams | undefined {
  if (own !== undefined) {
    if (!request.audit) diagnostics.error(own.at, `audit_params keeps parameters of audited calls: ${request.method} is not audited (audit="true")`);
    for (const name of own.names) {
      if (!request.params.includes(name))
        diagnostics.error(own.at, `audit_params names "${name}", which is no parameter of ${request.method}${known(request.params)}`);
    }
  }
  return request.audit ? (own ?? inherited) : undefined;
}

/** A Resource's allow-list: each name a parameter of one of its audited Requests that has no list of its own. */
export function checkResourceAuditParams(list: AuditParams | undefined, operations: readonly Operation[], diagnostics: Diagnostics): void {
  if (list === undefined) return;
  const inheriting = operations.filter((operation) => operation.audit && operation.auditParams === list);
  if (inheriting.length === 0) {
    diagnostics.error(list.at, 'audit_params keeps parameters of audited calls: no Request of this Resource is audited with it (audit="true")');
    return;
  }
  const params = [...new Set(inheriting.flatMap((operation) => operation.params))];
  for (const name of list.names) {
    if (!params.includes(name)) diagnostics.error(list.at, `audit_params names "${name}", which is no parameter of an audited Request${known(params)}`);
  }
}

function known(params: readonly string[]): string {
  return params.length === 0 ? ' (it has none)' : ` (${params.join(', ')})`;
}
