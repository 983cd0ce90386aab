/**
 * The console's calls to its server. Credentials live in this module's
 * memory only (never localStorage or a cookie) and go out as the
 * Authorization header, which no other site can make a browser send.
 */
import type { ErrorBody } from '../../runtime/contract.js';

export const base = location.pathname.replace(/\/_console\/?.*$/, '');

let authorization = '';
let backend = '';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export interface Backend {
  name: string;
  authScheme: 'Basic' | 'Bearer';
  consoleRole: string;
}

export async function listBackends(): Promise<Backend[]> {
  return (await call<{ backends: Backend[] }>('GET', `${base}/_console/api/backends`)).backends;
}

/** Signs in with the backend's own scheme: Basic credentials as they are, Bearer through a token request (shape A). */
export async function signIn(target: Backend, user: string, password: string): Promise<{ manageable: boolean; apiKeys: boolean }> {
  if (target.authScheme === 'Bearer') {
    // The console's own door to the token request: the API's may be on another port (CONSOLE=admin).
    const response = await fetch(`${base}/_console/api/token/${encodeURIComponent(target.name)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ auth: 'bearer', userid: user, password }),
    });
    if (response.status === 401) throw new ApiError(401, 'Wrong user name or password.');
    if (!response.ok) throw new ApiError(response.status, 'The token request failed.');
    authorization = `Bearer ${((await response.json()) as { token: string }).token}`;
  } else {
    const bytes = new TextEncoder().encode(`${user}:${password}`);
    authorization = `Basic ${btoa(String.fromCharCode(...bytes))}`;
  }
  backend = target.name;
  try {
    return await api<{ manageable: boolean; apiKeys: boolean }>('GET', 'me');
  } catch (error) {
    signOut();
    if (error instanceof ApiError && error.status === 403) {
      throw new ApiError(403, `${user} does not hold the console role "${target.consoleRole}" on ${target.name}.`);
    }
    if (error instanceof ApiError && error.status === 401) throw new ApiError(401, 'Wrong user name or password.');
    throw error;
  }
}

export function signOut(): void {
  authorization = '';
  backend = '';
}

/** A call to the signed-in backend's console API. */
export function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  return call<T>(method, `${base}/_console/api/b/${encodeURIComponent(backend)}/${path}`, body);
}

async function call<T>(method: string, url: string, body?: unknown): Promise<T> {
  // The header tells the server this call comes from the console page, which no cross-site form can claim.
  const headers: Record<string, string> = { 'x-xmlrest-console': '1' };
  if (authorization) headers.authorization = authorization;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const data = (await response.json().catch(() => ({}))) as Partial<ErrorBody>;
  if (!response.ok) throw new ApiError(response.status, data.message ?? `${response.status} ${response.statusText}`);
  return data as T;
}
