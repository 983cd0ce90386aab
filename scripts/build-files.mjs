// Part of `npm run build`, after tsc: the files beside the compiled modules that they read at run time and
// tsc does not copy. Plain JavaScript, as the build's other steps.
import { cpSync } from 'node:fs';

const FILES = [
  // The server serves it, and the console's regeneration rewrites it.
  'generated/openapi.json',
  // `xmlrest db init --demo`.
  'scripts/demo.sql',
  // `xmlrest doctor` and the command itself say whether the build is current.
  'scripts/build-state.mjs',
];
for (const file of FILES) cpSync(file, `dist/${file}`);
