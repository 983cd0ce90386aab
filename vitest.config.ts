import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { DEMO_WEBHOOK_ENV } from './test/support/demo-webhook.js';

/**
 * Three projects: `unit` (no database, no server: parsers, the generator, golden cases; seconds, `npm run
 * test:unit`), `integration` (the real server over HTTP against one private MariaDB started for the whole
 * run by test/support/global-setup.ts) and `cluster` (two built servers on a private 3-node Galera cluster,
 * `npm run test:cluster`). The last two first install the Debian packages and build dist/
 * (test/support/build-setup.ts).
 */
export default defineConfig({
  // Generated modules import the package by its name; in this repository that is the runtime's source, as
  // tsconfig.json's `paths` has it for tsc and tsx.
  resolve: { alias: { 'xmlrest/runtime': fileURLToPath(new URL('./runtime/index.ts', import.meta.url)) } },
  test: {
    exclude: ['test/.tmp/**', 'node_modules/**'],
    // Two files at a time even on two cores (vitest's default there is one): most of an integration file's time is
    // spent waiting (a server or a browser starting, a session's revocation poll, an issuer's key freshness floor),
    // so one file alone leaves the machine idle. On a 2-core machine the suite took 1,590 s with one worker and
    // 878 s with two (unit and integration, 2026-11-28); every file keeps its own database, ports and folders.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // Errors outside any test (a failed hook, an unhandled rejection) named just before the summary.
    reporters: ['./test/support/outside-errors-reporter.ts', 'default'],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          // The generator's tests format whole projects with ts-morph: seconds alone, a minute on a loaded machine.
          testTimeout: 60_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/support/build-setup.ts', 'test/support/global-setup.ts'],
          // The demo's desk Webhook needs these wherever the repository's resources are served (servers and
          // commands a test starts with its own environment); test/support/demo-webhook.ts.
          env: DEMO_WEBHOOK_ENV,
          // A guard against hangs, not a speed test (speed is the bench's): these tests start servers, databases
          // and browsers, which on a busy 2-core machine take several times as long as on a quiet one.
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'cluster',
          include: ['test/cluster/**/*.test.ts'],
          // After the other projects, not beside them: a Galera cluster and its load want the machine's cores.
          sequence: { groupOrder: 1 },
          globalSetup: ['test/support/build-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
