// Whether the build (dist/) is current: `npm start` refuses a missing or stale one, and `xmlrest doctor`
// says so. Plain JavaScript, so that it runs with no build at all.
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * Sources changed since they were built: a compiled module older than its TypeScript source, a source with
 * no compiled module, a console page older than its sources. A deployment holding only dist/ has no
 * sources to compare, and starts.
 */
export function staleSources(root, dist = path.join(root, 'dist')) {
  const found = [];
  const mtime = (file) => statSync(file).mtimeMs;
  for (const folder of ['runtime', 'generated', 'plugins']) {
    for (const source of walk(path.join(root, folder))) {
      if (!source.endsWith('.ts') || source.endsWith('.d.ts') || path.basename(source).startsWith('.')) continue;
      const compiled = path.join(dist, path.relative(root, source)).replace(/\.ts$/, '.js');
      if (!existsSync(compiled) || mtime(compiled) < mtime(source)) found.push(path.relative(root, source));
    }
  }
  for (const file of ['scripts/serve.ts', 'scripts/project-host.ts', 'console/server.ts']) {
    const source = path.join(root, file);
    const compiled = path.join(dist, file.replace(/\.ts$/, '.js'));
    if (existsSync(source) && (!existsSync(compiled) || mtime(compiled) < mtime(source))) found.push(file);
  }
  const openapi = path.join(root, 'generated/openapi.json');
  const builtOpenapi = path.join(dist, 'generated/openapi.json');
  if (existsSync(openapi) && (!existsSync(builtOpenapi) || mtime(builtOpenapi) < mtime(openapi))) found.push('generated/openapi.json');
  const page = path.join(dist, 'console-ui/index.html');
  for (const source of walk(path.join(root, 'console/ui'))) {
    if (!existsSync(page) || mtime(page) < mtime(source)) {
      found.push(path.relative(root, source));
      break;
    }
  }
  return found;
}

function walk(folder) {
  if (!existsSync(folder)) return [];
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name));
}
