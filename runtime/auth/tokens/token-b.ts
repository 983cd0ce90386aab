import type { Plugin } from '../../contract.js';
import { HttpError } from '../../errors.js';

export interface TokenGeneratorArgs {
  /** The role name, from the auth query's `aud` column. */
  aud: unknown;
  /** The user id, from the auth query's `sub` column. */
  sub: unknown;
  /**
   * With stored password hashes, the query cannot compare the password: it
   * returns the stored value (`hash`, from `$[authQuery][0].pass_word`) and
   * the request's password (`password`, from `$pass`) is verified here.
   */
  password?: unknown;
  hash?: unknown;
  /** The request's user name (`$user`): failed attempts then count per user name, not only per address. */
  user?: unknown;
}

/**
 * `xmlrest.auth.TokenGenerator` (docs/internals/seed.md §4.2, token shape B): turns the auth query's
 * first row into a signed token. No row, or a password that does not verify,
 * means the credentials were wrong.
 */
export const tokenGenerator: Plugin<TokenGeneratorArgs, string> = async (args, context) => {
  const user = args.user === undefined || args.user === null ? undefined : String(args.user);
  const noRow = args.sub === null || args.sub === undefined || args.aud === null || args.aud === undefined;
  if ('hash' in args) {
    // The query returned the stored value: a whole login against it (a remembered verdict, else the limits,
    // the backoff and the hash), as HTTP Basic does one.
    const verified = await context.login.verify(user, String(args.password ?? ''), args.hash);
    if (!verified || noRow) throw new HttpError(401, 'Invalid credentials', {}, args.sub === null || args.sub === undefined ? 'unknown_user' : 'bad_password');
  } else {
    // The query compared the password itself and has run already: a client over the limit is refused all
    // the same, and learns nothing.
    await context.login.begin(user);
    if (noRow) throw new HttpError(401, 'Invalid credentials', {}, 'bad_credentials');
    await context.login.succeeded(user);
  }
  return context.issueToken({ sub: String(args.sub), aud: String(args.aud) });
};
