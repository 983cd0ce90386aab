import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/**
 * Debian packages the demo and the tests run, installed with apt-get when
 * missing (never a download of their own). One apt-get run installs every
 * missing package, so a fresh machine pays for `apt-get update` once.
 */
export interface SystemPackage {
  /** The Debian package. */
  name: string;
  /** Any of these existing means the package is installed. */
  binaries: readonly string[];
  /** Leave out recommended packages (mariadb-server would pull in a mail server). */
  noRecommends?: boolean;
}

export const MARIADB: SystemPackage = { name: 'mariadb-server', binaries: ['/usr/sbin/mariadbd', '/usr/bin/mariadbd', '/usr/sbin/mysqld'], noRecommends: true };
export const CHROMIUM: SystemPackage = { name: 'chromium', binaries: ['/usr/bin/chromium'] };
export const XMLLINT: SystemPackage = { name: 'libxml2-utils', binaries: ['/usr/bin/xmllint'] };
export const SQLMAP: SystemPackage = { name: 'sqlmap', binaries: ['/usr/bin/sqlmap'] };
export const GALERA: SystemPackage = { name: 'galera-4', binaries: ['/usr/lib/galera/libgalera_smm.so'], noRecommends: true };
/** Galera's rsync state transfer (wsrep_sst_rsync) runs it, and looks up ports with lsof. */
export const RSYNC: SystemPackage = { name: 'rsync', binaries: ['/usr/bin/rsync'] };
export const LSOF: SystemPackage = { name: 'lsof', binaries: ['/usr/bin/lsof'] };

export function installedBinary(pkg: SystemPackage): string | undefined {
  return pkg.binaries.find((binary) => existsSync(binary));
}

/** Installs whichever of `packages` are missing; returns their names. */
export function ensurePackages(packages: readonly SystemPackage[], log: (line: string) => void = () => {}): string[] {
  const missing = packages.filter((pkg) => installedBinary(pkg) === undefined);
  if (missing.length === 0) return [];
  const names = missing.map((pkg) => pkg.name);
  if (process.getuid?.() !== 0) throw new Error(`missing Debian packages: run \`sudo apt-get install -y ${names.join(' ')}\``);
  log(`installing ${names.join(', ')} with apt-get (once per machine)...`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update', '-qq'], { stdio: ['ignore', 'ignore', 'inherit'], env });
  const plain = missing.filter((pkg) => !pkg.noRecommends).map((pkg) => pkg.name);
  const lean = missing.filter((pkg) => pkg.noRecommends).map((pkg) => pkg.name);
  if (lean.length > 0) execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...lean], { stdio: ['ignore', 'ignore', 'inherit'], env });
  if (plain.length > 0) execFileSync('apt-get', ['install', '-y', '-qq', ...plain], { stdio: ['ignore', 'ignore', 'inherit'], env });
  for (const pkg of missing) {
    if (installedBinary(pkg) === undefined) throw new Error(`apt-get installed ${pkg.name} but none of ${pkg.binaries.join(', ')} exists`);
  }
  return names;
}
