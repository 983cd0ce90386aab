import { basicHeader, formBody, send } from './http.js';

/**
 * The demo's callers as a client signs them in (docs/internals/contract.md §4): a token of shape A on its Bearer
 * backends (shop, desk), Basic credentials on the others; and what `GET /openapi.json?for=me` says those
 * credentials may call on one backend, the list an MCP endpoint's `tools/list` must equal (§16).
 */
export const BEARER_BACKENDS: ReadonlySet<string> = new Set(['shop', 'desk']);

export async function tokenOf(server: string, backend: string, user: string, password: string): Promise<string> {
  const answer = await send(`${server}/${backend}/`, { method: 'POST', ...formBody({ auth: 'bearer', userid: user, password }) });
  if (answer.status !== 200 && answer.status !== 201) throw new Error(`no ${backend} token for ${user}: ${answer.status} ${answer.text}`);
  return (answer.json() as { token: string }).token;
}

/** The headers a client of `backend` sends as `user`. */
export async function credentialsOn(server: string, backend: string, user: string, password: string): Promise<Record<string, string>> {
  if (BEARER_BACKENDS.has(backend)) return { authorization: `Bearer ${await tokenOf(server, backend, user, password)}` };
  return { authorization: basicHeader(user, password) };
}

/**
 * The operationIds of `backend`'s resource operations in the caller's own document, sorted: those named
 * `<backend>_<resource>_v<version>_<method>` at `/<backend>/v<version>/<resource>` (the sessions' doors, `logout`
 * and `token/refresh`, are named otherwise), less the token request of shape B (`POST /<backend>/v<version>/token`):
 * §16 makes no tool of a token request, the batch or a session's door.
 */
export async function operationsFor(server: string, backend: string, headers: Record<string, string>): Promise<string[]> {
  const answer = await send(`${server}/openapi.json?for=me`, { headers });
  if (answer.status !== 200) throw new Error(`?for=me answered ${answer.status}: ${answer.text}`);
  const { paths } = answer.json() as { paths: Record<string, Record<string, { operationId: string }>> };
  const resource = new RegExp(`^/${backend}/v[0-9.]+/[^/]+$`);
  return Object.entries(paths)
    .filter(([path]) => resource.test(path))
    .flatMap(([path, item]) => Object.entries(item).filter(([method]) => !(method === 'post' && path.endsWith('/token'))))
    .map(([, operation]) => operation.operationId)
    .filter((operationId) => /_v[0-9_]+_(get|post|put|patch|delete)$/.test(operationId))
    .sort();
}

/**
 * The REST call a tool stands for: arguments in the query string for GET and DELETE, else the JSON body; the
 * header-named ones (If-Match, Idempotency-Key) as headers, as docs/internals/contract.md §16 dispatches a call.
 */
export async function restCall(
  server: string,
  method: string,
  path: string,
  args: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: unknown; headers: Record<string, string | string[] | undefined> }> {
  const sent: Record<string, string> = { ...headers };
  const fields: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(args)) {
    if (/^[A-Z]/.test(name)) sent[name.toLowerCase()] = String(value);
    else fields[name] = value;
  }
  const inQuery = method === 'GET' || method === 'DELETE';
  const query = new URLSearchParams(Object.entries(fields).map(([name, value]) => [name, String(value)])).toString();
  const answer = await send(`${server}${path}${inQuery && query !== '' ? `?${query}` : ''}`, {
    method,
    headers: inQuery ? sent : { ...sent, 'content-type': 'application/json' },
    ...(inQuery ? {} : { body: JSON.stringify(fields) }),
  });
  return { status: answer.status, body: answer.text === '' ? undefined : answer.json(), headers: answer.headers };
}
