import type { PluginContext } from './module.js';

/**
 * A plug-in: called with the step's `Arg` values, its result is the step's
 * result. Throw an HttpError to answer the client.
 */
export type Plugin<Args extends object, Result> = (args: Args, context: PluginContext) => Result | Promise<Result>;

/**
 * `$[step][row].column` on a plug-in step's result: reads it as rows of
 * objects; anything else, or a missing row, reads as null (docs/internals/contract.md §2).
 */
export function cell(result: unknown, row: number, column: string): unknown {
  if (!Array.isArray(result)) return null;
  const value: unknown = result[row];
  if (typeof value !== 'object' || value === null || !Object.hasOwn(value, column)) return null;
  return (value as Record<string, unknown>)[column] ?? null;
}
