import { ERROR_STATUSES, type ErrorStatus } from '../../runtime/statuses.js';
import { code, page, table } from './markdown.js';

/** docs/reference/errors.md: every error status the server answers, from runtime/statuses.ts (the one list). */
export function errorsPage(): string {
  const rows = (answers: readonly ErrorStatus[]) =>
    [...answers]
      .sort((a, b) => a.status - b.status || (a.reason < b.reason ? -1 : a.reason > b.reason ? 1 : 0) || (a.message < b.message ? -1 : 1))
      .map((answer) => [
        String(answer.status),
        code(answer.reason),
        answer.byNode ? '(empty: answered by Node)' : answer.message,
        answer.when,
        answer.headers ?? '',
      ]);
  const header = ['status', 'reason', 'message', 'when', 'headers'];
  const reasons = [...new Set(ERROR_STATUSES.map((answer) => answer.reason).filter((reason) => reason !== ''))].sort();
  return page('Errors', 'runtime/statuses.ts', [
    'Every failure a client sees is JSON: `{"message": "...", "status": 401}`, its status the HTTP status; a 500, and a 503 of a database fault, ' +
      'add `requestId` (the `X-Request-Id` of the answer: quote it when reporting, the log has the details). ' +
      'The reason is never sent: it is in the access log line (`reason`), the metric `xmlrest_auth_failures_total` (401, 403, 429) and a trace (`xmlrest.reason`). ' +
      '`*` stands for a value put in; `/` separates the messages of one row.',
    '## The API',
    table(header, rows(ERROR_STATUSES.filter((answer) => !answer.console))),
    "## The admin console's API",
    'The console authenticates as the API does (its refusals are those above); besides, it answers:',
    table(header, rows(ERROR_STATUSES.filter((answer) => answer.console))),
    `Reasons, ${reasons.length}: ${reasons.map(code).join(', ')}.`,
  ]);
}
