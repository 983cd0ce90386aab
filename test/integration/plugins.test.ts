import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { generateProject } from '../../generator/index.js';
import type { BackendModule } from '../../runtime/index.js';
import { startServer, type TestServer } from '../support/server.js';

/**
 * A project's own plug-in: its TypeScript signature declares the arguments,
 * the generator checks every Execute against it, and tsc checks plug-in code
 * against the generated row types.
 */
const ROOT = 'test/.tmp/plugins';
let lines: string[] = [];
let server: TestServer | undefined;

const PLUGIN = `import type { Plugin } from '../../../../runtime/index.js';

/** Applies a discount to a price the database returns as an exact decimal string. */
export const discount: Plugin<{ price: string | null; percent: unknown; note?: string }, { discounted: number | null }> = (args) => ({
  discounted: args.price === null ? null : Math.round(Number(args.price) * (100 - Number(args.percent))) / 100,
});
`;

function write(file: string, text: string): void {
  mkdirSync(path.dirname(path.join(ROOT, file)), { recursive: true });
  writeFileSync(path.join(ROOT, file), text);
}

function resource(args: string): string {
  return `<Resource v="1.0">
  <Request method="GET">
    <Sql id="product" output="false">select price, name from products where product_id = $id</Sql>
    <Execute id="offer" classname="acme.Discount">
      ${args}
    </Execute>
  </Request>
</Resource>
`;
}

// The scratch project uses the repo's runtime, three folders up.
const generate = () =>
  generateProject({ root: ROOT, check: false, runtimeDir: '../../../runtime', databaseUrl: inject('databaseUrl'), log: (line) => lines.push(line) });

beforeAll(() => {
  rmSync(ROOT, { recursive: true, force: true });
  write('resources/acme/backend.xml', '<Backend><Plugin classname="acme.Discount" module="plugins/discount.ts" export="discount"/></Backend>\n');
  write('plugins/discount.ts', PLUGIN);
});
afterAll(async () => {
  await server?.close();
  rmSync(ROOT, { recursive: true, force: true });
});

describe('plug-in calls are checked against the plug-in signature', () => {
  it('generates, compiles and serves a call that fits', async () => {
    write('resources/acme/offer.xml', resource('<Arg name="price" value="$[product][0].price"/>\n      <Arg name="percent" value="$percent"/>'));
    lines = [];
    expect(await generate()).toBe(0);
    const { backends } = (await import(/* @vite-ignore */ pathToFileURL(path.resolve(ROOT, 'generated/index.ts')).href)) as { backends: BackendModule[] };
    server = await startServer(backends);
    const response = await fetch(`${server.url}/acme/v1.0/offer?id=1&percent=10`);
    expect(await response.json()).toEqual({ offer: { discounted: 22.05 } });
  });

  it('refuses an argument the plug-in does not declare, a missing one and a type that does not fit', async () => {
    write('resources/acme/offer.xml', resource('<Arg name="note" value="$[product][0].price"/>\n      <Arg name="colour" value="red"/>'));
    lines = [];
    expect(await generate()).toBe(1);
    expect(lines).toEqual([
      'resources/acme/offer.xml:4:5: plug-in acme.Discount needs the argument "price"',
      'resources/acme/offer.xml:4:5: plug-in acme.Discount needs the argument "percent"',
      'resources/acme/offer.xml:5:12: plug-in acme.Discount takes "note" as string | undefined, but the value is string | null',
      'resources/acme/offer.xml:6:12: plug-in acme.Discount takes no argument "colour" (it takes price, percent, note)',
      'xmlrest: 4 errors; nothing was written',
    ]);
  });

  it('a plug-in that misuses a generated row type does not compile', () => {
    write('resources/acme/offer.xml', resource('<Arg name="price" value="$[product][0].price"/>\n      <Arg name="percent" value="$percent"/>'));
    const tsconfig = JSON.stringify({ extends: '../../../tsconfig.json', include: ['generated', 'plugins'], exclude: [] });
    write('tsconfig.json', tsconfig);
    const tsc = () => {
      try {
        execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', `${ROOT}/tsconfig.json`], { encoding: 'utf8' });
        return '';
      } catch (error) {
        return (error as { stdout: string }).stdout;
      }
    };
    // price is DECIMAL: an exact string, not a number.
    const misuse = `import type { ProductRow } from '../generated/acme/offer.js';\nexport const total = (row: ProductRow): string => row.price.toFixed(2);\n`;
    write('plugins/total.ts', misuse);
    expect(tsc()).toContain("error TS2551: Property 'toFixed' does not exist on type 'string'");
    write('plugins/total.ts', misuse.replace('row.price.toFixed(2)', 'Number(row.price).toFixed(2)'));
    expect(tsc()).toBe('');
  });
});
