// One call of a route as one caller, and what its answer proves: apart from the run, which decides who calls what.
import { PAGE_PARAMS } from '../../../generator/analyse/list.js';
import type { Backend, Operation } from '../../../generator/ir.js';
import { FORBIDDEN_MESSAGE } from '../../../runtime/errors.js';
import { CouldNotFinish } from './errors.js';
import type { LockLine } from './lock.js';

export const REQUEST_TIMEOUT_MS = 15_000;

export interface Check {
  backend: string;
  method: string;
  path: string;
  /** The caller: a role, or `(anonymous)`. */
  role: string;
  /** How the caller's credentials travelled: `none`, `Basic`, `Bearer (shape A)`, `Bearer (shape B)`, `API key`. */
  credentials: string;
  expected: 'admitted' | 'refused';
  got: 'admitted' | 'refused' | 'unproven' | 'error';
  status: number | null;
  /** Why it is unproven, or what the answer said. */
  note?: string;
  /**
   * The MCP tool a check of tools/list is about (docs/internals/contract.md §16): `admitted` there is listed, `refused`
   * not listed; `tools/list` when the call itself failed.
   */
  tool?: string;
}

export interface Caller {
  role: string;
  credentials: string;
  /** Request headers that carry the credentials. */
  headers: Record<string, string>;
}

/** The operation a lock line stands for, from the resources (its parameters and steps). */
export function operationOf(backend: Backend, line: LockLine): Operation | undefined {
  const resource = backend.resources.find((candidate) => `/${backend.name}/v${candidate.version}/${candidate.name}` === line.path);
  return resource?.operations.find((operation) => operation.method === line.method);
}

/**
 * The parameters a call must send, which a call without them is refused for (400) once the guard has admitted it. A
 * list's filters, sort and page (docs/internals/contract.md §11) are optional: a call without them runs the list, so a route
 * with nothing else is a read called as it is (2xx), and a write with nothing else is never sent.
 */
function requiredParams(operation: Operation): string[] {
  const optional = new Set<string>();
  for (const step of operation.steps) {
    const list = step.kind === 'sql' ? step.list : undefined;
    if (list === undefined) continue;
    for (const filter of list.filters) optional.add(filter.param);
    if (list.sort) optional.add(list.sort.param);
    if (list.page) for (const name of PAGE_PARAMS) optional.add(name);
  }
  return operation.params.filter((name) => !optional.has(name) && operation.paramTypes[name]?.optional !== true);
}

/** The steps of an operation that may change data: a write step, or a plug-in other than the token generator. */
export function writingSteps(operation: Operation): string[] {
  return operation.steps.filter((step) => (step.kind === 'sql' ? step.statement === 'write' : !step.plugin.login)).map((step) => step.id);
}

export function unproven(line: LockLine, role: string, credentials: string, expected: Check['expected'], note: string): Check {
  return { backend: line.backend, method: line.method, path: line.path, role, credentials, expected, got: 'unproven', status: null, note };
}

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
}
export type Send = (method: string, url: string, headers: Record<string, string>, body?: string) => Promise<Answer>;

/** A 429 of the login limits (a rate limit's carries RateLimit-Limit): the run cannot go on, and says why. */
export function loginLimited(answer: Answer, what: string): CouldNotFinish | undefined {
  if (answer.status !== 429 || answer.headers.has('ratelimit-limit')) return undefined;
  return new CouldNotFinish(
    `${what}: the server's login limits refused it (429: too many failed sign-ins from this address, by others before this run): run it again when they have passed (Retry-After: ${answer.headers.get('retry-after') ?? 'not said'} s)`,
  );
}

/**
 * One call of a route as one caller, and what it proves. Without its parameters, a route the guard admits answers
 * 400 (the parameters are checked after the role); a read without parameters answers as it is (2xx). A caller
 * without credentials is refused with 401 or 403; a caller whose credentials the server accepts (a temporary user's,
 * a token or key it just issued) only with the guard's 403: a 401 to it is an error (its credentials were not
 * taken), never a refusal by the role. A 429 of a rate limit (it carries RateLimit-Limit) comes after the guard
 * admitted the caller; one of the login limits stops the run.
 */
export async function check(
  line: LockLine,
  operation: Operation | undefined,
  caller: Caller,
  expected: Check['expected'],
  base: string,
  send: Send,
): Promise<Check> {
  const done = (got: Check['got'], status: number | null, note?: string): Check => ({
    backend: line.backend,
    method: line.method,
    path: line.path,
    role: caller.role,
    credentials: caller.credentials,
    expected,
    got,
    status,
    ...(note === undefined ? {} : { note }),
  });
  if (operation === undefined) return done('unproven', null, `${line.method} ${line.path} is in access.lock but not in the resources: not sent`);
  const required = requiredParams(operation);
  if (required.length === 0 && writingSteps(operation).length > 0) {
    return done('unproven', null, 'a write with no required parameter to leave out: the guard cannot be proven without running it, so it was not sent');
  }
  let response: Answer;
  try {
    response = await send(line.method, base + line.path, caller.headers);
  } catch (error) {
    if ((error as Error).name === 'TimeoutError') return done('error', null, `no answer within ${REQUEST_TIMEOUT_MS / 1000} s`);
    throw error;
  }
  const status = response.status;
  const limited = loginLimited(response, `${line.method} ${line.path} as ${caller.role} with ${caller.credentials}`);
  if (limited) throw limited;
  // A 403 that is not the guard's (credentials over plain HTTP where TLS is required) proves nothing of the role.
  if (status === 403 && !response.text.includes(FORBIDDEN_MESSAGE)) return done('error', status, messageOf(response));
  if (status === 403) return done('refused', status);
  if (status === 401) {
    if (caller.credentials === 'none') return done('refused', status);
    return done('error', status, `${messageOf(response)}: the server did not take credentials it accepts (a refusal by the role is a 403)`);
  }
  // A public route has no guard: whatever else it answers (a 500 of its own), it admitted the caller.
  if (line.rule === 'public' && status >= 500) return done('admitted', status, `answered ${status}, past routing: a public route has no guard`);
  if (status === 429) return done('admitted', status, "over the route's rate limit, after the guard admitted");
  const answered = required.length > 0 ? status === 400 : status >= 200 && status < 300;
  if (answered) return done('admitted', status);
  const wanted = required.length > 0 ? 'a 400 for the parameters left out' : 'a 2xx answer';
  return done('error', status, `${messageOf(response)} (once admitted, ${wanted} was to come)`);
}

/** What an answer's JSON body says, for a report. */
export function messageOf(answer: Answer): string {
  try {
    const body = JSON.parse(answer.text) as { message?: unknown };
    if (typeof body.message === 'string') return body.message;
  } catch {
    // Not JSON: its status says it.
  }
  return `status ${answer.status}`;
}
