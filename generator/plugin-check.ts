import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Project as MorphProject, type Type } from 'ts-morph';
import type { Diagnostics } from './diagnostics.js';
import type { Bind, ExecuteStep, Project, SqlStep, Step } from './ir.js';

/**
 * Checks every Execute step against its plug-in's TypeScript signature: the
 * first parameter's properties are the arguments it declares. An Arg it does
 * not declare, a required one that is missing, or a value whose type cannot be
 * assigned to the declared one is a generation error at the Arg.
 */
/** A compiler kept by a long-running process, so that only the first check pays for loading it. */
export interface PluginCheckCache {
  morph?: MorphProject;
}

export function checkPluginCalls(project: Project, projectRoot: string, diagnostics: Diagnostics, cache: PluginCheckCache = {}): void {
  const calls: { step: ExecuteStep; steps: Step[] }[] = [];
  for (const backend of project.backends) {
    for (const resource of backend.resources) {
      for (const operation of resource.operations) {
        for (const step of operation.steps) if (step.kind === 'execute') calls.push({ step, steps: operation.steps });
      }
    }
  }
  if (calls.length === 0) return;
  // Loading the compiler costs about a second; it happens only when a resource calls a plug-in.
  const morph = (cache.morph ??= new MorphProject({
    compilerOptions: {
      strict: true,
      module: 199 /* NodeNext */,
      moduleResolution: 99 /* NodeNext */,
      target: 9 /* ES2022 */,
      skipLibCheck: true,
      types: ['node'],
    },
  }));
  // A kept compiler must see plug-ins as they are on disk now.
  for (const file of morph.getSourceFiles()) if (!file.getFilePath().includes('__xmlrest_plugin_probe__')) file.refreshFromFileSystemSync();
  const probes = morph.createSourceFile(path.join(projectRoot, '__xmlrest_plugin_probe__.ts'), '', { overwrite: true });
  const probeTypes = new Map<string, Type>();
  const typeOf = (text: string): Type => {
    let type = probeTypes.get(text);
    if (!type) {
      const name = `probe${probeTypes.size}`;
      type = probes.addTypeAlias({ name, type: text }).getType();
      probeTypes.set(text, type);
    }
    return type;
  };

  for (const { step, steps } of calls) {
    const file = morph.addSourceFileAtPathIfExists(step.plugin.builtin ? builtinSource(step.plugin.module) : path.join(projectRoot, step.plugin.module));
    const declaration = file?.getExportedDeclarations().get(step.plugin.exportName)?.[0];
    if (!file || !declaration) {
      diagnostics.error(step.at, `plug-in ${step.plugin.classname}: ${step.plugin.module} exports no ${step.plugin.exportName}`);
      continue;
    }
    const signature = declaration.getType().getCallSignatures()[0];
    const parameter = signature?.getParameters()[0];
    if (!signature || !parameter) {
      diagnostics.error(step.at, `plug-in ${step.plugin.classname}: ${step.plugin.exportName} is not a function of (args, context)`);
      continue;
    }
    const argsType = parameter.getTypeAtLocation(declaration);
    const declared = argsType.getProperties().map((property) => ({
      name: property.getName(),
      type: property.getTypeAtLocation(declaration),
      optional: property.isOptional(),
    }));
    for (const arg of step.args) {
      const target = declared.find((property) => property.name === arg.name);
      if (!target) {
        diagnostics.error(
          arg.at,
          `plug-in ${step.plugin.classname} takes no argument "${arg.name}" (it takes ${declared.map((p) => p.name).join(', ') || 'none'})`,
        );
        continue;
      }
      const valueType = bindType(arg.bind, steps);
      if (valueType !== null && !typeOf(valueType).isAssignableTo(target.type)) {
        diagnostics.error(arg.at, `plug-in ${step.plugin.classname} takes "${arg.name}" as ${target.type.getText(declaration)}, but the value is ${valueType}`);
      }
    }
    for (const property of declared) {
      if (!property.optional && !step.args.some((arg) => arg.name === property.name)) {
        diagnostics.error(step.at, `plug-in ${step.plugin.classname} needs the argument "${property.name}"`);
      }
    }
  }
}

/**
 * Built-in plug-ins ship with the generator's own runtime: its TypeScript
 * source beside the generator's source, or, in the build that `npm start`
 * runs (the console regenerates there), the declarations the build emits.
 */
function builtinSource(module: string): string {
  const source = fileURLToPath(new URL(`../runtime/${module}`, import.meta.url));
  return existsSync(source) ? source : source.replace(/\.ts$/, '.d.ts');
}

/** The TypeScript type of a value bound to an Arg, or null when it cannot be known (no types yet). */
function bindType(bind: Bind, steps: Step[]): string | null {
  switch (bind.kind) {
    case 'param':
      return 'string | number | boolean | null';
    case 'uid':
    case 'tenant':
    case 'literal':
      return 'string';
    case 'ref': {
      if (bind.target === 'plugin') return null;
      if (bind.target === 'write') return bind.column === 'insertId' ? 'number | null' : 'number';
      const target = steps.find((step): step is SqlStep => step.kind === 'sql' && step.id === bind.step);
      const column = target?.typed?.find((candidate) => candidate.name === bind.column);
      // A row that does not exist reads as null.
      return column ? `${column.tsType} | null` : null;
    }
  }
}
