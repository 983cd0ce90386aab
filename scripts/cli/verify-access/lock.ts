// access.lock read into its lines: apart from the run, which only walks them.
import { VerifyUsage } from './errors.js';

/** A line of access.lock: backend, path, method and who admits (`public`, `*`, or roles). */
export interface LockLine {
  backend: string;
  path: string;
  method: string;
  rule: 'public' | '*' | string[];
  /**
   * The steps that cross tenants on purpose (`tenant="all"`, docs/internals/contract.md §14): the line's suffix
   * ` tenant=all:<step>[,<step>]`. verify-access checks no other tenant's rows on such a line.
   */
  tenantAll?: string[];
}

/** The suffix of a lock line whose method crosses tenants on purpose. */
const TENANT_ALL = /^tenant=all:(.+)$/;

export function readLock(text: string, file: string): LockLine[] {
  return text.split('\n').flatMap((line, index) => {
    if (line.trim() === '' || line.startsWith('#')) return [];
    const [backend, served, method, ...words] = line.trim().split(/\s+/);
    const crossing = TENANT_ALL.exec(words.at(-1) ?? '');
    const roles = crossing ? words.slice(0, -1) : words;
    if (backend === undefined || served === undefined || method === undefined || roles.length === 0) {
      throw new VerifyUsage(`${file}:${index + 1}: not a line of access.lock: ${line}`);
    }
    const rule = roles.length === 1 && (roles[0] === 'public' || roles[0] === '*') ? (roles[0] as 'public' | '*') : roles;
    return [{ backend, path: served, method, rule, ...(crossing ? { tenantAll: crossing[1]!.split(',') } : {}) }];
  });
}
