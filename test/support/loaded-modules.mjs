// `node --import ./test/support/loaded-modules.mjs`: every module the process resolves through the ESM
// loader is appended to the file LOADED_MODULES_FILE names, one URL a line, so that a test can tell what a
// server loaded (or did not).
import { register } from 'node:module';

register('./loaded-modules-hooks.mjs', import.meta.url, { data: { file: process.env.LOADED_MODULES_FILE } });
