import { defineConfig } from 'vite';

/** Builds the console page (Preact + htm, no JSX step) into dist/console-ui; the server serves it. */
export default defineConfig({
  root: 'console/ui',
  base: './',
  logLevel: 'warn',
  build: {
    outDir: '../../dist/console-ui',
    emptyOutDir: true,
    // One script and one stylesheet: the page's CSP allows only files from the server.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
  },
});
