/** Sources changed since they were built (dist/ missing: every one). See build-state.mjs. */
export function staleSources(root: string, dist?: string): string[];
/** Files the build copies into dist/. See build-state.mjs. */
export const COPIED_FILES: readonly string[];
