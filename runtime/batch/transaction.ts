import type Koa from 'koa';
import type { Guard } from '../auth/guard.js';
import { addressGroup } from '../auth/limits/address.js';
import { NOT_MODIFIED } from '../conditional/reads.js';
import { digestTag, noneMatchHolds } from '../conditional/tags.js';
import type { BatchSettings, Queryable } from '../contract.js';
import type { Database } from '../db/index.js';
import { forbidden, HttpError } from '../errors.js';
import type { EventRow, Events } from '../events/index.js';
import { type Claim, IdempotentReplay, idempotently } from '../idempotency/index.js';
import { answerJson } from '../json-text.js';
import { countCall, type RateLimiter } from '../limits/index.js';
import type { RequestState } from '../request-log.js';
import { auditEntry, Scope, type ScopeOptions } from '../scope.js';
import { operationContext } from './context.js';
import type { BatchRoute, CheckedOperation } from './operations.js';
import { resolveReferences } from './reference.js';

/** What a batch's transaction needs of the server. */
export interface BatchRun {
  settings: BatchSettings;
  db: Database;
  events: Events;
  limiter: RateLimiter;
}

/** One operation's answer in a batch that committed: its route's success status and its answer's JSON text. */
export interface OperationAnswer {
  status: number;
  text: string;
}

/** A GET operation whose If-None-Match held its tag: 304, and no body (null in the batch's answer). */
const NOT_MODIFIED_ANSWER: OperationAnswer = { status: 304, text: 'null' };

/**
 * Where a batch stopped: the operation that failed (the one in flight, when the transaction ran out of time) and
 * what it threw. Nothing of the batch committed.
 */
export class BatchStopped extends Error {
  constructor(
    readonly index: number,
    override readonly cause: unknown,
  ) {
    super(`operation ${index} failed`);
  }
}

/**
 * Runs a batch's operations in order in one transaction (docs/internals/contract.md §15), each through its route's
 * handler on a context of its own (context.ts) and joined to the transaction (scope.ts, `joined`): their events are
 * written as it commits, an audited write's row in it. A deadlock runs the whole batch again, every operation with
 * fresh answers. Past `timeoutMs`: the operation in flight is cut off by the transaction's own bound (its
 * `withinMs`, runtime/db/), or the next one is not begun (checked between operations), and all is rolled back.
 *
 * This is the one function a batch's transaction lives in: an Idempotency-Key's claim (first) and its record of
 * the answer (last) go inside `work`, beside the operations.
 */
