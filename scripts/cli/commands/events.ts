import type { Command } from 'commander';
import type mysql from 'mysql2/promise';
import { type AuditRow, listAudit, statusFilter, timeFilter } from '../../../runtime/audit/index.js';
import { listOutbox, type OutboxRow, retryFailed, stoppedWebhooks } from '../../../runtime/events/index.js';
import type { Queryable } from '../../../runtime/index.js';
import { queryableOf, userIdOf } from '../../schema.js';
import type { CommandKit } from '../command.js';

const STATES = ['pending', 'delivered', 'failed'] as const;

/**
 * `xmlrest events list|retry` and `xmlrest audit list` (docs/internals/contract.md §12): what the outbox holds, failed
 * events sent again (a retry also resumes a webhook a 410 stopped), and who called audited routes.
 */
export function registerEventCommands(xmlrest: Command, kit: CommandKit): void {
  const events = kit.command(xmlrest, 'events', 'the outbox of events and their deliveries to webhooks');
  kit
    .command(events, 'list', 'list events, newest first: pending (and held by a stopped webhook), delivered, failed')
    .option('--failed', 'only failed events (not delivered within the retry window, or answered 410)')
    .option('--state <state>', `only events in this state: ${STATES.join(', ')}`)
    .option('--backend <backend>', 'only this backend’s')
    .option('--limit <n>', 'at most this many (default 50, at most 1000)', '50')
    .option('--before <id>', 'only ids below this one (the next page)')
    .option('--json', 'print a JSON array, the bodies sent included')
    .action(async (options: { failed?: boolean; state?: string; backend?: string; limit: string; before?: string; json?: boolean }) => {
      if (options.failed && options.state !== undefined && options.state !== 'failed') throw kit.usage('give --failed or --state, not both');
      const state = options.failed ? 'failed' : options.state;
      if (state !== undefined && !(STATES as readonly string[]).includes(state)) throw kit.usage(`--state is ${STATES.join(', ')}, not ${state}`);
      const limit = wholeOption(kit, '--limit', options.limit, 1, 1000);
      const before = options.before === undefined ? 0 : wholeOption(kit, '--before', options.before, 1, Number.MAX_SAFE_INTEGER);
      const { page, stopped } = await kit.withConnection(async (connection) => {
        const db = queryableOf(connection);
        const filter = { backend: options.backend, state: state as OutboxRow['state'] | undefined, before, limit, payload: options.json === true };
        return { page: await listOutbox(db, filter), stopped: await stoppedWebhooks(db, options.backend) };
      });
      if (options.json) console.log(JSON.stringify(page.rows));
      else {
        for (const stop of stopped)
          console.log(
            `stopped: ${stop.url} (backend ${stop.backend}) answered 410 Gone at ${when(stop.stopped)}; xmlrest events retry ${stop.outbox_id} resumes it`,
          );
        console.log('id  state  event  event id  webhook  attempts  last answer  created  next attempt');
        for (const row of page.rows) {
          console.log(
            [
              row.id,
              row.held ? 'pending (held: webhook stopped)' : row.state,
              row.event,
              row.msg_id,
              row.url,
              row.attempts,
              row.last_error ?? row.last_status ?? '-',
              when(row.created),
              row.state === 'pending' ? when(row.due) : '-',
            ].join('  '),
          );
        }
        if (page.next !== null) console.log(`more: xmlrest events list --before ${page.next}`);
      }
      kit.done(0);
    });
  kit
    .command(events, 'retry', 'send failed events again, with a new retry window; a webhook a 410 stopped resumes')
    .argument('[id]', 'the event’s id (xmlrest events list shows it)')
    .option('--all-failed', 'every failed event')
    .option('--backend <backend>', 'only this backend’s')
    .action(async (id: string | undefined, options: { allFailed?: boolean; backend?: string }) => {
      if ((id === undefined) === (options.allFailed === undefined)) throw kit.usage('events retry takes an event id or --all-failed, one of them');
      const ids = id === undefined ? undefined : [wholeOption(kit, 'the event id', id, 1, Number.MAX_SAFE_INTEGER)];
      const retried = await kit.withConnection((connection) => retryFailed(transactions(connection), { ids, backend: options.backend }));
      if (id !== undefined && retried === 0)
        throw kit.usage(`event ${id} is not a failed event${options.backend ? ` of ${options.backend}` : ''} (xmlrest events list --failed)`);
      console.log(`${retried} event${retried === 1 ? '' : 's'} due again: every server delivers them at its next poll`);
      kit.done(0);
    });

  const audit = kit.command(xmlrest, 'audit', 'who called routes with audit="true"');
  kit
    .command(audit, 'list', 'list audited calls, newest first')
    .option('--backend <backend>', 'only this backend’s')
    .option('--user <user>', 'only this user’s: a name of the default user tables, else a user id as it is (a number, or an outside issuer’s text)')
    .option('--resource <name>', 'only calls of this resource')
    .option('--since <when>', 'calls at or after: an ISO time, or a time ago (30m, 12h, 7d)')
    .option('--until <when>', 'calls before: an ISO time, or a time ago')
    .option('--status <status>', 'a status (404) or a class (4xx)')
    .option('--limit <n>', 'at most this many (default 50, at most 1000)', '50')
    .option('--before <id>', 'only ids below this one (the next page)')
    .option('--json', 'print a JSON array')
    .action(async (options: AuditOptions) => {
      const filter = auditFilter(kit, options);
      const page = await kit.withConnection(async (connection) => {
        // A name of the default user tables (when they are there), or else the text as a user id.
        const named = options.user === undefined || /^[0-9]+$/.test(options.user) ? undefined : await userIdOf(connection, options.user).catch(() => undefined);
        return listAudit(queryableOf(connection), { ...filter, userId: named === undefined ? options.user : String(named) });
      });
      if (options.json) console.log(JSON.stringify(page.rows));
      else {
        console.log('at  backend  call  user  key  status  request id  from  parameters');
        for (const row of page.rows) console.log(auditLine(row));
        if (page.next !== null) console.log(`more: xmlrest audit list --before ${page.next}`);
      }
      kit.done(0);
    });
}

