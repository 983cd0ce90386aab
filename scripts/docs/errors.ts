import { ERROR_STATUSES } from '../../runtime/statuses.js';
import { code, page, table } from './markdown.js';

/** docs/reference/errors.md: every error status the server answers, from runtime/statuses.ts (the one list). */
export function errorsPage(): string {
  const rows = [...ERROR_STATUSES]
    .sort((a, b) => a.status - b.status || (a.reason < b.reason ? -1 : a.reason > b.reason ? 1 : 0) || (a.message < b.message ? -1 : 1))
    .map((answer) => [
      String(answer.status),
      code(answer.reason),
      answer.byNode ? '(empty: answered by Node)' : answer.message,
      answer.when,
      answer.headers ?? '',
    ]);
  const reasons = [...new Set(ERROR_STATUSES.map((answer) => answer.reason).filter((reason) => reason !== ''))].sort();
  return page('Errors', 'runtime/statuses.ts', [
    'Every failure a client sees is JSON: `{"message": "...", "status": 401}`, its status the HTTP status; a 500, and a 503 of a database fault, ' +
      'add `requestId` (the `X-Request-Id` of the answer: quote it when reporting, the log has the details). ' +
      'The reason is never sent: it is in the access log line (`reason`), the metric `xmlrest_auth_failures_total` (401, 403, 429) and a trace (`xmlrest.reason`). ' +
      '`*` stands for a value put in; `/` separates the messages of one row.',
    table(['status', 'reason', 'message', 'when', 'headers'], rows),
    `Reasons, ${reasons.length}: ${reasons.map(code).join(', ')}.`,
  ]);
}
