import { type GeneratedIndex, MODULE_FORMAT, OLDEST_MODULE_FORMAT } from './contract.js';
import { XMLREST_VERSION } from './version.js';

/** Modules of a shape this runtime cannot serve: said to the person starting it, with the command that fixes it. */
export class ModuleFormatError extends Error {}

/** What fixes it: the generator installed beside this runtime makes modules of its format. */
export const REGENERATE = 'npx xmlrest generate';

/**
 * Refuses modules of a format this runtime does not serve, before anything reads them: a future format may mean
 * fields it would misread, an older one fields it no longer reads. Modules made before the stamp existed have the
 * shape of format 1. Runs at start (scripts/serve.ts), on each reload of generated/ (scripts/project-host.ts: dev and
 * the console), and in the commands that read the modules (scripts/cli/generated-backends.ts).
 */
export function checkModuleFormat(index: Pick<GeneratedIndex, 'generator'>, runtimeVersion: string = XMLREST_VERSION): void {
  const stamp = index.generator as { version?: unknown; format?: unknown } | null | undefined;
  const format = stamp === undefined ? 1 : stamp?.format;
  if (typeof format === 'number' && Number.isInteger(format) && format >= OLDEST_MODULE_FORMAT && format <= MODULE_FORMAT) return;
  const version = typeof stamp?.version === 'string' ? stamp.version : 'an unknown version';
  const served = (OLDEST_MODULE_FORMAT as number) === MODULE_FORMAT ? `format ${MODULE_FORMAT}` : `formats ${OLDEST_MODULE_FORMAT} to ${MODULE_FORMAT}`;
  throw new ModuleFormatError(
    `the modules in generated/ were made by xmlrest ${version} (module format ${String(format)}), and xmlrest ${runtimeVersion} serves ${served}: ` +
      `run \`${REGENERATE}\` to make them again with xmlrest ${runtimeVersion} (then \`npm run build\` before \`npm start\`)`,
  );
}