interface AuditOptions {
  backend?: string;
  user?: string;
  resource?: string;
  since?: string;
  until?: string;
  status?: string;
  limit: string;
  before?: string;
  json?: boolean;
}

function auditFilter(kit: CommandKit, options: AuditOptions) {
  const statuses = options.status === undefined ? {} : statusFilter(options.status);
  if (statuses === undefined) throw kit.usage(`--status is a status (404) or a class (4xx), not ${options.status}`);
  return {
    backend: options.backend,
    resource: options.resource,
    from: options.since === undefined ? undefined : timeOption(kit, '--since', options.since),
    to: options.until === undefined ? undefined : timeOption(kit, '--until', options.until),
    ...statuses,
    limit: wholeOption(kit, '--limit', options.limit, 1, 1000),
    before: options.before === undefined ? 0 : wholeOption(kit, '--before', options.before, 1, Number.MAX_SAFE_INTEGER),
  };
}

function auditLine(row: AuditRow): string {
  return [
    when(row.at, true),
    row.backend,
    `${row.method} ${row.resource} v${row.version}`,
    row.user_id ?? '-',
    row.key_prefix === null ? '-' : `${row.key_prefix}...`,
    row.repeats > 1 ? `${row.status} x${row.repeats}` : row.status,
    row.request_id,
    row.address,
    row.params ?? '-',
  ].join('  ');
}

/** An ISO time (UTC when it names no zone), or a time ago: 30m, 12h, 7d. */
function timeOption(kit: Pick<CommandKit, 'usage'>, name: string, value: string): Date {
  const time = timeFilter(value);
  if (time === undefined) throw kit.usage(`${name} is an ISO time (2026-11-26T10:00Z) or a time ago (30m, 12h, 7d), not ${value}`);
  return time;
}

function wholeOption(kit: Pick<CommandKit, 'usage'>, name: string, value: string, min: number, max: number): number {
  const number = Number(value);
  if (!/^[0-9]{1,16}$/.test(value) || number < min || number > max) throw kit.usage(`${name} is a whole number from ${min}, not ${value}`);
  return number;
}

function when(value: Date | string, seconds = false): string {
  return new Date(value)
    .toISOString()
    .slice(0, seconds ? 23 : 16)
    .replace('T', ' ');
}

/** A connection's transactions, as the outbox's statements take them. */
function transactions(connection: mysql.Connection): { transaction<T>(work: (db: Queryable) => Promise<T>): Promise<T> } {
  return {
    transaction: async (work) => {
      await connection.beginTransaction();
      try {
        const result = await work(queryableOf(connection));
        await connection.commit();
        return result;
      } catch (error) {
        await connection.rollback();
        throw error;
      }
    },
  };
}
