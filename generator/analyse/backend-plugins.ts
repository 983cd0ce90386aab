import type { Backend, PluginRef } from '../ir.js';

/**
 * What the analysis of backend.xml hands the analysis of its resource files, and the name rule both check: kept
 * apart from both so that neither imports the other (backend.ts reads the plug-ins, request.ts their Args).
 */

/** backend.xml: the backend's settings, its AuthQuery and its plug-ins. */
export interface BackendWithPlugins extends Backend {
  plugins: Map<string, PluginRef>;
}

export const ARG_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
