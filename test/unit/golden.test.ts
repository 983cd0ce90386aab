import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Project } from 'ts-morph';
import { describe, expect, it } from 'vitest';
import { generate, readSources, type TypeSnapshot } from '../../generator/index.js';

/**
 * sqlc-style golden cases, one folder per generator behaviour (error-* cases
 * must fail, the others generate): test/golden/<case>/resources/<backend>/*.xml in,
 * test/golden/<case>/column-types.json (a type snapshot, optional) and
 * options.json (the generator's options, optional: `{"strict": true}`) in,
 * test/golden/<case>/expected/ out (the modules and ir.json, and
 * warnings.txt when it warns), or expected/stderr.txt for a case that must fail. `npm run test:golden:update`
 * rewrites the expectations; review the diff like code. The expected modules
 * are type-checked by `npm run typecheck`, and lab's are served in http tests.
 */
const GOLDEN = 'test/golden';
const update = process.env.UPDATE_GOLDEN === '1';
/** The version the expected modules name: fixed, so that a release does not rewrite every case's modules. */
const GOLDEN_VERSION = '0.1.0';

/** A case's own options to the generator (`options.json`, optional): `{"strict": true}` runs it as `generate --strict`. */
function optionsOf(caseDir: string): { strict?: boolean } {
  const file = path.join(caseDir, 'options.json');
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { strict?: boolean }) : {};
}

const cases = readdirSync(GOLDEN, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();

describe.each(cases)('golden case %s', (name) => {
  const caseDir = path.join(GOLDEN, name);
  const expectedDir = path.join(caseDir, 'expected');

  it('generates exactly the expected output', () => {
    const sources = readSources(caseDir, 'resources');
    const snapshot = path.join(caseDir, 'column-types.json');
    const types = existsSync(snapshot) ? (JSON.parse(readFileSync(snapshot, 'utf8')) as TypeSnapshot) : undefined;
    const result = generate(sources, {
      outDir: `${GOLDEN}/${name}/expected`,
      lockFile: `${GOLDEN}/${name}/expected/access.lock`,
      exists: () => false,
      types,
      generatorVersion: GOLDEN_VERSION,
      ...optionsOf(caseDir),
    });
    // A case's name says which it is: one that should fail and generates, or the reverse, is a regression.
    expect(result.ok, result.ok ? 'generated' : result.errors.join('\n')).toBe(!name.startsWith('error-'));
    const actual = new Map<string, string>();
    if (result.ok) {
      for (const [file, text] of result.files) actual.set(path.relative(expectedDir, file), text);
      actual.set('ir.json', JSON.stringify(result.project, null, 2) + '\n');
      // What npm run generate prints beside its output: a case that warns says so in a file of its own.
      if (result.warnings.length > 0) actual.set('warnings.txt', result.warnings.join('\n') + '\n');
    } else {
      actual.set('stderr.txt', result.errors.join('\n') + '\n');
    }
    if (update) {
      rmSync(expectedDir, { recursive: true, force: true });
      for (const [file, text] of actual) {
        mkdirSync(path.dirname(path.join(expectedDir, file)), { recursive: true });
        writeFileSync(path.join(expectedDir, file), text);
      }
    }
    expect(existsSync(expectedDir), `${expectedDir} is missing: run npm run test:golden:update`).toBe(true);
    const expectedFiles = (readdirSync(expectedDir, { recursive: true, withFileTypes: true }) as import('node:fs').Dirent[])
      .filter((entry) => entry.isFile())
      .map((entry) => path.relative(expectedDir, path.join(entry.parentPath, entry.name)))
      .sort();
    expect([...actual.keys()].sort()).toEqual(expectedFiles);
    for (const [file, text] of actual) {
      expect(text, file).toBe(readFileSync(path.join(expectedDir, file), 'utf8'));
    }
  });

  it('generates the same bytes, in the same order, from two runs over shuffled input', () => {
    const sources = readSources(caseDir, 'resources');
    const flatten = (result: ReturnType<typeof generate>) => (result.ok ? [...result.files] : result.errors);
    const first = flatten(generate(sources, { outDir: 'out', ...optionsOf(caseDir) }));
    const second = flatten(generate([...sources].reverse(), { outDir: 'out', ...optionsOf(caseDir) }));
    expect(second).toStrictEqual(first);
  });

  it('emits modules that are already formatted: the TypeScript formatter changes nothing', () => {
    expect(existsSync(expectedDir), `${expectedDir} is missing: run npm run test:golden:update`).toBe(true);
    const morph = new Project({ useInMemoryFileSystem: true });
    const modules = (readdirSync(expectedDir, { recursive: true }) as string[]).filter((file) => file.endsWith('.ts'));
    for (const file of modules) {
      const text = readFileSync(path.join(expectedDir, file), 'utf8');
      const source = morph.createSourceFile(`/${file}`, text, { overwrite: true });
      source.formatText({ indentSize: 2, convertTabsToSpaces: true, ensureNewLineAtEndOfFile: true });
      expect(source.getFullText(), file).toBe(text);
    }
  });
});
