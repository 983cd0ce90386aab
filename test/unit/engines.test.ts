import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

/**
 * The Node the project says it runs on (package.json `engines`, README's "Node.js 20.12 or newer") is one that
 * every package of a production install supports: `npm ci --omit=dev` prints no EBADENGINE there, and an
 * install with engine-strict works. Read from package-lock.json, which records each package's `engines`.
 */
interface Semver {
  minVersion(range: string): { version: string } | null;
  satisfies(version: string, range: string): boolean;
}
// npm's own range parser (a devDependency), through require: only these two functions are needed.
const semver = createRequire(import.meta.url)('semver') as Semver;

interface LockedPackage {
  dev?: boolean;
  engines?: { node?: string };
}

describe('the Node the project supports', () => {
  it('is supported by every package a production install holds', () => {
    const project = JSON.parse(readFileSync('package.json', 'utf8')) as { engines: { node: string } };
    const oldest = semver.minVersion(project.engines.node)!.version;
    expect(oldest).toBe('20.12.0');
    const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as { packages: Record<string, LockedPackage> };
    const production = Object.entries(lock.packages).filter(([name, locked]) => name !== '' && !locked.dev);
    // OpenTelemetry, whose newest line wants Node 22.15, is among them.
    expect(production.map(([name]) => name)).toContain('node_modules/@opentelemetry/sdk-node');
    const unsupported = production
      .filter(([, locked]) => locked.engines?.node !== undefined && !semver.satisfies(oldest, locked.engines.node))
      .map(([name, locked]) => `${name.replace(/^.*node_modules\//, '')} wants node ${locked.engines!.node}`);
    expect(unsupported).toEqual([]);
  });
});
