import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { generateProject } from '../../generator/index.js';
import { copyProject } from './project-copy.js';

/**
 * A copy of the project whose resources are a test's own, generated and built
 * as a user would (`npm run generate`, then the build `npm start` runs), so that
 * startBuiltServer({ root }) serves them from dist/ like any deployment.
 */
export interface ScratchProject {
  /** Project-relative path to contents: resources/<backend>/*.xml and anything else. */
  files: Record<string, string>;
  /** The database that types the statements, as `npm run generate` asks it; none types nothing. */
  databaseUrl?: string | undefined;
  /** Runs between generate and build, on the project folder: to stand for modules an older generator wrote. */
  edit?: (root: string) => void;
}

export async function buildScratchProject(root: string, project: ScratchProject): Promise<void> {
  copyProject(root);
  symlinkSync(path.resolve('node_modules'), path.join(root, 'node_modules'));
  rmSync(path.join(root, 'resources'), { recursive: true, force: true });
  rmSync(path.join(root, 'generated'), { recursive: true, force: true });
  for (const [file, text] of Object.entries(project.files)) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), text);
  }
  const lines: string[] = [];
  const status = await generateProject({ root, check: false, databaseUrl: project.databaseUrl, log: (line) => lines.push(line) });
  if (status !== 0) throw new Error(`generate failed in ${root}:\n${lines.join('\n')}`);
  project.edit?.(root);
  // The server half of `npm run build` (the console's page is not needed): the TypeScript build, then the files
  // it copies beside the compiled modules (the API document, and build-state.mjs, which the compiled command imports).
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  execFileSync(process.execPath, ['scripts/build-files.mjs'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
}
