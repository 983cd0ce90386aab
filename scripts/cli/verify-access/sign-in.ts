// The temporary users signed in every way a backend takes (Basic, Bearer tokens of both shapes, API keys): apart
// from the calls they then make.
import type mysql from 'mysql2/promise';
import { KeyStore } from '../../../console/keys.js';
import type { Backend, ExecuteStep } from '../../../generator/ir.js';
import { queryableOf } from '../../schema.js';
import { type Answer, type Caller, type Check, loginLimited, messageOf, type Send, writingSteps } from './call.js';
import type { TemporaryUser } from './users.js';

/**
 * The callers of a backend of the default tables: each temporary user, with every credential the backend takes
 * (Basic; Bearer tokens of both shapes; an API key). Every sign-in is one that must succeed: none counts against the
 * server's login limits.
 */
export async function signIn(
  backend: Backend,
  users: readonly TemporaryUser[],
  base: string,
  send: Send,
  record: (check: Check) => void,
  connection: mysql.Connection,
  until: number,
): Promise<Caller[]> {
  const callers: Caller[] = [];
  if (users.length === 0) return callers;
  const signInCheck = (user: TemporaryUser, how: string, pathname: string, answer: Answer): Check => {
    const limited = loginLimited(answer, `signing in as ${user.role} with ${how}`);
    if (limited) throw limited;
    return {
      backend: backend.name,
      method: 'POST',
      path: pathname,
      role: user.role,
      credentials: how,
      expected: 'admitted',
      got: answer.status >= 200 && answer.status < 300 ? 'admitted' : answer.status === 401 || answer.status === 403 ? 'refused' : 'error',
      status: answer.status,
      note: answer.status >= 200 && answer.status < 300 ? 'signs in' : messageOf(answer),
    };
  };
  if (backend.authScheme === 'Basic') {
    for (const user of users) callers.push({ role: user.role, credentials: 'Basic', headers: { authorization: basicHeader(user) } });
  } else {
    const shapeB = tokenRequest(backend);
    if (shapeB !== undefined && 'unproven' in shapeB) {
      record({
        backend: backend.name,
        method: 'POST',
        path: shapeB.path,
        role: '(every temporary user)',
        credentials: 'Bearer (shape B)',
        expected: 'admitted',
        got: 'unproven',
        status: null,
        note: shapeB.unproven,
      });
    }
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    for (const user of users) {
      const a = await send(
        'POST',
        `${base}/${backend.name}/`,
        form,
        new URLSearchParams({ auth: 'bearer', userid: user.name, password: user.password }).toString(),
      );
      record(signInCheck(user, 'Bearer (shape A)', `/${backend.name}/`, a));
      const tokenA = a.status === 200 ? tokenOf(a) : undefined;
      if (tokenA !== undefined) callers.push({ role: user.role, credentials: 'Bearer (shape A)', headers: { authorization: `Bearer ${tokenA}` } });
      if (shapeB === undefined || 'unproven' in shapeB) continue;
      const b = await send('POST', base + shapeB.path, form, new URLSearchParams({ [shapeB.user]: user.name, [shapeB.password]: user.password }).toString());
      record(signInCheck(user, 'Bearer (shape B)', shapeB.path, b));
      const tokenB = b.status >= 200 && b.status < 300 ? tokenOf(b) : undefined;
      if (tokenB !== undefined) callers.push({ role: user.role, credentials: 'Bearer (shape B)', headers: { authorization: `Bearer ${tokenB}` } });
    }
  }
  if (backend.apiKeys) {
    const keys = new KeyStore(queryableOf(connection));
    for (const user of users) {
      const made = await keys.create({
        backend: backend.name,
        userId: String(user.id),
        name: 'verify-access',
        roles: [user.role],
        expires: new Date(until * 1000),
        rate: null,
      });
      callers.push({ role: user.role, credentials: 'API key', headers: { 'x-api-key': made.key } });
    }
  }
  return callers;
}

function basicHeader(user: TemporaryUser): string {
  return `Basic ${Buffer.from(`${user.name}:${user.password}`, 'utf8').toString('base64')}`;
}

/** The token in a token request's answer: shape A's `token`, or shape B's under its step's id (a JWT's shape tells it). */
function tokenOf(answer: Answer): string | undefined {
  try {
    const body = JSON.parse(answer.text) as Record<string, unknown>;
    return Object.values(body).find((value): value is string => typeof value === 'string' && /^[\w-]+\.[\w-]+\.[\w-]*$/.test(value));
  } catch {
    return undefined;
  }
}

/**
 * A backend's token request of shape B (a public POST whose plug-in is the token generator): its path and the
 * fields that carry the user name and the password, from the generator's `user` and `password` arguments (or the
 * seed's form, whose query compares them itself: the parameter named like a password, and the other one). A token
 * request with a step that writes besides the generator (a login log, `last_login = now()`) is never called: every
 * sign-in there would change application data.
 */
function tokenRequest(backend: Backend): { path: string; user: string; password: string } | { path: string; unproven: string } | undefined {
  for (const resource of backend.resources) {
    for (const operation of resource.operations) {
      const login = operation.steps.find((step): step is ExecuteStep => step.kind === 'execute' && step.plugin.login === true);
      if (!login || operation.access !== null || operation.method !== 'POST') continue;
      const pathname = `/${backend.name}/v${resource.version}/${resource.name}`;
      const writes = writingSteps(operation);
      if (writes.length > 0 || (operation.emits?.length ?? 0) > 0) {
        const what = writes.length > 0 ? `step${writes.length === 1 ? '' : 's'} ${writes.map((id) => `"${id}"`).join(', ')}` : 'an event it emits';
        return {
          path: pathname,
          unproven: `it writes besides issuing the token (${what}): signing in there would change application data, so it was not called`,
        };
      }
      const param = (name: string) => {
        const bind = login.args.find((arg) => arg.name === name)?.bind;
        return bind?.kind === 'param' ? bind.name : undefined;
      };
      const password = param('password') ?? operation.params.find((name) => /pass/i.test(name));
      const user = param('user') ?? operation.params.filter((name) => name !== password);
      const userField = typeof user === 'string' ? user : user.length === 1 ? user[0] : undefined;
      if (password === undefined || userField === undefined || operation.params.length !== 2) {
        return { path: pathname, unproven: 'cannot tell which of its fields carry the user name and the password' };
      }
      return { path: pathname, user: userField, password };
    }
  }
  return undefined;
}
