/**
 * `xmlrest verify-access BASE_URL` (docs/internals/contract.md §8): proves that a running
 * server admits and refuses as access.lock says, route by route, by calling it.
 *
 * First it compares the server's own OpenAPI document with the resources it
 * was given (every operation, and the parameters of each): a server deployed
 * from other resources is refused before anything is sent or any user made,
 * since whether a call can change data is read from the resources.
 *
 * It signs in as temporary users of the default user tables, one per role the
 * lock names on those tables' backends and one holding a role no route names
 * (`xmlrest-verify-any`: authenticated, entitled to nothing), with every way in
 * each backend has (HTTP Basic; Bearer tokens of both shapes; API keys), and
 * calls every route of the lock as each of them and with no credentials. Every
 * backend of the default tables is called by every one of those users, since
 * they are one user directory: a guard widened to another backend's role, or
 * to `*`, admits a user the lock refuses, and is named. No sign-in fails on
 * purpose, so the server's login limits never count one of its calls.
 *
 * It changes no application data: a route is called without its parameters,
 * so that one the guard admits answers 400 (routing, then the role, then the
 * parameters: docs/internals/contract.md §3) and never runs; a read without parameters
 * is called as it is; a write without parameters, which would run, is never
 * sent and is reported unproven, as is a token request that writes besides
 * issuing its token.
 *
 * The temporary users' roles are grants that end (15 minutes, renewed every 5
 * as a long run goes on): a run killed with SIGKILL leaves users who can call
 * nothing once their grants end, and a later run removes them then (a run
 * still going renews its grants, so another run never takes its users). The users, their keys and sessions
 * are removed at the end, on a failure, and on SIGINT and SIGTERM; one line of
 * the console's history says what a run made and removed. What cannot be
 * proven is said, never passed: routes of a backend with its own AuthQuery
 * (its users live in its own tables) beyond the call with no credentials, and
 * the tokens of identity providers (verify-access cannot sign them).
 *
 * Its parts, in verify-access/: the run (run.ts), access.lock (lock.ts), the server's document against the
 * resources' (server-match.ts), the temporary users in the database (users.ts), their sign-ins (sign-in.ts), one
 * call and what it proves (call.ts), how a run fails (errors.ts), and the command around it (command.ts). This
 * file is the path the command's line (commands/verify-access.ts) loads it from.
 */
export type { Check } from './verify-access/call.js';
export { verifyAccessCommand } from './verify-access/command.js';
export { CouldNotFinish, RemovalFailed, VerifyUsage } from './verify-access/errors.js';
export { readLock } from './verify-access/lock.js';
export { type Verdict, type VerifyOptions, verifyAccess } from './verify-access/run.js';
export { ANY_ROLE, TEMPORARY_USER_PREFIX } from './verify-access/users.js';
