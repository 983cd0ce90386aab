import type { PluginRef } from './ir.js';

/**
 * Plug-ins that ship with xmlrest. A backend.xml `<Plugin>` adds its own, or an
 * alias so that resource files ported from elsewhere keep their class names.
 */
export const BUILTIN_PLUGINS: ReadonlyMap<string, PluginRef> = new Map([
  [
    'xmlrest.auth.TokenGenerator',
    { classname: 'xmlrest.auth.TokenGenerator', module: 'plugins/token-generator.ts', exportName: 'tokenGenerator', builtin: true },
  ],
]);
