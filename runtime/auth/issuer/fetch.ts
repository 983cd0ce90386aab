/**
 * One bounded GET of a JSON document from an identity provider (its
 * discovery document, its key set), as docs/internals/contract.md §9 bounds it: 5 s for
 * the whole answer, 256 KB at most, no redirect followed (a redirect could
 * lead the server anywhere the provider's host is told to send it), and how
 * long the answer may be kept, from its Cache-Control.
 */

export const FETCH_TIMEOUT_MS = 5000;
export const MAX_DOCUMENT_BYTES = 256 * 1024;

/** Why a fetch failed, in words for the log and /readyz; `outcome` is the metric's label. */
export class FetchFailed extends Error {
  constructor(
    readonly outcome: 'unreachable' | 'timeout' | 'status' | 'redirect' | 'too_large' | 'malformed',
    message: string,
  ) {
    super(message);
    this.name = 'FetchFailed';
  }
}

export interface FetchedDocument {
  json: unknown;
  /** Seconds the answer says it may be kept (Cache-Control max-age), or undefined when it says nothing. */
  maxAge: number | undefined;
}

export async function fetchDocument(url: string, timeoutMs = FETCH_TIMEOUT_MS): Promise<FetchedDocument> {
  const signal = AbortSignal.timeout(timeoutMs);
  let response: Response;
  try {
    response = await fetch(url, { redirect: 'manual', signal, headers: { accept: 'application/json' } });
  } catch (error) {
    throw failure(error, url);
  }
  try {
    if (response.status >= 300 && response.status < 400)
      throw new FetchFailed('redirect', `${url} answered a redirect (${response.status}), which is never followed`);
    if (response.status !== 200) throw new FetchFailed('status', `${url} answered ${response.status}`);
    const length = Number(response.headers.get('content-length') ?? 0);
    if (length > MAX_DOCUMENT_BYTES) throw new FetchFailed('too_large', `${url} answered more than ${MAX_DOCUMENT_BYTES} bytes`);
    const text = await readBounded(response, url);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new FetchFailed('malformed', `${url} answered something that is not JSON`);
    }
    return { json, maxAge: maxAgeOf(response.headers.get('cache-control')) };
  } catch (error) {
    // Whatever was not read is dropped, so that the connection is not held open by an unread body.
    await response.body?.cancel().catch(() => undefined);
    throw error instanceof FetchFailed ? error : failure(error, url);
  }
}

/** The body as text, refused as soon as it passes the bound (a provider, or whatever answers in its place, may send without end). */
async function readBounded(response: Response, url: string): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > MAX_DOCUMENT_BYTES) throw new FetchFailed('too_large', `${url} answered more than ${MAX_DOCUMENT_BYTES} bytes`);
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function failure(error: unknown, url: string): FetchFailed {
  const name = (error as { name?: unknown } | null)?.name;
  if (name === 'TimeoutError' || name === 'AbortError') return new FetchFailed('timeout', `${url} did not answer within ${FETCH_TIMEOUT_MS / 1000} s`);
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  const why = typeof cause?.code === 'string' ? cause.code : typeof cause?.message === 'string' ? cause.message : String((error as Error)?.message ?? error);
  return new FetchFailed('unreachable', `${url} is unreachable (${why})`);
}

/** `max-age` of a Cache-Control header; `no-cache` and `no-store` say 0 (kept for the shortest time allowed). */
export function maxAgeOf(header: string | null): number | undefined {
  if (!header) return undefined;
  const directives = header
    .toLowerCase()
    .split(',')
    .map((part) => part.trim());
  if (directives.includes('no-cache') || directives.includes('no-store')) return 0;
  const maxAge = directives.map((part) => /^max-age\s*=\s*"?([0-9]{1,10})"?$/.exec(part)).find((match) => match !== null);
  return maxAge ? Number(maxAge[1]) : undefined;
}
