#!/usr/bin/env node
// `npm start`: runs the built server (dist/scripts/serve.js) and never compiles: a production start must
// not need the build tools. When the build is missing, or older than the sources beside it, it says what to
// run and exits 1. Plain JavaScript, so that it runs with no build at all.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { staleBuildLine, staleSources } from './build-state.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
const entry = path.join(dist, 'scripts/serve.js');

if (!existsSync(entry)) {
  process.stderr.write('xmlrest: no build to start (dist/ is missing): run `npm run build`, then `npm start`\n');
  process.exit(1);
}
const stale = staleSources(root, dist);
if (stale.length > 0) {
  process.stderr.write(staleBuildLine(stale, ', then `npm start`'));
  process.exit(1);
}
process.setSourceMapsEnabled(true);
await import(pathToFileURL(entry).href);