export async function runBatch(ctx: Koa.Context, operations: readonly CheckedOperation[], run: BatchRun, claim?: Claim): Promise<OperationAnswer[]> {
  const deadline = Date.now() + run.settings.timeoutMs;
  // Every operation presents the batch's credentials: they are checked once, by the first operation that asks.
  const guards = new Map<Guard, Guard>();
  const guardOf = (guard: Guard) => guards.get(guard) ?? guards.set(guard, onceGuard(guard)).get(guard)!;
  let index = 0;
  let events: EventRow[] = [];
  let contexts: Koa.Context[] = [];
  const at = new Date();
  const work = async (db: Queryable): Promise<OperationAnswer[]> => {
    // Each run of the transaction (a deadlock runs it again) begins afresh.
    events = [];
    contexts = [];
    const answers: OperationAnswer[] = [];
    const parsed: unknown[] = [];
    const answerOf = (earlier: number) => (parsed[earlier] ??= JSON.parse(answers[earlier]!.text));
    // Each route's options joined to this run of the transaction, made once for all its operations.
    const joined = { db, events };
    const scopes = new Map<BatchRoute, ScopeOptions>();
    const scopeOf = (route: BatchRoute) => scopes.get(route) ?? scopes.set(route, { ...route.scope, guard: guardOf(route.scope.guard), joined }).get(route)!;
    for (index = 0; index < operations.length; index++) {
      if (Date.now() >= deadline) throw timedOut(run.settings.timeoutMs);
      const operation = operations[index]!;
      const body = operation.body && resolveReferences(operation.body, answerOf, index);
      const sub = operationContext(ctx, operation, body);
      contexts.push(sub);
      const { route } = operation;
      // A public limited route counts each client address, as routes.ts does for a lone call: once an operation.
      if (route.byAddress) await countCall(run.limiter, `${route.byAddress.route}|a|${addressGroup(ctx.ip)}`, route.byAddress.rule, sub);
      let result: object;
      try {
        result = await route.operation.handler(new Scope(sub, scopeOf(route)));
      } catch (error) {
        // A GET whose <Validator> tag its If-None-Match holds: 304, its steps never ran, as alone.
        if (error !== NOT_MODIFIED) throw error;
        answers.push(NOT_MODIFIED_ANSWER);
        continue;
      }
      // Its module's JSON text (docs/internals/contract.md §17), but for a refresh token's answer, a field it does not write.
      const json = sub.state.refreshToken === undefined ? route.operation.json : undefined;
      if (sub.state.refreshToken !== undefined) (result as Record<string, unknown>).refresh_token = sub.state.refreshToken;
      const text = answerJson(json, result);
      // A GET's If-None-Match holding the digest of its answer: 304 with no body, as alone (runtime/conditional/reads.ts).
      const unchanged = operation.method === 'GET' && route.scope.etags !== false && noneMatchHolds(sub.get('If-None-Match'), digestTag(text));
      answers.push(unchanged ? NOT_MODIFIED_ANSWER : { status: route.operation.status, text });
    }
    // The last operation may have ended past the time too: nothing commits late.
    if (Date.now() >= deadline) throw timedOut(run.settings.timeoutMs);
    return answers;
  };
  // A batch sent with an Idempotency-Key (docs/internals/contract.md §15) claims it first and records its answer last,
  // in its one transaction; an answer that carries a token (a token request among its operations) is never recorded.
  const attempt =
    claim === undefined ? work : idempotently(claim, work, (answers) => (contexts.some(carriesToken) ? null : { status: 200, body: batchAnswerText(answers) }));
  const options = { commit: (db: Queryable) => run.events.commit(db, events), withinMs: run.settings.timeoutMs };
  const trace = (ctx.state as RequestState).trace;
  let answers: OperationAnswer[];
  try {
    answers = await (trace === undefined ? run.db.transaction(attempt, options) : trace.transaction(run.db, attempt, options));
  } catch (error) {
    // The claim's own answers (a replay, 409, 422) are the batch's, not an operation's failure.
    if (error instanceof IdempotentReplay || (error instanceof HttpError && error.reason?.startsWith('idempotency_') === true)) throw error;
    // The failing operation's row, as a lone call's refusal gets one; the rows of the ones before it rolled back.
    const audit = operations[index]?.route.scope.audit;
    const sub = contexts[index];
    if (audit !== undefined && sub !== undefined) audit.trail.record(auditEntry(sub, audit, statusOf(error), at));
    throw new BatchStopped(Math.min(index, operations.length - 1), error);
  }
  if (events.length > 0) run.events.emitted();
  // An audited operation that wrote has its row in the transaction; one that read is recorded now it committed.
  operations.forEach((operation, i) => {
    const audit = operation.route.scope.audit;
    const sub = contexts[i]!;
    if (audit !== undefined && sub.state.audited !== true) audit.trail.record(auditEntry(sub, audit, audit.status, at));
  });
  return answers;
}

/** A batch's answer when all committed: each operation's text as its route made it, joined rather than parsed and made again. */
export function batchAnswerText(answers: readonly OperationAnswer[]): string {
  return `{"results":[${answers.map((answer) => `{"status":${answer.status},"body":${answer.text}}`).join(',')}]}`;
}

/** Whether an operation's answer carries a token (a plug-in signed or issued one, a session began). */
function carriesToken(sub: Koa.Context): boolean {
  const state = sub.state as { tokenIssued?: boolean; refreshToken?: string };
  return state.tokenIssued === true || state.refreshToken !== undefined;
}

/**
 * A backend's guard for the operations of one batch: the credentials are authenticated once (any role, as for `'*'`),
 * and each operation's roles are checked against what they proved, as the guard itself checks them
 * (runtime/auth/guard.ts, `who`). A refusal is every later operation's too: the first one ends the batch.
 */
function onceGuard(guard: Guard): Guard {
  let proven: ReturnType<Guard['identify']> | undefined;
  const identify: Guard['identify'] = (header, roles, address, apiKey) => {
    proven ??= guard.identify(header, '*', address, apiKey);
    return proven.then((principal) => {
      if (roles !== '*' && !roles.some((role) => principal.roles.includes(role))) throw forbidden('role_not_held');
      return principal;
    });
  };
  return Object.create(guard, { identify: { value: identify } }) as Guard;
}

/** The status a failure is answered with, for the failing operation's audit row. */
function statusOf(error: unknown): number {
  return error instanceof HttpError ? error.status : 503;
}

/** Past the batch's time, between two operations: rolled back, and the client may try again. */
function timedOut(timeoutMs: number): HttpError {
  return new HttpError(503, `The batch took longer than its ${timeoutMs / 1000} s`, { 'Retry-After': '1' }, 'batch_timeout');
}
