// The command's edge: its arguments checked, its signals caught, its verdict printed and its exit code; apart from
// the run, which a test or another tool may call without a process around it.
import type mysql from 'mysql2/promise';
import type { Check } from './call.js';
import { messageOfError, RemovalFailed, VerifyUsage } from './errors.js';
import { type Verdict, verifyAccess } from './run.js';

/** Whether a host is this machine: credentials sent to it in plain HTTP never cross a network. */
function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host.endsWith('.localhost') || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/**
 * The command: runs `verifyAccess`, prints each disagreement and what stayed unproven (or `--json`), and says how it
 * ended: 0 every check proven and agreeing; 1 a disagreement; 3 no disagreement, but checks left unproven (0 with
 * `--allow-unproven`, for a backend that cannot be proven); 2 it could not run or finish (a wrong command line, no
 * DATABASE_URL, no access.lock, plain HTTP to another host without `--insecure`, a server that does not answer, goes
 * away or was built from other resources, the login limits); 130/143 stopped by SIGINT/SIGTERM; its users removed
 * however it ends, or said plainly when they could not be.
 */
export async function verifyAccessCommand(
  baseUrl: string,
  options: { json?: boolean; lock?: string; resources?: string; allowUnproven?: boolean; insecure?: boolean },
  databaseUrl: string | undefined,
  connect: (url: string) => Promise<mysql.Connection>,
): Promise<number> {
  const fail = (message: string) => {
    process.stderr.write(`xmlrest: ${message}\n`);
    return 2;
  };
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return fail(`BASE_URL is the server's URL with its BASE_PATH, such as http://127.0.0.1:3000 or https://api.example.com/api, not ${baseUrl}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return fail(`BASE_URL is http or https, not ${url.protocol}`);
  if (url.protocol === 'http:' && !isLoopback(url.hostname) && !options.insecure) {
    return fail(
      `BASE_URL is plain http to ${url.hostname}: verify-access sends passwords, tokens and keys of users holding every role the lock names (admin ones too), which anyone on the way could read; use https, or give --insecure if the network is yours`,
    );
  }
  if (databaseUrl === undefined) {
    return fail("DATABASE_URL is not set: verify-access makes its temporary users in the server's database (environment or .env)");
  }
  const controller = new AbortController();
  let stoppedBy: NodeJS.Signals | undefined;
  const stop = (signal: NodeJS.Signals) => {
    if (stoppedBy !== undefined) return;
    stoppedBy = signal;
    process.stderr.write(`verify-access: ${signal}: removing the temporary users, then stopping\n`);
    controller.abort(new Error(`stopped by ${signal}`));
  };
  const onInt = () => stop('SIGINT');
  const onTerm = () => stop('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  const say = (line: string) => process.stderr.write(`${line}\n`);
  const base = url.toString().replace(/\/+$/, '');
  try {
    const verdict = await verifyAccess({
      baseUrl: base,
      lockFile: options.lock ?? 'access.lock',
      resourcesDir: options.resources ?? 'resources',
      root: process.cwd(),
      connect: () => connect(databaseUrl),
      signal: controller.signal,
      say,
    });
    if (options.json) console.log(JSON.stringify(verdict));
    else printVerdict(verdict);
    if (verdict.disagreements.length > 0) return 1;
    if (verdict.unproven.length > 0 && !options.allowUnproven) {
      say(
        `verify-access: ${verdict.unproven.length} check${verdict.unproven.length === 1 ? '' : 's'} unproven (listed above): exit 3; give --allow-unproven to accept what cannot be proven`,
      );
      return 3;
    }
    return 0;
  } catch (error) {
    if (error instanceof RemovalFailed) return fail(error.message);
    if (stoppedBy !== undefined) return stoppedBy === 'SIGINT' ? 130 : 143;
    if (error instanceof VerifyUsage) return fail(error.message);
    // 1 is kept for a disagreement proven: a run that could not finish proved nothing.
    const unanswered = error instanceof TypeError && error.message === 'fetch failed';
    return fail(
      `verify-access could not finish: ${unanswered ? `the server at ${base} does not answer: ` : ''}${messageOfError(error)}; its temporary users are removed`,
    );
  } finally {
    process.off('SIGINT', onInt);
    process.off('SIGTERM', onTerm);
  }
}

function printVerdict(verdict: Verdict): void {
  const who = (check: Check) => `${check.role}${check.credentials === 'none' ? '' : ` with ${check.credentials}`}`;
  for (const check of verdict.disagreements) {
    if (check.tool !== undefined && check.got !== 'error') {
      // A tool listed or not by tools/list: said as such, with the note of a tool that is no route of the lock.
      const listed = (outcome: string) => (outcome === 'admitted' ? 'listed' : 'not listed');
      const note = check.note ? ` (${check.note})` : '';
      console.log(
        `disagree: ${check.backend} tool ${check.tool} (${check.method} ${check.path}) in tools/list as ${who(check)}: expected ${listed(check.expected)}, got ${listed(check.got)}${note}`,
      );
      continue;
    }
    const got = check.got === 'error' ? `${check.status ?? 'no answer'}${check.note ? `: ${check.note}` : ''}` : `${check.got} (${check.status})`;
    console.log(`disagree: ${check.backend} ${check.method} ${check.path} as ${who(check)}: expected ${check.expected}, got ${got}`);
  }
  for (const check of verdict.unproven) console.log(`unproven: ${check.backend} ${check.method} ${check.path} as ${who(check)}: ${check.note}`);
  const agree = verdict.checks.length - verdict.disagreements.length - verdict.unproven.length;
  console.log(
    `verify-access: ${verdict.base} against ${verdict.lines} lines of access.lock: ${agree} checks agree, ${verdict.disagreements.length} disagree, ${verdict.unproven.length} unproven (${verdict.requests} requests)`,
  );
}
