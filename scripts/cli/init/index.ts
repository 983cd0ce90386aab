import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { BACKEND_NAME, RESERVED_BACKENDS } from '../../../generator/analyse/index.js';
import { installedXmlrest, packageJson } from './package-json.js';
import { ADD_USER, backendXml, envExample, exampleCalls, gitignore, meXml, type Project, readme, type Scheme, tokenXml, tsconfigJson } from './templates.js';
import { blockedOf, conflictsOf, type PlannedFile, strangersIn, writeFiles } from './writer.js';

/**
 * `xmlrest init [DIR]`: a new project's files (templates.ts, package-json.ts), checked all before any is written
 * (writer.ts), then the commands to run next. Refuses (exit 2) a wrong option, a folder that holds more than a
 * new project may (a package.json, what npm made beside it), and any file it would overwrite, unless `force`,
 * naming each, having written nothing.
 */

export interface InitOptions {
  dir: string;
  scheme?: string | undefined;
  backend?: string | undefined;
  force?: boolean | undefined;
}

export interface InitOutcome {
  code: number;
  /** What to print on stdout, and on stderr, one line each. */
  out: string[];
  err: string[];
}

/** A backend's name as the generator takes it (its own rule, generator/analyse/index.ts), said as an option's problem. */
export function backendNameProblem(name: string): string | undefined {
  if (!BACKEND_NAME.test(name)) return `--backend is a lower-case name (a letter, then letters, digits, _ or -), not "${name}"`;
  if (RESERVED_BACKENDS.has(name)) return `--backend "${name}" is reserved for the server's own /${name} endpoint: choose another name`;
  return undefined;
}

/** Basic or Bearer, in any letter case (written as spelled here). */
export function schemeOf(given: string): Scheme | undefined {
  return (['Basic', 'Bearer'] as const).find((scheme) => scheme.toLowerCase() === given.toLowerCase());
}

export function init(options: InitOptions): InitOutcome {
  const refuse = (...err: string[]): InitOutcome => ({ code: 2, out: [], err });
  const scheme = schemeOf(options.scheme ?? 'Basic');
  if (scheme === undefined) return refuse(`xmlrest init: --scheme is Basic or Bearer, not "${options.scheme}"; nothing written`);
  const backend = options.backend ?? 'api';
  const problem = backendNameProblem(backend);
  if (problem) return refuse(`xmlrest init: ${problem}; nothing written`);
  const folder = path.resolve(options.dir);
  if (existsSync(folder) && !statSync(folder).isDirectory()) return refuse(`xmlrest init: ${options.dir} is not a folder; nothing written`);

  const project: Project = { backend, scheme };
  const force = options.force ?? false;
  const packageFile = path.join(folder, 'package.json');
  let files: PlannedFile[];
  try {
    const existing = existsSync(packageFile) ? readFileSync(packageFile, 'utf8') : undefined;
    const merged = packageJson(existing, path.basename(folder), installedXmlrest(), force);
    files = [{ path: 'package.json', text: merged.text, conflicts: merged.conflicts }, ...projectFiles(project)];
  } catch (error) {
    return refuse(`xmlrest init: ${(error as Error).message}; nothing written`);
  }
  // A folder where a file goes would fail its rename halfway through the writing: refused before, --force or not.
  const blocked = blockedOf(folder, files);
  if (blocked.length > 0) return refuse('xmlrest init: these stand where files go; nothing written:', ...blocked.map((file) => `  ${file}`));
  if (!force) {
    // A folder with a project in it already (sources, resources of its own): init writes new projects only.
    const strangers = strangersIn(folder, files);
    if (strangers.length > 0)
      return refuse(
        `xmlrest init: ${options.dir} is not empty: init writes a new project into an empty folder, or one holding only a package.json; nothing written (--force writes beside these):`,
        ...strangers.slice(0, 20).map((file) => `  ${file}`),
        ...(strangers.length > 20 ? [`  ... and ${strangers.length - 20} more`] : []),
      );
    const conflicts = conflictsOf(folder, files);
    if (conflicts.length > 0)
      return refuse(
        'xmlrest init: these exist and differ from what init writes; nothing written (--force overwrites them):',
        ...conflicts.map((conflict) => `  ${conflict}`),
      );
  }
  const written = writeFiles(folder, files);
  return { code: 0, out: [...written.map((file) => `wrote ${path.join(options.dir, file)}`), '', ...nextSteps(options.dir, project)], err: [] };
}

function projectFiles(project: Project): PlannedFile[] {
  const resources = `resources/${project.backend}`;
  return [
    { path: 'tsconfig.json', text: tsconfigJson() },
    { path: '.gitignore', text: gitignore() },
    { path: '.env.example', text: envExample() },
    { path: 'README.md', text: readme(project) },
    { path: `${resources}/backend.xml`, text: backendXml(project) },
    { path: `${resources}/me.xml`, text: meXml() },
    ...(project.scheme === 'Bearer' ? [{ path: `${resources}/token.xml`, text: tokenXml() }] : []),
  ];
}

/** The commands to run next, each as it works when pasted into a shell in the folder init ran in. */
function nextSteps(dir: string, project: Project): string[] {
  const quoted = /^[A-Za-z0-9_./-]+$/.test(dir) ? dir : `'${dir.replaceAll("'", `'\\''`)}'`;
  return [
    'Next:',
    ...(path.resolve(dir) === process.cwd() ? [] : [`  cd ${quoted}`]),
    '  npm install',
    '  npm run dev        # without DATABASE_URL: a private MariaDB under .xmlrest/, its DATABASE_URL printed',
    'Then, in another terminal of this folder (npx xmlrest takes npm run dev’s database when DATABASE_URL is unset):',
    `  ${ADD_USER}`,
    ...exampleCalls(project).map((call) => `  ${call}`),
  ];
}
