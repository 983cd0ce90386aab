/** What a webhook receives as its body: the Standard Webhooks payload (docs/internals/contract.md §12). */
export interface EventPayload {
  type: string;
  /** When the request emitted it, ISO 8601. */
  timestamp: string;
  /** The value of its Emit's `key`, when it has one: which row the event is about (a number or a text). */
  key?: string | number | null;
  /** On a tenant backend's route, the caller's tenant (docs/internals/contract.md §14): whose rows the event is about. */
  tenant?: string;
  data: object;
}

/**
 * A receiver of a backend's events (a `Webhook` in backend.xml), delivered as the Standard Webhooks
 * specification has it. The secret is never in a file: `secret` names the environment variable holding it.
 */
export interface WebhookSettings {
  /** The event types it receives: names (`order.placed`), a prefix and `.*` (`order.*`), or `*` for every one. */
  events: readonly string[];
  url: string;
  /** The environment variable holding its signing secret, `whsec_` and base64 (several, separated by spaces, while rotating). */
  secret: string;
}

/** The outbox's column holds a URL of at most this many characters (runtime/events/outbox-schema.ts). */
const URL_CHARS = 500;

/**
 * Why a URL is not one the server may deliver to, or undefined. http or https (an http receiver on a private
 * network is the operator's choice: signatures still hold, the body travels in the clear); no user name or
 * password (they would end up in logs and lists); no fragment; ASCII (percent-encoded), as the outbox holds it.
 * The generator checks a `url` written out with it; the server, one read from the environment. No message holds
 * the URL.
 */
export function webhookUrlProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'is not an absolute URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return `is https or http, not ${url.protocol.slice(0, -1)}`;
  if (url.username !== '' || url.password !== '') return 'holds credentials: a webhook authenticates the sender by its signature, not by a password in its URL';
  if (url.hash !== '' || value.includes('#')) return 'holds a fragment, which is never sent';
  if (!/^[\x21-\x7e]+$/.test(value)) return 'holds characters that are not printable ASCII: percent-encode them';
  if (value.length > URL_CHARS) return `is longer than ${URL_CHARS} characters`;
  return undefined;
}

/** An event type (docs/internals/contract.md §12): identifiers of letters, digits and _, separated by full stops, as Standard Webhooks recommends. */
export const EVENT_TYPE = /^[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*$/;

/** Whether a webhook receives events of `type`: one of its patterns names it, or is a prefix of it ending in `.*`, or is `*`. */
export function receives(webhook: WebhookSettings, type: string): boolean {
  return webhook.events.some((pattern) => pattern === '*' || pattern === type || (pattern.endsWith('.*') && type.startsWith(pattern.slice(0, -1))));
}
