import { EVENT_TYPE, type WebhookSettings } from '../../runtime/contract.js';
import type { Diagnostics, SourceLocation } from '../diagnostics.js';
import { AttributeReader, type AttributeRule, type RawElement, rule } from './elements.js';

/**
 * `<Webhook event url secret>` in backend.xml (docs/contract.md §12): where a
 * backend's events go. Each attribute is a row of the table below.
 */
type Draft = { -readonly [K in keyof WebhookSettings]: WebhookSettings[K] };

/** An environment variable's name, as shells write one. */
const VARIABLE = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
/** The outbox's column holds a URL of at most this many characters (runtime/events/outbox-schema.ts). */
const URL_CHARS = 500;

const WEBHOOK_ATTRIBUTES: readonly AttributeRule<Draft>[] = [
  rule<Draft, 'events'>(
    'event',
    'events',
    eventPatterns,
    (value) => `event is event types separated by spaces (order.placed, order.*, or * for every one), not "${value}"`,
  ),
  rule<Draft, 'url'>(
    'url',
    'url',
    (value) => (urlProblem(value) === undefined ? value : undefined),
    (value) => `url ${urlProblem(value)}: "${value}"`,
  ),
  rule<Draft, 'secret'>(
    'secret',
    'secret',
    (value) => (VARIABLE.test(value) && !value.startsWith('whsec_') ? value : undefined),
    (value) =>
      value.startsWith('whsec_')
        ? 'secret names the environment variable that holds the signing secret, never the secret itself: put it in the environment and name the variable here'
        : `secret names an environment variable (letters, digits, _), not "${value}"`,
  ),
];

/** The patterns of `event`: names, a name and `.*`, or `*`; undefined when one is none of these. */
function eventPatterns(value: string): string[] | undefined {
  const patterns = value.split(/\s+/).filter((word) => word !== '');
  if (patterns.length === 0) return undefined;
  const valid = patterns.every((pattern) => pattern === '*' || EVENT_TYPE.test(pattern.endsWith('.*') ? pattern.slice(0, -2) : pattern));
  return valid ? [...new Set(patterns)] : undefined;
}

/**
 * Why a URL is not one the server may deliver to, or undefined. http or https (an http receiver on a private
 * network is the operator's choice: signatures still hold, the body travels in the clear); no user name or
 * password (they would end up in logs and lists); no fragment; ASCII (percent-encoded), as the outbox holds it.
 */
function urlProblem(value: string): string | undefined {
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

export function analyseWebhook(element: RawElement, diagnostics: Diagnostics): { webhook: WebhookSettings; urlAt: SourceLocation } | undefined {
  const attrs = new AttributeReader(element, diagnostics);
  const draft: Draft = { events: [], url: '', secret: '' };
  let ok = true;
  for (const attribute of WEBHOOK_ATTRIBUTES) {
    const given = attrs.required(attribute.name);
    if (given === undefined) ok = false;
    else if (!attribute.apply(given.value, draft)) {
      diagnostics.error(given.at, attribute.error(given.value));
      ok = false;
    }
  }
  const urlAt = attrs.optional('url')?.at ?? element.at;
  attrs.rejectOthers();
  if (element.children.length > 0) diagnostics.error(element.children[0]!.at, 'Webhook holds nothing: its attributes say it all');
  else if (element.text.trim() !== '') diagnostics.error(element.at, 'Webhook holds nothing: its attributes say it all');
  return ok ? { webhook: draft, urlAt } : undefined;
}
