/** Sources changed since they were built (dist/ missing: every one). See build-state.mjs. */
export function staleSources(root: string, dist?: string): string[];
/** Files the build copies into dist/. See build-state.mjs. */
export const COPIED_FILES: readonly string[];
/** The line said of a build older than its sources. See build-state.mjs. */
export function staleBuildLine(stale: readonly string[], then?: string): string;
