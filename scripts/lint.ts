import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { spanInBytesToSpanInCodeUnits } from '@biomejs/js-api';
import { Biome } from '@biomejs/js-api/nodejs';

/**
 * `npm run lint`: Biome's formatter and linter over the project's own
 * TypeScript and JavaScript (biome.json), run through Biome's WebAssembly
 * build, which needs no platform binary. Exits 1 on a file that is not
 * formatted or has a lint error. `npm run format` (`--fix`) rewrites the files.
 * Generated modules and golden expectations are left out: the generator
 * formats what it emits, and the golden test checks that.
 */
const fix = process.argv.includes('--fix');
const SOURCE = /\.(ts|mts|mjs|js)$/;
const LEFT_OUT = [/^generated\//, /^test\/golden\/.*\/expected\//, /^bench\/results\//, /^bench\/generated\//, /^dist\//, /^docs\//];

const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { encoding: 'utf8' })
  .split('\n')
  .filter((file) => SOURCE.test(file) && !LEFT_OUT.some((pattern) => pattern.test(file)));

const biome = new Biome();
const { projectKey } = biome.openProject('.');
biome.applyConfiguration(projectKey, JSON.parse(readFileSync('biome.json', 'utf8')) as never);

let problems = 0;
for (const file of files) {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    continue; // deleted in the working tree, still in the index
  }
  const formatted = biome.formatContent(projectKey, text, { filePath: file });
  const linted = biome.lintContent(projectKey, fix ? formatted.content : text, { filePath: file, ...(fix ? { fixFileMode: 'safeFixes' as const } : {}) });
  const errors = linted.diagnostics.filter((diagnostic) => (diagnostic as { severity?: string }).severity === 'error');
  if (fix) {
    if (linted.content !== text) writeFileSync(file, linted.content);
  } else if (formatted.content !== text) {
    problems++;
    process.stdout.write(`${file}: not formatted (npm run format)\n`);
  }
  const source = fix ? linted.content : text;
  for (const diagnostic of errors as { category?: string; description?: string; location?: { span?: [number, number] } }[]) {
    problems++;
    const span = diagnostic.location?.span ? spanInBytesToSpanInCodeUnits(diagnostic.location.span, source) : [0, 0];
    const before = source.slice(0, span[0]).split('\n');
    process.stdout.write(`${file}:${before.length}:${before.at(-1)!.length + 1}: ${diagnostic.description} (${diagnostic.category})\n`);
  }
}
biome.shutdown();
process.stdout.write(`lint: ${files.length} files, ${problems === 0 ? 'no problems' : `${problems} problem${problems === 1 ? '' : 's'}`}\n`);
process.exit(problems === 0 ? 0 : 1);
