import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The project's package.json: written whole in a new folder, or merged into the one a team has (typically made by
 * `npm install xmlrest`), keeping its name, its fields and its spec of xmlrest. A script it has with another
 * command, or a `type` other than module, is a conflict: overwritten only with --force.
 */

/** The scripts of a project, as `npm run` names them: every one goes through the installed xmlrest. */
export const PROJECT_SCRIPTS: Readonly<Record<string, string>> = {
  generate: 'xmlrest generate',
  dev: 'xmlrest dev',
  build: 'xmlrest build',
  start: 'xmlrest start',
  test: 'xmlrest generate --check && tsc -p tsconfig.json',
};

type Json = Record<string, unknown>;

/** What the installed xmlrest says of itself: its version, its Node range, its own devDependencies' ranges. */
export interface Installed {
  version: string;
  node: string;
  devDependencies: Record<string, string>;
}

/**
 * The installed xmlrest's package.json: the nearest one named xmlrest above this module, wherever a build put it
 * (scripts/cli/init/ from source, dist/scripts/cli/init/, node_modules/xmlrest/dist/...), as runtime/version.ts
 * finds the version. npm keeps devDependencies in a published package.json, so the ranges of TypeScript and
 * @types/node this package is built with are there.
 */
export function installedXmlrest(from = path.dirname(fileURLToPath(import.meta.url))): Installed {
  for (let at = from; ; at = path.dirname(at)) {
    const file = path.join(at, 'package.json');
    if (existsSync(file)) {
      const found = JSON.parse(readFileSync(file, 'utf8')) as Json;
      if (found.name === 'xmlrest' && typeof found.version === 'string') {
        const engines = (found.engines ?? {}) as Record<string, string>;
        return { version: found.version, node: engines.node ?? '>=20.12', devDependencies: (found.devDependencies ?? {}) as Record<string, string> };
      }
    }
    if (path.dirname(at) === at) throw new Error(`no package.json of xmlrest above ${from}`);
  }
}

/** A folder's name made a valid npm package name: lower case, URL-safe, no leading dot or underscore. */
export function packageNameOf(folder: string): string {
  const name = folder
    .toLowerCase()
    .replace(/[^a-z0-9._~-]+/g, '-')
    .replace(/^[._-]+/, '')
    .replace(/-+$/, '')
    .slice(0, 214);
  return name === '' || name === 'node_modules' || name === 'favicon.ico' ? 'xmlrest-project' : name;
}

export interface PackageMerge {
  text: string;
  /** What the existing file says otherwise, each as `package.json: ...`; empty when there is none. */
  conflicts: string[];
}

/**
 * package.json's new text. `existing` is the file's text when there is one: its fields and their order are kept,
 * what the project needs is added; with `force`, a conflicting script or type is replaced.
 */
export function packageJson(existing: string | undefined, folderName: string, installed: Installed, force: boolean): PackageMerge {
  const conflicts: string[] = [];
  const project: Json = existing === undefined ? { name: packageNameOf(folderName) } : parseObject(existing);
  project.private ??= true;
  if (project.type !== undefined && project.type !== 'module') conflicts.push(`package.json: "type" is "${String(project.type)}", not "module"`);
  if (project.type === undefined || force) project.type = 'module';
  const scripts = objectField(project, 'scripts');
  for (const [name, command] of Object.entries(PROJECT_SCRIPTS)) {
    if (scripts[name] !== undefined && scripts[name] !== command) {
      conflicts.push(`package.json: script "${name}"`);
      if (!force) continue;
    }
    scripts[name] = command;
  }
  const dependencies = objectField(project, 'dependencies');
  const devDependencies = objectField(project, 'devDependencies');
  // The server needs xmlrest at run time (npm ci --omit=dev): a spec under devDependencies moves, as it was written.
  if (dependencies.xmlrest === undefined) dependencies.xmlrest = devDependencies.xmlrest ?? `^${installed.version}`;
  delete devDependencies.xmlrest;
  for (const tool of ['typescript', '@types/node']) {
    const range = installed.devDependencies[tool];
    if (range !== undefined && dependencies[tool] === undefined) devDependencies[tool] ??= range;
  }
  if (Object.keys(devDependencies).length === 0) delete project.devDependencies;
  project.engines ??= { node: installed.node };
  return { text: `${JSON.stringify(project, null, 2)}\n`, conflicts };
}

function parseObject(text: string): Json {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new Error(`package.json is not JSON (${(error as Error).message}): fix it, or remove it, and run xmlrest init again`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new Error('package.json is not a JSON object: fix it, or remove it, and run xmlrest init again');
  return parsed as Json;
}

function objectField(project: Json, name: string): Record<string, string> {
  const value = project[name];
  if (value === undefined) return (project[name] = {}) as Record<string, string>;
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new Error(`package.json: "${name}" is not an object: fix it, and run xmlrest init again`);
  return value as Record<string, string>;
}
