import { EVENT_TYPE, type WebhookSettings, webhookUrlProblem } from '../../runtime/contract.js';
import type { Diagnostics, SourceLocation } from '../diagnostics.js';
import { AttributeReader, type AttributeRule, orReference, orReferenceError, type RawElement, rule } from './elements.js';

/**
 * `<Webhook event url secret>` in backend.xml (docs/internals/contract.md §12): where a
 * backend's events go. Each attribute is a row of the table below.
 */
type Draft = { -readonly [K in keyof WebhookSettings]: WebhookSettings[K] };

/** An environment variable's name, as shells write one. */
const VARIABLE = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

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
    orReference((value) => (webhookUrlProblem(value) === undefined ? value : undefined)),
    orReferenceError('url', (value) => `url ${webhookUrlProblem(value)}: "${value}"`),
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
/** The names this table reads, which the schema must give the element too (test/unit/reference.test.ts). */
export const WEBHOOK_ATTRIBUTE_NAMES: readonly string[] = WEBHOOK_ATTRIBUTES.map((attribute) => attribute.name);

/** The patterns of `event`: names, a name and `.*`, or `*`; undefined when one is none of these. */
function eventPatterns(value: string): string[] | undefined {
  const patterns = value.split(/\s+/).filter((word) => word !== '');
  if (patterns.length === 0) return undefined;
  const valid = patterns.every((pattern) => pattern === '*' || EVENT_TYPE.test(pattern.endsWith('.*') ? pattern.slice(0, -2) : pattern));
  return valid ? [...new Set(patterns)] : undefined;
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
