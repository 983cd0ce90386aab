// Part of `npm run build`, after tsc: the files beside the compiled modules that they read at run time and
// tsc does not copy (build-state.mjs names them, and says the build is stale when one changed since).
// Plain JavaScript, as the build's other steps.
import { cpSync } from 'node:fs';
import { COPIED_FILES } from './build-state.mjs';

for (const file of COPIED_FILES) cpSync(file, `dist/${file}`);
