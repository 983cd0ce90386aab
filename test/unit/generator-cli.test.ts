import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { generateProject, newGeneratorCache } from '../../generator/index.js';

/** `npm run generate` on a scratch project: writes only changes, removes stale modules, --check, atomic failure. */
const ROOT = 'test/.tmp/cli';
let lines: string[] = [];
const generate = (check = false) => generateProject({ root: ROOT, check, log: (line) => lines.push(line) });

function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true }) as import('node:fs').Dirent[]) {
    if (entry.isFile()) out[path.relative(dir, path.join(entry.parentPath, entry.name))] = readFileSync(path.join(entry.parentPath, entry.name), 'utf8');
  }
  return out;
}

beforeEach(() => {
  rmSync(ROOT, { recursive: true, force: true });
  mkdirSync(ROOT, { recursive: true });
  cpSync('resources/shop', path.join(ROOT, 'resources/shop'), { recursive: true });
  // The repo's type snapshot: its shop entries type the scratch project exactly as the repo's modules.
  mkdirSync(path.join(ROOT, 'generated'), { recursive: true });
  cpSync('generated/column-types.json', path.join(ROOT, 'generated/column-types.json'));
  lines = [];
});
afterEach(() => rmSync(ROOT, { recursive: true, force: true }));

describe('generate', () => {
  it('writes the modules, then finds nothing to change', async () => {
    expect(await generate()).toBe(0);
    expect(Object.keys(snapshot(path.join(ROOT, 'generated'))).sort()).toEqual([
      'column-types.json',
      'index.ts',
      'openapi.json',
      'shop/account.ts',
      'shop/index.ts',
      'shop/orders.ts',
      'shop/orders@2.0.ts',
      'shop/products.ts',
      'shop/products@2.0.ts',
      'shop/products@3.0.ts',
      'shop/report.ts',
      'shop/reviews.ts',
      'shop/token.ts',
    ]);
    // The same resources give the same bytes as the committed generated/ of the repo.
    expect(readFileSync(path.join(ROOT, 'generated/shop/orders.ts'), 'utf8')).toBe(readFileSync('generated/shop/orders.ts', 'utf8'));
    const mtime = statSync(path.join(ROOT, 'generated/shop/orders.ts')).mtimeMs;
    lines = [];
    expect(await generate()).toBe(0);
    expect(lines).toEqual(['xmlrest: 14 files from 10 resource files, 0 changed']);
    expect(statSync(path.join(ROOT, 'generated/shop/orders.ts')).mtimeMs).toBe(mtime);
    expect(await generate(true)).toBe(0);
  });

  it('with the cache the dev loop keeps, still reads every file someone else changed, a hand edit of a module included', async () => {
    const cache = newGeneratorCache();
    const dev = () => generateProject({ root: ROOT, check: false, cache, log: (line) => lines.push(line) });
    expect(await dev()).toBe(0);
    const module = path.join(ROOT, 'generated/shop/orders.ts');
    const generated = readFileSync(module, 'utf8');
    // The same size: only the modification time tells the edit apart. A save a second later, whatever the
    // granularity of the file system's clock (a coarse one could give a save within its tick the same time).
    const written = statSync(module).mtime;
    writeFileSync(module, generated.replace('DO NOT EDIT', 'DO NOT edit'));
    utimesSync(module, written.getTime() / 1000 + 1, written.getTime() / 1000 + 1);
    const resource = path.join(ROOT, 'resources/shop/report.xml');
    writeFileSync(resource, readFileSync(resource, 'utf8').replace('auth="admin"', 'auth="manager"'));
    lines = [];
    expect(await dev()).toBe(0);
    expect(readFileSync(module, 'utf8')).toBe(generated);
    expect(lines).toContain('update generated/shop/orders.ts');
    expect(lines).toContain('update generated/shop/report.ts');
    lines = [];
    expect(await dev()).toBe(0);
    expect(lines).toEqual(['xmlrest: 14 files from 10 resource files, 0 changed']);
  });

  it('with the dev cache, every run writes what a run without it would, whatever was edited', async () => {
    const cache = newGeneratorCache();
    const dev = () => generateProject({ root: ROOT, check: false, cache, log: () => {} });
    const file = (name: string) => path.join(ROOT, 'resources/shop', name);
    const edit = (name: string, from: string, to: string) => {
      const text = readFileSync(file(name), 'utf8');
      expect(text, name).toContain(from);
      writeFileSync(file(name), text.replace(from, to));
    };
    // Each edit reaches another of the cache's parts: scans, modules, the backend's index, the OpenAPI paths.
    const edits: [string, () => void, number][] = [
      ['a copy of a resource (the same statement twice)', () => cpSync(file('products.xml'), file('catalog.xml')), 0],
      ['the statement of one of the two', () => edit('catalog.xml', 'order by product_id', 'order by name'), 0],
      ['a description', () => edit('products.xml', 'The product list', 'Every product'), 0],
      ['a backend setting', () => edit('backend.xml', 'issuer="shop"', 'issuer="store"'), 0],
      ['a role', () => edit('report.xml', 'auth="admin"', 'auth="manager"'), 0],
      ['a removed resource', () => rmSync(file('products@2.0.xml')), 0],
      ['an error', () => edit('catalog.xml', '<Sql id="products"', '<Sql id="products" cache="yes"'), 1],
      ['its repair', () => edit('catalog.xml', ' cache="yes"', ''), 0],
    ];
    expect(await dev()).toBe(0);
    for (const [what, change, status] of edits) {
      change();
      expect(await dev(), what).toBe(status);
      if (status !== 0) continue;
      lines = [];
      expect(await generate(true), `${what}: ${lines.join('; ')}`).toBe(0);
    }
  });

  it('--check writes nothing and exits 1 naming every file that would change', async () => {
    await generate();
    const before = snapshot(path.join(ROOT, 'generated'));
    const report = path.join(ROOT, 'resources/shop/report.xml');
    writeFileSync(report, readFileSync(report, 'utf8').replace('auth="admin"', 'auth="manager"'));
    rmSync(path.join(ROOT, 'resources/shop/products@2.0.xml'));
    writeFileSync(path.join(ROOT, 'generated/shop/stale.ts'), '// left over\n');
    lines = [];
    expect(await generate(true)).toBe(1);
    expect(lines).toEqual([
      'update access.lock',
      'update generated/column-types.json',
      'update generated/openapi.json',
      'update generated/shop/index.ts',
      'update generated/shop/report.ts',
      'remove generated/shop/products@2.0.ts',
      'remove generated/shop/stale.ts',
      // Who may call what changed: the lines, as a review reads them.
      '  access.lock: - shop /shop/v1.0/report GET admin',
      '  access.lock: - shop /shop/v2.0/products GET public',
      '  access.lock: + shop /shop/v1.0/report GET manager',
      'xmlrest: generated/ is stale (7 files); run npm run generate',
    ]);
    expect(snapshot(path.join(ROOT, 'generated'))).toEqual({ ...before, 'shop/stale.ts': '// left over\n' });
    expect(await generate()).toBe(0);
    expect(existsSync(path.join(ROOT, 'generated/shop/stale.ts'))).toBe(false);
    expect(readFileSync(path.join(ROOT, 'generated/shop/report.ts'), 'utf8')).toContain("const REPORT_GET_ROLES = ['manager'] as const;");
  });

  it('reports every error with file:line:col and leaves generated/ untouched', async () => {
    await generate();
    const before = snapshot(path.join(ROOT, 'generated'));
    writeFileSync(path.join(ROOT, 'resources/shop/broken.xml'), '<Resource v="1.0">\n  <Request method="GET">\n    <Sql id="a">select 1 as a</Sq>\n');
    writeFileSync(
      path.join(ROOT, 'resources/shop/products.xml'),
      readFileSync('resources/shop/products.xml', 'utf8').replace('<Sql id="products"', '<Sql id="products" cache="yes"'),
    );
    writeFileSync(
      path.join(ROOT, 'resources/shop/public.xml'),
      '<Resource v="1.0"><Request method="GET"><Sql id="me">select $uid as id</Sql></Request></Resource>',
    );
    lines = [];
    expect(await generate()).toBe(1);
    expect(lines).toEqual([
      "resources/shop/broken.xml:3:30: malformed XML: expected closing tag 'Sql' (opened in line 3, col 5) instead of closing tag 'Sq'.",
      'resources/shop/products.xml:5:24: unknown attribute on Sql: cache',
      'resources/shop/public.xml:1:61: step "me" uses $uid but the resource has no auth attribute: $uid is the authenticated user\'s id',
      'xmlrest: 3 errors; nothing was written',
    ]);
    expect(snapshot(path.join(ROOT, 'generated'))).toEqual(before);
  });

  it('reports a resource file outside a backend folder instead of ignoring it', async () => {
    writeFileSync(path.join(ROOT, 'resources/loose.xml'), '<Resource v="1.0"/>');
    expect(await generate()).toBe(1);
    expect(lines[0]).toBe(
      'resources/loose.xml:1:1: resource files live at resources/<backend>/<name>.xml, with a lower-case backend name: resources/loose.xml',
    );
  });

  it('refuses a plug-in module that leads outside the project through a symbolic link, and takes one that stays inside', async () => {
    const outside = path.resolve('test/.tmp/cli-outside');
    rmSync(outside, { recursive: true, force: true });
    mkdirSync(outside, { recursive: true });
    try {
      const plugin = "export const x = (): string => 'x';\n";
      writeFileSync(path.join(outside, 'x.ts'), plugin);
      mkdirSync(path.join(ROOT, 'plugins/own'), { recursive: true });
      writeFileSync(path.join(ROOT, 'plugins/own/y.ts'), plugin);
      // A folder and a file that look like the project's own, and lead out of it; and a link that stays inside.
      symlinkSync(outside, path.join(ROOT, 'plugins/shared'));
      symlinkSync(path.join(outside, 'x.ts'), path.join(ROOT, 'plugins/linked.ts'));
      symlinkSync(path.resolve(ROOT, 'plugins/own'), path.join(ROOT, 'plugins/inside'));
      const backend = path.join(ROOT, 'resources/shop/backend.xml');
      const declarations = [
        '<Plugin classname="a.Folder" module="plugins/shared/x.ts" export="x"/>',
        '<Plugin classname="a.File" module="plugins/linked.ts" export="x"/>',
        '<Plugin classname="a.Inside" module="plugins/inside/y.ts" export="x"/>',
      ];
      writeFileSync(backend, readFileSync(backend, 'utf8').replace('</Backend>', `  ${declarations.join('\n  ')}\n</Backend>`));
      /** Where the module attribute of the declaration naming `classname` is. */
      const at = (classname: string) => {
        const lines = readFileSync(backend, 'utf8').split('\n');
        const line = lines.findIndex((text) => text.includes(classname));
        return `resources/shop/backend.xml:${line + 1}:${lines[line]!.indexOf('module=') + 1}`;
      };
      expect(await generate()).toBe(1);
      expect(lines).toEqual([
        `${at('a.Folder')}: module leads outside the project through a symbolic link: plugins/shared/x.ts (keep plug-ins inside the project)`,
        `${at('a.File')}: module leads outside the project through a symbolic link: plugins/linked.ts (keep plug-ins inside the project)`,
        'xmlrest: 2 errors; nothing was written',
      ]);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });
});
