import { listAudit, statusFilter, timeFilter } from '../runtime/audit/index.js';
import { HttpError } from '../runtime/errors.js';
import { listOutbox, type OutboxRow, retryFailed, stoppedWebhooks } from '../runtime/events/index.js';
import { type Console, type ConsoleContext, type ConsoleRouter, cursor, manageable, PAGE_SIZE } from './context.js';

/**
 * The console's Events and Audit pages (docs/internals/contract.md §12): the backend's
 * outbox (pending, held by a stopped webhook, delivered, failed) with its
 * stopped webhooks, failed events sent again (one, or every one: a retry also
 * resumes a webhook a 410 stopped), each retry in the history; and the calls
 * of its audited routes, filtered by user, resource, time and status.
 */
const STATES: readonly OutboxRow['state'][] = ['pending', 'delivered', 'failed'];

export function eventsApi(router: ConsoleRouter, console: Console): void {
  const { options, store } = console;

  router.get('/b/:backend/events', async (ctx) => {
    const backend = ctx.state.backend.name;
    const state = STATES.find((candidate) => candidate === ctx.query.state);
    const page = await listOutbox(options.database, { backend, state, before: cursor(ctx.query.before), limit: PAGE_SIZE });
    ctx.body = { events: page.rows, next: page.next, stopped: await stoppedWebhooks(options.database, backend) };
  });

  router.post('/b/:backend/events/:id/retry', async (ctx) => {
    const id = cursor(ctx.params.id);
    if (id === 0) throw new HttpError(400, 'Not an event id');
    const retried = await retryFailed(options.database, { ids: [id], backend: ctx.state.backend.name });
    if (retried === 0) throw new HttpError(409, `Event ${id} is not a failed event of ${ctx.state.backend.name}`);
    await console.record(ctx, 'retry event', `event ${id}`);
    ctx.body = { retried };
  });

  router.post('/b/:backend/events/retry-failed', async (ctx) => {
    const retried = await retryFailed(options.database, { backend: ctx.state.backend.name });
    await console.record(ctx, 'retry failed events', `${retried} event${retried === 1 ? '' : 's'}`);
    ctx.body = { retried };
  });

  router.get('/b/:backend/audit', async (ctx) => {
    const backend = ctx.state.backend;
    const text = (name: string) => (typeof ctx.query[name] === 'string' && ctx.query[name] !== '' ? (ctx.query[name] as string) : undefined);
    const user = text('user');
    // A user name of the default user tables, or else a user id as it is: a number, or an outside issuer's text.
    const named = user !== undefined && !/^[0-9]+$/.test(user) && manageable(backend) ? await store.idOf(user) : undefined;
    const status = text('status');
    const statuses = status === undefined ? {} : statusFilter(status);
    if (statuses === undefined) throw new HttpError(400, 'status is a status (404) or a class (4xx)');
    const page = await listAudit(options.database, {
      backend: backend.name,
      userId: named === undefined ? user : String(named),
      resource: text('resource'),
      from: time(ctx, 'from'),
      to: time(ctx, 'to'),
      ...statuses,
      before: cursor(ctx.query.before),
      limit: PAGE_SIZE,
    });
    // Names beside ids, for the users of the default tables.
    const names = new Map<string, string>();
    if (manageable(backend)) {
      for (const id of new Set(page.rows.map((row) => row.user_id))) {
        if (id === null || !/^[0-9]{1,10}$/.test(id)) continue;
        const found = await store.user(Number(id));
        if (found) names.set(id, found.user_name);
      }
    }
    ctx.body = { entries: page.rows.map((row) => ({ ...row, user_name: row.user_id === null ? null : (names.get(row.user_id) ?? null) })), next: page.next };
  });
}

/** A time of the query (an ISO time, as a datetime-local input sends it, read as UTC), or 400. */
function time(ctx: ConsoleContext, name: string): Date | undefined {
  const value = ctx.query[name];
  if (typeof value !== 'string' || value === '') return undefined;
  const parsed = /^[0-9]{4}-/.test(value) ? timeFilter(value) : undefined;
  if (parsed === undefined) throw new HttpError(400, `${name} is an ISO time, such as 2026-11-26T10:00`);
  return parsed;
}
