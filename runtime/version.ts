import { readFileSync } from 'node:fs';

/**
 * The installed xmlrest's version, from its package.json (scripts/install.ts `packageVersion` answers with it): one
 * folder up from runtime/, two from dist/runtime/. What the generator stamps on its modules and what the
 * runtime names when it refuses modules it cannot serve (module-format.ts).
 */
export const XMLREST_VERSION: string = (
  JSON.parse(readFileSync(new URL(import.meta.url.endsWith('.js') ? '../../package.json' : '../package.json', import.meta.url), 'utf8')) as {
    version: string;
  }
).version;
