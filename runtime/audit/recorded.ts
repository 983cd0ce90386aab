// What a call's row keeps of it (docs/internals/contract.md §12): the values its module's rule lists, cut short, and an
// address the column takes; apart from the trail, since the request's scope makes its entries with these.

/**
 * What a row holds for a parameter the generator did not list as kept (docs/internals/contract.md §12): a secret (named
 * like one, meeting a password column, reaching a password argument) or one `audit_params` leaves out. The rule
 * is the module's (`AuditRule`, made when generating), never decided per call.
 */
export const LEFT_OUT = '[FILTERED]';

/** Longest value kept, in characters, and longest record of parameters: an audit row stays small. */
const VALUE_CHARS = 256;
const PARAMS_CHARS = 4096;

/** The parameters as the record holds them: only the values of `keeps` (every other one left out), long values cut, the whole bounded. */
export function recordedParams(params: Readonly<Record<string, unknown>> | null | undefined, keeps: ReadonlySet<string>): string | null {
  if (params === null || params === undefined) return null;
  const kept: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(params)) {
    if (!keeps.has(name)) kept[name] = LEFT_OUT;
    else if (typeof value === 'string' && value.length > VALUE_CHARS) kept[name] = `${value.slice(0, VALUE_CHARS)}…`;
    else kept[name] = value instanceof Date ? value.toISOString() : value;
  }
  const text = JSON.stringify(kept);
  return text.length <= PARAMS_CHARS ? text : JSON.stringify({ truncated: true, names: Object.keys(kept).slice(0, 50) });
}

/**
 * A client's address as the column takes it: printable ASCII, at most 64 characters. It comes from a proxy's
 * header when PROXY_HOPS says so, and such a header may hold any text: a row the database refused for it would
 * lose the record of the call.
 */
export function recordedAddress(address: string): string {
  return address.replace(/[^\x20-\x7e]/g, '?').slice(0, 64) || '-';
}
