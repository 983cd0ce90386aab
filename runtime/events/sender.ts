/**
 * One delivery attempt: a POST of the event's body with the Standard Webhooks
 * headers, through Node's fetch (undici). Status handling as the
 * specification suggests ("Delivery success and failure"): a 2xx is
 * delivered; a 410 Gone stops the webhook; anything else, a redirect
 * included (never followed: `redirect: 'manual'`), a timeout or a broken
 * connection, is a failed attempt, tried again later, no sooner than a
 * `Retry-After` asks. The whole attempt, the answer's body included, is cut
 * after `timeoutMs`; at most ANSWER_BYTES of the body are read, then the
 * rest is dropped.
 */
export type Attempt =
  | { outcome: 'delivered'; status: number }
  | { outcome: 'gone'; status: 410 }
  | { outcome: 'failed'; status: number | null; error: string; retryAfterMs?: number };

const ANSWER_BYTES = 64 * 1024;
const USER_AGENT = 'xmlrest-webhooks/1';

export async function send(url: string, headers: Record<string, string>, body: string, timeoutMs: number): Promise<Attempt> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': USER_AGENT, ...headers },
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    await drain(response);
  } catch (error) {
    return { outcome: 'failed', status: null, error: describe(error, timeoutMs) };
  }
  const status = response.status;
  if (status >= 200 && status < 300) return { outcome: 'delivered', status };
  if (status === 410) return { outcome: 'gone', status };
  const retryAfterMs = retryAfter(response.headers.get('retry-after'));
  const error =
    status >= 300 && status < 400
      ? `the receiver answered ${status}, a redirect (never followed: give the webhook its final URL)`
      : `the receiver answered ${status}`;
  return { outcome: 'failed', status, error, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
}

/** Reads the answer's body up to ANSWER_BYTES (so that its connection can serve the next delivery), then drops it. */
async function drain(response: Response): Promise<void> {
  if (response.body === null) return;
  const reader = response.body.getReader();
  let read = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    read += value.byteLength;
    if (read > ANSWER_BYTES) {
      await reader.cancel();
      return;
    }
  }
}

/** Why an attempt got no answer, in words for the log and the operators (never the body sent). */
function describe(error: unknown, timeoutMs: number): string {
  const named = error as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (named.name === 'TimeoutError' || named.name === 'AbortError') return `no answer within ${timeoutMs} ms: cut off`;
  const cause = named.cause;
  if (cause?.code) return `cannot reach the receiver (${cause.code})`;
  return `cannot reach the receiver (${cause?.message ?? named.message ?? String(error)})`;
}

/** `Retry-After` as milliseconds: seconds, or an HTTP date; undefined when absent or unreadable. */
export function retryAfter(value: string | null): number | undefined {
  if (value === null) return undefined;
  if (/^[0-9]{1,9}$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}
