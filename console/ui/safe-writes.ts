import { html } from 'htm/preact';
import type { Resource, SafeWrites } from './shared.js';

/**
 * What each method of a resource does of docs/internals/contract.md §15, in words: its ETag validator, its version
 * column and whether If-Match is required, a required Idempotency-Key, a shared cache's max-age. Apart from
 * resources.ts, which shows who may call them.
 */
function phrases(writes: SafeWrites): string[] {
  return [
    writes.validator ? 'ETag validator' : null,
    writes.version ? `If-Match ${writes.version.required ? 'required' : 'optional'} (version column ${writes.version.column})` : null,
    writes.idempotency === 'required' ? 'Idempotency-Key required' : null,
    writes.maxAge !== undefined ? `cached ${writes.maxAge} s (max-age)` : null,
  ].filter((phrase): phrase is string => phrase !== null);
}

export function SafeWritesOf({ resource }: { resource: Resource }) {
  return Object.entries(resource.safeWrites ?? {}).map(
    ([method, writes]) =>
      html`<div class="muted" data-testid=${`safe-writes-${method}`}>${method}: ${phrases(writes).map((phrase) => html`<span class="badge">${phrase}</span> `)}</div>`,
  );
}

/** The backend's batches: one line above its resources, or nothing when they are off. */
export function BatchNote({ batch }: { batch: { maxOperations: number } | null }) {
  return batch
    ? html`<p class="muted" data-testid="batch-note">Batches on (at most ${batch.maxOperations} operations) at <code>POST …/batch</code>: each operation through its own route, all in one transaction.</p>`
    : null;
}
