import { LOG_LINES } from '../../runtime/log-lines.js';
import { ERROR_STATUSES } from '../../runtime/statuses.js';
import { byText, code, page, table } from './markdown.js';

/** docs/reference/logs.md: every message the server logs, from runtime/log-lines.ts, and the `request` line's reasons, from runtime/statuses.ts. */
export function logsPage(): string {
  const rows = [...LOG_LINES].sort(byText((line) => `${line.msg} ${line.level}`)).map((line) => [code(line.msg), line.level, line.when]);
  const reasons = new Map<string, Set<number>>();
  for (const answer of ERROR_STATUSES) if (answer.reason !== '') reasons.set(answer.reason, (reasons.get(answer.reason) ?? new Set()).add(answer.status));
  const reasonRows = [...reasons]
    .sort(byText(([reason]) => reason))
    .map(([reason, statuses]) => [code(reason), [...statuses].sort().join(', '), ERROR_STATUSES.find((answer) => answer.reason === reason)!.when]);
  return page('Logs', 'runtime/log-lines.ts and runtime/statuses.ts', [
    'The server writes JSON lines on stdout (pino): `level` (info, warn, error), `time`, `pid`, `msg` and the fields of each message. ' +
      'LOG_LEVEL chooses the least level written. No password, token, key or secret is ever written. `*` stands for a value put in.',
    '## Messages',
    table(['msg', 'level', 'when, and its fields'], rows),
    '## Reasons of the `request` line',
    'A refused request (401, 403, 429, and 413 or 503 with a reason) and a database fault carry `reason`: the same codes as `xmlrest_auth_failures_total` and errors.md.',
    table(['reason', 'status', 'when'], reasonRows),
  ]);
}
