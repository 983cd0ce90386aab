import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The installed xmlrest's version, from its package.json (scripts/install.ts `packageVersion` answers with it): the
 * nearest package.json named xmlrest above this module, wherever a build put it (runtime/ from source, dist/runtime/,
 * the bench's .xmlrest/bench-dist/runtime/, node_modules/xmlrest/dist/runtime/): a fixed number of folders up broke
 * the bench's build, whose runtime lies one folder deeper. What the generator stamps on its modules and what the
 * runtime names when it refuses modules it cannot serve (module-format.ts); `unknown` when no such file is found, so
 * that a missing file never stops a server.
 */
export const XMLREST_VERSION: string = versionAbove(path.dirname(fileURLToPath(import.meta.url)));

function versionAbove(folder: string): string {
  for (let at = folder; ; at = path.dirname(at)) {
    const file = path.join(at, 'package.json');
    if (existsSync(file)) {
      try {
        const found = JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown };
        if (found.name === 'xmlrest' && typeof found.version === 'string') return found.version;
      } catch {
        // Not JSON, or unreadable: not ours; look further up.
      }
    }
    if (path.dirname(at) === at) return 'unknown';
  }
}
