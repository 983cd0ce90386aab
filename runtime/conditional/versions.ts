import type Koa from 'koa';
import type { ExpectedVersion, Queryable, SqlValue } from '../contract.js';
import { HttpError } from '../errors.js';
import { readIfMatch, versionTag } from './tags.js';

/**
 * Conditional writes (docs/internals/contract.md §15): a versioned write's If-Match read before its transaction,
 * and what a write that changed no row answers. The comparison itself is in the write's own statement
 * (`and <version> = ?`, made by the generator), so that no other write can come between a check and the change;
 * a deadlocked transaction (on Galera, a certification conflict, errno 1213) runs again and compares again
 * (runtime/db/faults.ts), so it answers 412 rather than overwrite.
 */

/** What the request's If-Match named, kept in its state between `ifMatch`, `mismatch` and the answer. */
type Precondition = { kind: 'any' } | { kind: 'version'; version: string };

interface VersionState {
  precondition?: Precondition;
}

/** A versioned write's If-Match: the version it names, or null for none or `*` (RequestScope.ifMatch). */
export function expectedVersion(ctx: Koa.Context, required: boolean): ExpectedVersion {
  const found = readIfMatch(ctx.get('If-Match') || undefined);
  const state = ctx.state as VersionState;
  switch (found.kind) {
    case 'absent':
      if (required) throw new HttpError(428, 'Precondition required: send If-Match with the ETag of the version you change', {}, 'precondition_required');
      return null;
    case 'any':
      state.precondition = { kind: 'any' };
      return null;
    case 'version':
      state.precondition = { kind: 'version', version: found.version };
      return found.version;
    default:
      // A weak tag, a digest, several tags: none is a version, so none can match (strong comparison, RFC 9110 §13.1.1).
      throw preconditionFailed({});
  }
}

/**
 * A versioned write that changed no row (RequestScope.mismatch): the probe, in the write's transaction, says whether
 * the row is there. There: another write moved it on, 412 with its current ETag. Not there: 404, or 412 under
 * `If-Match: *` (RFC 9110 §13.1.1: `*` is false when there is no current representation).
 */
export async function mismatched(ctx: Koa.Context, db: Queryable, sql: string, values: readonly SqlValue[]): Promise<never> {
  const rows = await db.select<Record<string, unknown>>(sql, values);
  const row = rows[0];
  if (row !== undefined) {
    const current = Object.values(row)[0];
    const headers: Record<string, string> = current === null || current === undefined ? {} : { ETag: versionTag(String(current)) };
    throw preconditionFailed(headers);
  }
  if ((ctx.state as VersionState).precondition?.kind === 'any') throw preconditionFailed({});
  throw new HttpError(404, 'Not found');
}

/** The ETag of a conditional write that committed: the version it moved on to, `expected + 1`; none otherwise. */
export function writtenTag(state: object): string | undefined {
  const precondition = (state as VersionState).precondition;
  return precondition?.kind === 'version' ? versionTag(BigInt(precondition.version) + 1n) : undefined;
}

/** If-Match on a write with no version column: nothing it could compare, refused rather than ignored. */
export function refuseIfMatch(ctx: Koa.Context): void {
  if (ctx.get('If-Match') !== '') throw new HttpError(400, 'If-Match is not taken here: this write has no version column to compare');
}

function preconditionFailed(headers: Record<string, string>): HttpError {
  return new HttpError(412, 'Precondition failed: the resource has changed since the ETag you sent', headers, 'precondition_failed');
}
