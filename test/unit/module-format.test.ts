import { describe, expect, it } from 'vitest';
import { MODULE_FORMAT, OLDEST_MODULE_FORMAT } from '../../runtime/contract.js';
import { checkModuleFormat, ModuleFormatError } from '../../runtime/module-format.js';
import { XMLREST_VERSION } from '../../runtime/version.js';

/** The verdict on a project index's stamp (runtime/module-format.ts); npm start's refusal is tested over the built server (module-format.test.ts). */
describe('checkModuleFormat', () => {
  it('serves every format from the oldest it serves to its own, whoever made them', () => {
    for (let format = OLDEST_MODULE_FORMAT; format <= MODULE_FORMAT; format++) {
      expect(() => checkModuleFormat({ generator: { version: '0.0.1', format } }, '0.1.0')).not.toThrow();
    }
  });

  it('serves modules made before the stamp as format 1', () => {
    expect(() => checkModuleFormat({}, '0.1.0')).not.toThrow();
  });

  it('refuses a future format, naming both versions and the command that fixes it', () => {
    const refusal = () => checkModuleFormat({ generator: { version: '9.0.0', format: MODULE_FORMAT + 1 } }, '0.1.0');
    const served = (OLDEST_MODULE_FORMAT as number) === MODULE_FORMAT ? `format ${MODULE_FORMAT}` : `formats ${OLDEST_MODULE_FORMAT} to ${MODULE_FORMAT}`;
    expect(refusal).toThrow(ModuleFormatError);
    expect(refusal).toThrow(
      `the modules in generated/ were made by xmlrest 9.0.0 (module format ${MODULE_FORMAT + 1}), and xmlrest 0.1.0 serves ${served}: ` +
        'run `npx xmlrest generate` to make them again with xmlrest 0.1.0 (then `npm run build` before `npm start`)',
    );
  });

  it('refuses a format older than it serves, and a stamp that is not one', () => {
    expect(() => checkModuleFormat({ generator: { version: '0.0.1', format: OLDEST_MODULE_FORMAT - 1 } })).toThrow(
      `made by xmlrest 0.0.1 (module format ${OLDEST_MODULE_FORMAT - 1}), and xmlrest ${XMLREST_VERSION} serves`,
    );
    for (const generator of [{ version: 1, format: '1' }, { format: 1.5 }, null]) {
      expect(() => checkModuleFormat({ generator } as never)).toThrow(ModuleFormatError);
    }
  });

  it('names the installed package version as its own', async () => {
    const { readFileSync } = await import('node:fs');
    expect(XMLREST_VERSION).toBe((JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version);
  });
});
