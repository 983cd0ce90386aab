// access.lock read into its lines: apart from the run, which only walks them.
import { VerifyUsage } from './errors.js';

/** A line of access.lock: backend, path, method and who admits (`public`, `*`, or roles). */
export interface LockLine {
  backend: string;
  path: string;
  method: string;
  rule: 'public' | '*' | string[];
  /** On a tenant backend, the steps that may cross tenants (`tenant=all:<step>[,<step>]`, docs/internals/contract.md §14). */
  tenantAll?: string[];
}

export function readLock(text: string, file: string): LockLine[] {
  return text.split('\n').flatMap((line, index) => {
    if (line.trim() === '' || line.startsWith('#')) return [];
    const [backend, served, method, ...words] = line.trim().split(/\s+/);
    const crossing = words.at(-1)?.startsWith('tenant=all:') ? words.pop()!.slice('tenant=all:'.length).split(',') : undefined;
    const roles = words;
    if (backend === undefined || served === undefined || method === undefined || roles.length === 0) {
      throw new VerifyUsage(`${file}:${index + 1}: not a line of access.lock: ${line}`);
    }
    const rule = roles.length === 1 && (roles[0] === 'public' || roles[0] === '*') ? (roles[0] as 'public' | '*') : roles;
    return [{ backend, path: served, method, rule, ...(crossing ? { tenantAll: crossing } : {}) }];
  });
}
