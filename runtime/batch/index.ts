import type Koa from 'koa';
import type { Guard } from '../auth/guard.js';
import { principalName } from '../auth/scheme.js';
import { credentialsOf } from '../auth/transport/transport.js';
import type { FieldReader } from '../body.js';
import type { BatchFailure } from '../contract.js';
import { answerFor } from '../errors.js';
import { type Claim, callerOf, claimOf, idempotencyKeyOf } from '../idempotency/index.js';
import { answeredReplay } from '../idempotency/request.js';
import { type BatchRoutes, checkOperations, refuseUnrunnable } from './operations.js';
import { type BatchRun, BatchStopped, batchAnswerText, runBatch } from './transaction.js';

export type { BatchRoute, BatchRoutes } from './operations.js';

const JSON_TYPE = 'application/json; charset=utf-8';

export interface BatchDoorOptions extends BatchRun {
  routes: BatchRoutes;
  readFields: FieldReader;
  maxParams: number;
  /** The backend's guard: who sends a batch with an Idempotency-Key, for its record. */
  guard: Guard;
}

/**
 * `POST {base}/<backend>/batch` (docs/internals/contract.md §15): the body checked whole before anything runs
 * (operations.ts), then every operation in one transaction (transaction.ts). 200 with each operation's status and
 * body when all committed; else the failing operation's status with a BatchFailure naming its index.
 */
export function batchDoor(options: BatchDoorOptions): Koa.Middleware {
  return async (ctx) => {
    const key = idempotencyKeyOf(ctx.req.headers['idempotency-key'], false);
    const body = await options.readFields(ctx, options.maxParams).body;
    const operations = checkOperations(body, options.settings.maxOperations, options.routes);
    refuseUnrunnable(operations, key !== undefined);
    const claim = key === undefined ? undefined : await batchClaim(ctx, key, body, options.guard);
    let answers: Awaited<ReturnType<typeof runBatch>>;
    try {
      answers = await runBatch(ctx, operations, options, claim);
    } catch (error) {
      if (answeredReplay(ctx, error)) return;
      if (!(error instanceof BatchStopped)) throw error;
      const known = answerFor(error.cause);
      // Not the client's nor the database's: a 500, logged whole by the front door.
      if (known === undefined) throw error.cause;
      if (known.reason !== undefined) ctx.state.reason = known.reason;
      const failure: BatchFailure = {
        message: `Operation ${error.index} failed: ${known.message}`,
        status: known.status,
        index: error.index,
        error: { message: known.message, status: known.status },
      };
      ctx.status = known.status;
      ctx.set(known.headers);
      ctx.set('Content-Type', JSON_TYPE);
      ctx.body = JSON.stringify(failure);
      return;
    }
    ctx.status = 200;
    ctx.set('Content-Type', JSON_TYPE);
    ctx.body = batchAnswerText(answers);
  };
}

/**
 * The claim of a batch sent with an Idempotency-Key: its record is the caller's whom the batch's credentials name
 * (any role: each operation's own guard still checks its roles), `public` without credentials, so that one caller's
 * key is never replayed to another; credentials the backend refuses are refused here, before anything runs.
 */
async function batchClaim(ctx: Koa.Context, key: string, body: unknown, guard: Guard): Promise<Claim> {
  const { authorization, apiKey } = credentialsOf(ctx);
  let caller = 'public';
  if (authorization !== undefined || apiKey !== undefined) {
    const principal = await guard.identify(authorization, '*', ctx.ip, apiKey);
    caller = callerOf({ userId: principalName(principal), keyId: principal.keyId });
  }
  return claimOf({ backend: guard.backend.name, caller, key, method: ctx.method, route: 'batch', query: ctx.querystring, body });
}
