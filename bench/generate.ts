import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { generateProject, newGeneratorCache } from '../generator/index.js';

/**
 * Generation speed (issues 3 and 6): N synthetic resources in a scratch
 * project, a full run from cold (a fresh process would add ~0.6 s to load
 * ts-morph), and a run after one changed file with the cache `npm run dev` keeps
 * (the median of three successive changes).
 */
const ROOT = '.xmlrest/bench-generate';

function resource(i: number, word: string): string {
  return `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0"${i % 2 === 0 ? ' auth="member"' : ''}>
  <Desc>Synthetic resource ${i}</Desc>
  <Request method="GET">
    <Sql id="rows">select id, label, '${word}' as word from items where owner = ${i % 2 === 0 ? '$uid' : '$owner'} and kind = $kind limit $n</Sql>
  </Request>
  <Request method="POST" status="201">
    <Sql id="added">insert into items (owner, label) values ($owner, $label)</Sql>
    <Sql id="row">select id, label from items where id = $[added][0].insertId</Sql>
  </Request>
</Resource>
`;
}

export interface GenerationTiming {
  resources: number;
  fullMs: number;
  oneFileMs: number;
}

export async function measureGeneration(sizes: readonly number[]): Promise<GenerationTiming[]> {
  const timings: GenerationTiming[] = [];
  for (const size of sizes) {
    rmSync(ROOT, { recursive: true, force: true });
    mkdirSync(path.join(ROOT, 'resources/bench'), { recursive: true });
    writeFileSync(path.join(ROOT, 'resources/bench/backend.xml'), '<Backend xmlns="urn:xmlrest:resource:1.0" auth_scheme="Bearer"/>\n');
    writeFileSync(
      path.join(ROOT, 'resources/bench/token.xml'),
      `<Resource v="1.0"><Request method="POST" status="201"><Sql id="q" output="false">select '1' as sub, 'member' as aud</Sql><Execute id="token" classname="xmlrest.auth.TokenGenerator"><Arg name="sub" value="$[q][0].sub"/><Arg name="aud" value="$[q][0].aud"/></Execute></Request></Resource>\n`,
    );
    for (let i = 0; i < size; i++) writeFileSync(path.join(ROOT, `resources/bench/r${i}.xml`), resource(i, 'one'));
    const cache = newGeneratorCache();
    const options = { root: ROOT, check: false, runtimeDir: '../../runtime', cache, log: () => {} };
    let started = performance.now();
    if ((await generateProject(options)) !== 0) throw new Error('generation failed');
    const fullMs = performance.now() - started;
    // A dev session changes one file after another: the median of three changes, each to another file.
    const oneFile: number[] = [];
    for (let change = 0; change < 3; change++) {
      writeFileSync(path.join(ROOT, `resources/bench/r${change}.xml`), resource(change, `changed${change}`));
      started = performance.now();
      if ((await generateProject(options)) !== 0) throw new Error('generation failed');
      oneFile.push(performance.now() - started);
    }
    timings.push({ resources: size, fullMs, oneFileMs: oneFile.sort((a, b) => a - b)[1]! });
    // openapi.d.ts is typed on a worker thread after each run (generator/project.ts): done before the folder goes.
    await cache.clientTypes.pending;
  }
  rmSync(ROOT, { recursive: true, force: true });
  return timings;
}

/** Writes `count` synthetic resources into `dir` (a backend folder), for the start-time measurement too. */
export function writeSyntheticResources(dir: string, count: number): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'backend.xml'), '<Backend xmlns="urn:xmlrest:resource:1.0" auth_scheme="Bearer"/>\n');
  for (let i = 0; i < count; i++) writeFileSync(path.join(dir, `r${i}.xml`), resource(i, 'one'));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const sizes = (process.argv[2] ?? '10,100,1000').split(',').map(Number);
  const timings = await measureGeneration(sizes);
  const rows = timings.map((t) => `| ${t.resources} | ${Math.round(t.fullMs)} ms | ${Math.round(t.oneFileMs)} ms |`);
  process.stdout.write(['| resources | full run (cold, in process) | one changed file (dev cache) |', '|---|---|---|', ...rows].join('\n') + '\n');
}
