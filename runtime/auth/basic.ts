import { HttpError } from '../errors.js';
import { credentialProblem } from './bounds.js';
import { parseAuthorization } from './header.js';
import type { AuthScheme, Principal, SchemeFactory } from './scheme.js';

/**
 * HTTP Basic (RFC 7617, docs/internals/contract.md §4): the user name and password on
 * every request, checked with the backend's auth query, which returns a row
 * per role the user holds (`user_id`, `role_name`) and none for wrong
 * credentials.
 */
export const basicScheme: SchemeFactory = ({ backend, credentials }): AuthScheme => {
  const challenge = `Basic realm="${backend.name}", charset="UTF-8"`;
  const refuse = (message: string, reason: string) => new HttpError(401, message, { 'WWW-Authenticate': challenge }, reason);
  return {
    challenge,
    async authenticate(header: string, address: string): Promise<Principal> {
      const parsed = parseAuthorization(header);
      if (parsed?.scheme !== 'basic') throw refuse('Malformed or wrong-scheme credentials: use Basic', parsed ? 'wrong_scheme' : 'malformed');
      // Over-long credentials cost no query and no hash (bounds.ts).
      if (credentialProblem('user', parsed.user) || credentialProblem('password', parsed.pass)) throw refuse('Invalid credentials', 'malformed');
      const { rows, reason, tenant } = await credentials.check(parsed.user, parsed.pass, address);
      if (rows.length === 0) throw refuse('Invalid credentials', reason ?? 'bad_credentials');
      const principal: Principal = { userId: String(rows[0]!.user_id), roles: rows.map((row) => String(row.role_name)) };
      // A tenant backend's user's tenant, read with the password's check (credentials.ts, docs/internals/contract.md §14).
      if (tenant !== undefined) principal.tenant = tenant;
      return principal;
    },
  };
};
