/** What a webhook receives as its body: the Standard Webhooks payload (docs/contract.md §12). */
export interface EventPayload {
  type: string;
  /** When the request emitted it, ISO 8601. */
  timestamp: string;
  /** The value of its Emit's `key`, when it has one: which row the event is about (a number or a text). */
  key?: string | number | null;
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

/** An event type (docs/contract.md §12): identifiers of letters, digits and _, separated by full stops, as Standard Webhooks recommends. */
export const EVENT_TYPE = /^[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*$/;

/** Whether a webhook receives events of `type`: one of its patterns names it, or is a prefix of it ending in `.*`, or is `*`. */
export function receives(webhook: WebhookSettings, type: string): boolean {
  return webhook.events.some((pattern) => pattern === '*' || pattern === type || (pattern.endsWith('.*') && type.startsWith(pattern.slice(0, -1))));
}
