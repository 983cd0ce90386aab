import type { SourceLocation } from '../diagnostics.js';
import type { Operation, SqlStep } from '../ir.js';

/**
 * What analysis keeps beside the IR rather than in it, so that ir.json stays as it is: read by the types stage and
 * the tenant proof, filled by analyse/request.ts and analyse/validator.ts. One module both sides import, below them.
 */

/** A tenant backend's Sql step as written (with `$tenant`, not `?`), and where an offset into it is in its file. */
export interface StepSource {
  text: string;
  locate(offset: number): SourceLocation;
}

/** Each tenant backend's Sql step's text as written; filled by analyse/request.ts. */
export const STEP_SOURCES = new WeakMap<SqlStep, StepSource>();

/** The validator's statement as a Sql step, by the IR's `validator` (docs/internals/contract.md §15). */
export const VALIDATOR_STEPS = new WeakMap<NonNullable<Operation['validator']>, SqlStep>();
