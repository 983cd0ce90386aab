import { HttpError } from '../errors.js';
import type { Plugin } from '../types.js';

export interface TokenGeneratorArgs {
  /** The role name, from the auth query's `aud` column. */
  aud: unknown;
  /** The user id, from the auth query's `sub` column. */
  sub: unknown;
}

/**
 * `xmlrest.auth.TokenGenerator` (seed §4.2 shape B): turns the auth query's
 * first row into a signed token. No row means the credentials were wrong.
 */
export const tokenGenerator: Plugin<TokenGeneratorArgs, string> = (args, context) => {
  // The query has run already; a client over the limit is refused all the same, and learns nothing.
  context.login.check();
  if (args.sub === null || args.sub === undefined || args.aud === null || args.aud === undefined) {
    context.login.failed();
    throw new HttpError(401, 'Invalid credentials');
  }
  return context.signToken({ sub: String(args.sub), aud: String(args.aud) });
};
