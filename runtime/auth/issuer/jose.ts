/**
 * jose, loaded when an outside issuer's keys or tokens first need it: a server whose backends name no `Issuer`
 * never loads it (its import is tens of milliseconds of every start, docs/internals/contract.md §9 is opt-in).
 */
let loading: Promise<typeof import('jose')> | undefined;

export function jose(): Promise<typeof import('jose')> {
  loading ??= import('jose');
  return loading;
}
