import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';

/**
 * `xmlrest build` in a team's project: its generated modules and plug-ins compiled into dist/ as `npm start`
 * serves them, with the TypeScript the generator brings (ts-morph's), so that a production build needs no
 * compiler of the project's own; type errors stop it, each at its file:line:col. The project's tsconfig.json
 * says how to compile (`xmlrest init` writes one); what is compiled, and where to, are ours.
 * generated/openapi.json goes beside the modules, as the server reads it there. (This repository builds itself
 * with `npm run build`, which compiles the runtime and the console as well.)
 */
export async function buildProject(root: string, log: (line: string) => void): Promise<number> {
  const { Project, ts } = await import('ts-morph');
  const configFile = path.join(root, 'tsconfig.json');
  // Compiled into a folder of its own, then moved into dist/: an outDir holding the package's own build (this
  // repository's dist/runtime/) would have TypeScript compile the runtime's sources in place of its declarations.
  const staging = path.join(root, '.xmlrest/build');
  rmSync(staging, { recursive: true, force: true });
  const output = {
    noEmit: false,
    outDir: staging,
    rootDir: root,
    sourceMap: true,
    declaration: false,
    declarationMap: false,
    composite: false,
    incremental: false,
  };
  // ts-morph brings TypeScript's library declarations with it, which the bare compiler API would look for on disk.
  // The compiler options are the project's; what is compiled is generated/ and plugins/ alone, their imports
  // resolved as Node resolves them at run time (no `paths`): `xmlrest/runtime` is the installed package's build.
  const project = existsSync(configFile)
    ? new Project({ tsConfigFilePath: configFile, skipAddingFilesFromTsConfig: true, compilerOptions: { ...output, paths: {} } })
    : new Project({ compilerOptions: { ...defaultOptions(ts), ...output } });
  project.addSourceFilesAtPaths([path.join(root, 'generated/**/*.ts'), path.join(root, 'plugins/**/*.ts'), `!${path.join(root, '**/*.d.ts')}`]);
  const modules = project.getSourceFiles().filter((file) => !file.isDeclarationFile());
  if (!modules.some((file) => file.getFilePath().startsWith(`${path.join(root, 'generated')}/`))) {
    log(`xmlrest build: no generated modules in ${path.join(root, 'generated')}: run npx xmlrest generate first`);
    return 1;
  }
  const errors = project.getPreEmitDiagnostics().filter((diagnostic) => diagnostic.getCategory() === ts.DiagnosticCategory.Error);
  for (const diagnostic of errors) log(describe(diagnostic.compilerObject, root, ts));
  if (errors.length > 0) {
    log(`xmlrest build: ${errors.length} error${errors.length === 1 ? '' : 's'}; nothing written`);
    return 1;
  }
  const emitted = await project.emit();
  for (const diagnostic of emitted.getDiagnostics()) log(describe(diagnostic.compilerObject, root, ts));
  if (emitted.getEmitSkipped()) return 1;
  // Same depth below the project as dist/, so that the source maps' relative paths hold after the move; each
  // folder replaced whole, so that a module whose resource was removed leaves no compiled copy behind.
  for (const folder of readdirSync(staging)) {
    rmSync(path.join(root, 'dist', folder), { recursive: true, force: true });
    cpSync(path.join(staging, folder), path.join(root, 'dist', folder), { recursive: true });
  }
  rmSync(staging, { recursive: true, force: true });
  const openapi = path.join(root, 'generated/openapi.json');
  if (existsSync(openapi)) {
    mkdirSync(path.join(root, 'dist/generated'), { recursive: true });
    copyFileSync(openapi, path.join(root, 'dist/generated/openapi.json'));
  }
  log(`xmlrest build: ${modules.length} module${modules.length === 1 ? '' : 's'} compiled into dist/`);
  return 0;
}

/** What a project without tsconfig.json is compiled with: what `xmlrest init` writes. */
function defaultOptions(ts: typeof import('ts-morph').ts) {
  return {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    skipLibCheck: true,
    verbatimModuleSyntax: true,
    types: ['node'],
  };
}

function describe(diagnostic: import('ts-morph').ts.Diagnostic, root: string, ts: typeof import('ts-morph').ts): string {
  const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
  if (!diagnostic.file || diagnostic.start === undefined) return `error: ${message}`;
  const { line, character } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
  return `${path.relative(root, diagnostic.file.fileName)}:${line + 1}:${character + 1}: ${message}`;
}
