import type Koa from 'koa';
import type { FieldReader } from '../../body.js';
import type { ParamSpecs } from '../../contract.js';
import { badRequest, HttpError } from '../../errors.js';
import { readParams } from '../../params.js';
import type { Guard } from '../guard.js';
import { principalName } from '../scheme.js';
import { type CredentialRules, credentialsOf, screenLogin } from '../transport/transport.js';
import type { Sessions } from './sessions.js';

const REFRESH_FIELDS = { refresh_token: { kind: 'string', nullable: false, maxBytes: 64, from: 'body' } } as const satisfies ParamSpecs;
const LOGOUT_FIELDS = { scope: { kind: 'string', nullable: true, maxBytes: 8 } } as const satisfies ParamSpecs;

/**
 * `POST {base}/<backend>/v1.0/token/refresh` (docs/internals/contract.md §10): the form
 * field `refresh_token`, from the body only, answers 201 with a new access
 * token and a new refresh token; the one presented is used up.
 */
export function refreshDoor(sessions: Sessions, readFields: FieldReader, credentials: CredentialRules): Koa.Middleware {
  return async (ctx) => {
    // A token request like the others: no other site's page may make one with a browser's credentials.
    screenLogin(ctx, credentials);
    const fields = readParams<{ refresh_token: string }>({}, await readFields(ctx, 10).body, REFRESH_FIELDS);
    const pair = await sessions.refresh(fields.refresh_token, ctx.ip);
    ctx.status = 201;
    ctx.body = { token: pair.token, type: 'Bearer', refresh_token: pair.refreshToken };
  };
}

/**
 * `POST {base}/<backend>/v1.0/logout` with the session's access token: ends
 * its session; `scope=all` ends every session of its user on the backend.
 * Every server refuses their access tokens within 5 s, this one at once.
 */
export function logoutDoor(guard: Guard, sessions: Sessions, readFields: FieldReader): Koa.Middleware {
  return async (ctx) => {
    // A person's own token only: a key stands in for its user on the routes it admits, not for the user's sign-ins.
    const { authorization, apiKey } = credentialsOf(ctx);
    const principal = await guard.identifyPerson(authorization, '*', ctx.ip, apiKey);
    ctx.state.userId = principalName(principal);
    // Sessions are the backend's own users': an outside issuer's user ends none, least of all a same-named local user's.
    if (principal.issuer !== undefined) throw new HttpError(400, 'A token of an identity provider belongs to no session here: sign out at the provider');
    const { query, body } = readFields(ctx, 10);
    const parsed = await body;
    // `scope` is optional: read only when sent.
    const sent = (typeof parsed === 'object' && parsed !== null && Object.hasOwn(parsed, 'scope')) || query.scope !== undefined;
    const { scope } = sent ? readParams<{ scope: string | null }>(query, parsed, LOGOUT_FIELDS) : { scope: null };
    if (scope !== null && scope !== 'all') throw badRequest("Parameter 'scope' must be 'all' or absent");
    let ended: number;
    if (scope === 'all') ended = await sessions.endAll(principal.userId, 'logout_all');
    else if (principal.sessionId !== undefined) ended = await sessions.end(principal.sessionId, 'logout');
    else throw new HttpError(400, 'This token belongs to no session: sign in again for one, or send scope=all');
    ctx.status = 200;
    ctx.body = { ended };
  };
}
