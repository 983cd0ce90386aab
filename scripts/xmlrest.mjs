#!/usr/bin/env node
// The `xmlrest` command: runs scripts/xmlrest.ts through tsx, so that the
// generator and the database commands need no build step.
import { tsImport } from 'tsx/esm/api';

const { main } = await tsImport('./xmlrest.ts', import.meta.url);
main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`xmlrest: ${error instanceof Error ? error.message : String(error)}\n`);
    // A wrong command line (exit 2) says where usage is.
    if (error?.exitCode === 2) process.stderr.write('(run xmlrest --help, or xmlrest <command> --help, for usage)\n');
    process.exit(error?.exitCode ?? 1);
  },
);
