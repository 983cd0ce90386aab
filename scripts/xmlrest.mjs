#!/usr/bin/env node
// The `xmlrest` command (the package's bin). It runs the build, dist/scripts/cli/xmlrest.js, whenever that is
// current: a production install (`npm ci --omit=dev` after `npm run build`) has no tsx and needs none. In a
// checkout whose build is missing or older than its sources, it runs scripts/cli/xmlrest.ts through tsx (a dev
// dependency), so that no command waits for a build. Plain JavaScript, so that it runs with no build at all.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { staleBuildLine, staleSources } from './build-state.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const compiled = path.join(root, 'dist/scripts/cli/xmlrest.js');
const argv = process.argv.slice(2);

const built = existsSync(compiled);
// An installed package (node_modules/xmlrest) ships its build and no TypeScript sources: nothing to be older than.
const installed = !existsSync(path.join(root, 'scripts/cli/xmlrest.ts'));
const stale = !built ? ['dist/'] : installed ? [] : staleSources(root);
// What was found is handed on: the commands that read the build (explain, key create, doctor) walk dist/ no more.
const build = built ? { root, stale } : undefined;
if (stale.length === 0) {
  process.setSourceMapsEnabled(true);
  (await import(pathToFileURL(compiled).href)).run(argv, build);
} else {
  let tsx;
  try {
    tsx = await import('tsx/esm/api');
  } catch {
    process.stderr.write(built ? staleBuildLine(stale) : 'xmlrest: no build to run (dist/ is missing): run `npm run build`\n');
    process.exit(1);
  }
  (await tsx.tsImport('./cli/xmlrest.ts', import.meta.url)).run(argv, build);
}
