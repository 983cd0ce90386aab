import type Koa from 'koa';
import type { FieldReader } from '../body.js';
import type { BatchFailure } from '../contract.js';
import { faultOf } from '../db/index.js';
import { HttpError, httpErrorFromDatabase } from '../errors.js';
import { type BatchRoutes, checkOperations } from './operations.js';
import { type BatchRun, BatchStopped, runBatch } from './transaction.js';

export type { BatchRoute, BatchRoutes } from './operations.js';

const JSON_TYPE = 'application/json; charset=utf-8';

/** Seconds a client waits before trying again after a database fault (errors.ts says the same). */
const RETRY_AFTER = '1';

export interface BatchDoorOptions extends BatchRun {
  routes: BatchRoutes;
  readFields: FieldReader;
  maxParams: number;
}

/**
 * `POST {base}/<backend>/batch` (docs/internals/contract.md §15): the body checked whole before anything runs
 * (operations.ts), then every operation in one transaction (transaction.ts). 200 with each operation's status and
 * body when all committed; else the failing operation's status with a BatchFailure naming its index.
 */
export function batchDoor(options: BatchDoorOptions): Koa.Middleware {
  return async (ctx) => {
    const { body } = options.readFields(ctx, options.maxParams);
    const operations = checkOperations(await body, options.settings.maxOperations, options.routes);
    let answers: Awaited<ReturnType<typeof runBatch>>;
    try {
      answers = await runBatch(ctx, operations, options);
    } catch (error) {
      if (!(error instanceof BatchStopped)) throw error;
      const known = answerOf(error.cause);
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
    // Each answer's text as its route made it: the list is joined, not parsed and made again.
    ctx.body = `{"results":[${answers.map((answer) => `{"status":${answer.status},"body":${answer.text}}`).join(',')}]}`;
  };
}

/** A failed operation's answer, as errors.ts would give it alone; undefined for a fault of the server's own. */
function answerOf(error: unknown): { status: number; message: string; headers: Record<string, string>; reason?: string | undefined } | undefined {
  if (error instanceof HttpError) return { status: error.status, message: error.message, headers: error.headers, reason: error.reason };
  const fault = faultOf(error);
  if (fault) return { status: 503, message: 'Service unavailable', headers: { 'Retry-After': RETRY_AFTER }, reason: fault.reason };
  const mapped = httpErrorFromDatabase(error);
  return mapped && { status: mapped.status, message: mapped.message, headers: mapped.headers };
}
