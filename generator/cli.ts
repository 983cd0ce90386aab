import { databaseUrlFromEnvironment, generateProject } from './project.js';

/** `npm run generate [-- --check] [-- --refresh-types]`: the command line, and nothing else (project.ts does the work). */
if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const unknown = args.filter((arg) => arg !== '--check' && arg !== '--refresh-types');
  if (unknown.length > 0) {
    process.stderr.write(`xmlrest generate: unknown option ${unknown[0]} (usage: generate [--check] [--refresh-types])\n`);
    process.exit(2);
  }
  const root = process.cwd();
  process.exit(
    await generateProject({
      root,
      check: args.includes('--check'),
      refreshTypes: args.includes('--refresh-types'),
      databaseUrl: databaseUrlFromEnvironment(root),
    }),
  );
}
