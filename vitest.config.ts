import { defineConfig } from 'vitest/config';

/**
 * Two projects: `unit` (no database, no server: parsers, the generator, golden cases; seconds, `npm run
 * test:unit`) and `integration` (the real server over HTTP against one private MariaDB started for the
 * whole run by test/support/global-setup.ts, which also installs the Debian packages and builds dist/).
 */
export default defineConfig({
  test: {
    exclude: ['test/.tmp/**', 'node_modules/**'],
    reporters: ['default'],
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/unit/**/*.test.ts'], testTimeout: 20_000 },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/support/global-setup.ts'],
          testTimeout: 20_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
