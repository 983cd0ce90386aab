import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // One private MariaDB for the whole run, not one per test (test/support/global-setup.ts).
    globalSetup: ['test/support/global-setup.ts'],
    include: ['test/**/*.test.ts'],
    exclude: ['test/.tmp/**', 'node_modules/**'],
    testTimeout: 20_000,
    hookTimeout: 120_000,
    reporters: ['default'],
  },
});
