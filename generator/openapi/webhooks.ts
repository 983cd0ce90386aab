// OpenAPI's `webhooks`: what each emitted event's receivers get (docs/internals/contract.md §12), apart from the paths
// the server answers.
import type { Project } from '../ir.js';
import { camel } from '../names.js';
import type { Schema } from './responses.js';
import { stepSchema } from './schemas.js';

/** The Standard Webhooks headers every delivery carries (docs/internals/contract.md §12). */
const WEBHOOK_HEADERS = [
  { name: 'webhook-id', description: "The event's id (msg_...): the same on every attempt and for every webhook; an idempotency key." },
  { name: 'webhook-timestamp', description: 'When this attempt was made, in seconds since the epoch: refuse one too far from your clock.' },
  {
    name: 'webhook-signature',
    description:
      'v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}"> with the secret, one per secret (separated by spaces) while it is rotated.',
  },
].map((header) => ({ ...header, in: 'header', required: true, schema: { type: 'string' } }));

/**
 * OpenAPI's `webhooks`: each event type a backend emits, the body its webhooks receive (the Standard Webhooks
 * payload, typed from the emitting step), its headers and the answers the sender reads. Keyed by the type, or
 * by the type and the backend when two backends emit one.
 */
export function eventDocuments(project: Project): Record<string, Schema> {
  const emitted = project.backends.flatMap((backend) =>
    backend.resources.flatMap((resource) =>
      resource.operations.flatMap((operation) => (operation.emits ?? []).map((emit) => ({ backend, resource, operation, emit }))),
    ),
  );
  const documents: Record<string, Schema> = {};
  const backendsOf = new Map<string, Set<string>>();
  for (const { backend, emit } of emitted) backendsOf.set(emit.event, (backendsOf.get(emit.event) ?? new Set()).add(backend.name));
  for (const { backend, resource, operation, emit } of emitted) {
    const name = backendsOf.get(emit.event)!.size > 1 ? `${emit.event} (${backend.name})` : emit.event;
    const step = operation.steps.find((candidate) => candidate.id === emit.step)!;
    const emitters = `${operation.method} /${backend.name}/v${resource.version}/${resource.name}`;
    const existing = documents[name]?.post as Schema | undefined;
    if (existing) {
      existing.description = `${existing.description as string} Also emitted by ${emitters}.`;
      continue;
    }
    documents[name] = {
      post: {
        operationId: `${camel(backend.name)}_event_${emit.event.replaceAll('.', '_')}`,
        tags: [backend.name],
        summary: `Event ${emit.event}`,
        description:
          // The receivers' URLs stay out: this document is public, and a URL names an internal host or holds a
          // capability token; operators see them in xmlrest events list and the console.
          `Emitted by ${emitters} in its transaction, sent once it commits to the backend's webhooks that receive it. ` +
          `${emit.changes === null ? '' : 'Sent only when the writes before it found a row. '}` +
          'Delivered at least once (use webhook-id to drop repeats), retried with backoff for 24 h on anything but a 2xx' +
          `${emit.key !== null ? ', in order among events of the same key' : ''}; a 410 stops deliveries to the webhook.`,
        parameters: WEBHOOK_HEADERS,
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['type', 'timestamp', ...(emit.key === null ? [] : ['key']), 'data'],
                properties: {
                  type: { const: emit.event },
                  timestamp: { type: 'string', format: 'date-time', description: 'When the request emitted it.' },
                  ...(emit.key === null ? {} : { key: { type: ['string', 'number', 'null'], description: 'What the event is about: the value of its key.' } }),
                  data: { type: 'object', required: [step.id], properties: { [step.id]: stepSchema(step) } },
                },
              },
            },
          },
        },
        responses: {
          '200': { description: 'Received: any 2xx is a delivery.' },
          '410': { description: 'Gone: no more deliveries to this webhook until an operator retries (xmlrest events retry).' },
        },
      },
    };
  }
  return documents;
}
