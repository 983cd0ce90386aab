// A request's part in its idempotency record (docs/internals/contract.md §15): what runtime/scope.ts and runtime/routes.ts
// call, so that each of them changes by a line or two.
import type Koa from 'koa';
import type { FieldReader } from '../body.js';
import type { Operation, Queryable } from '../contract.js';
import { answerJson } from '../json-text.js';
import { callerOf, claimOf, IdempotentReplay, idempotently } from './index.js';

const JSON_TYPE = 'application/json; charset=utf-8';

/** What a request that carries an Idempotency-Key leaves in `ctx.state`. */
interface IdempotencyState {
  backend: string;
  route: string;
  userId?: string;
  keyId?: number | string;
  /** The checked Idempotency-Key of a POST (routes.ts). */
  idempotencyKey?: string;
  /** A plug-in signed or issued a token (scope.ts): the answer is never recorded. */
  tokenIssued?: boolean;
  refreshToken?: string;
  /** The answer as recorded, so that routes.ts sends those very bytes. */
  recorded?: { result: unknown; text: string };
}

/**
 * A transaction's attempt with the request's claim around it, when the request carries a key; undefined otherwise (no
 * cost to a request without one). The body is read here if the handler has not (koa keeps it parsed), so that a
 * handler that reads no parameter still has its body in the fingerprint.
 */
export async function claimedAttempt<T>(
  ctx: Koa.Context,
  reader: { readFields: FieldReader; maxParams: number; status: number; json?: Operation['json'] | undefined },
  attempt: (db: Queryable) => Promise<T>,
): Promise<((db: Queryable) => Promise<T>) | undefined> {
  const state = ctx.state as IdempotencyState;
  const key = state.idempotencyKey;
  if (key === undefined) return undefined;
  const body = await reader.readFields(ctx, reader.maxParams).body;
  const claim = claimOf({ backend: state.backend, caller: callerOf(state), key, method: ctx.method, route: state.route, query: ctx.querystring, body });
  return idempotently(claim, attempt, (result) => {
    // An answer with a token in it (a plug-in's signToken or issueToken, a session's refresh token) is never stored.
    if (state.tokenIssued === true || state.refreshToken !== undefined) return null;
    const text = answerJson(reader.json, result as object);
    state.recorded = { result, text };
    return { status: reader.status, body: text };
  });
}

/** The text of a handler's answer: the very text recorded with it, when it was, else its JSON (its module's `json`, §17). */
export function answerText(ctx: Koa.Context, result: object, json: Operation['json']): string {
  const recorded = (ctx.state as IdempotencyState).recorded;
  return recorded !== undefined && recorded.result === result ? recorded.text : answerJson(json, result);
}

/** Answers a retry from its record (an `IdempotentReplay` a handler threw); false for any other error. */
export function answeredReplay(ctx: Koa.Context, error: unknown): boolean {
  if (!(error instanceof IdempotentReplay)) return false;
  ctx.status = error.status;
  ctx.set('Content-Type', JSON_TYPE);
  ctx.set('Idempotent-Replayed', 'true');
  ctx.body = error.body;
  return true;
}
