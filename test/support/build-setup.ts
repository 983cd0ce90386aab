import { execFileSync } from 'node:child_process';
import { CHROMIUM, ensurePackages, GALERA, LSOF, MARIADB, RSYNC, SQLMAP, XMLLINT } from '../../scripts/system-packages.js';

/**
 * Once per test run, before any project that runs servers: the Debian packages the suites use (a fresh
 * machine installs them here, in one apt-get run, rather than inside a test's time limit), and the build that
 * `npm start` runs (tests of the built server use it).
 */
export default function setup(): void {
  // Two projects name this setup; their runs share the process, so the build happens once.
  const shared = globalThis as { xmlrestBuilt?: boolean };
  if (shared.xmlrestBuilt) return;
  shared.xmlrestBuilt = true;
  const log = (line: string) => process.stdout.write(`${line}\n`);
  ensurePackages([MARIADB, CHROMIUM, XMLLINT, SQLMAP, GALERA, RSYNC, LSOF], log);
  execFileSync('npm', ['run', '-s', 'build'], { stdio: ['ignore', 'ignore', 'inherit'] });
}
