import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { docsSection } from '../support/docs-section.js';

/**
 * generated/openapi.d.ts types a client (docs/internals/contract.md §13): docs/guides/openapi-and-typed-client.md's
 * openapi-fetch call of the demo,
 * as written there, compiles with the project's own compiler; the same call with a wrong body, or a GET
 * without its required parameter, does not, and the compiler says where.
 */
const DIR = 'test/.tmp/typed-client';

function readmeClient(): string {
  const section = docsSection('docs/guides/openapi-and-typed-client.md', '## A typed client');
  const block = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error('docs/guides/openapi-and-typed-client.md has no ts block under "## A typed client"');
  // The guide's client sits at the project root; this one three folders down.
  return block.replace("from './generated/openapi.js'", "from '../../../generated/openapi.js'");
}

async function compile(name: string, text: string): Promise<{ code: number; output: string }> {
  mkdirSync(DIR, { recursive: true });
  writeFileSync(path.join(DIR, `${name}.ts`), text);
  writeFileSync(path.join(DIR, `${name}.tsconfig.json`), JSON.stringify({ extends: '../../../tsconfig.json', files: [`${name}.ts`] }));
  try {
    const { stdout } = await promisify(execFile)(path.resolve('node_modules/.bin/tsc'), ['--noEmit', '-p', path.join(DIR, `${name}.tsconfig.json`)]);
    return { code: 0, output: stdout };
  } catch (error) {
    const failed = error as { code: number; stdout: string };
    return { code: failed.code, output: failed.stdout };
  }
}

afterAll(() => rmSync(DIR, { recursive: true, force: true }));

describe('a typed client from generated/openapi.d.ts', () => {
  const client = readmeClient();

  it('compiles the guide’s call as written', async () => {
    expect(client).toContain("shop.POST('/shop/v1.0/orders'");
    expect(await compile('right', client)).toEqual({ code: 0, output: '' });
  });

  it('refuses a body of the wrong type and a missing query parameter, naming each line', async () => {
    const wrong = client
      .replace('body: { product_id: 1, quantity: 2 }', "body: { product_id: 'one', quantity: 2 }")
      .replace("{ params: { query: { max_price: '10' } } }", '{}');
    expect(wrong).not.toBe(client);
    const { code, output } = await compile('wrong', wrong);
    expect(code).not.toBe(0);
    const lines = wrong.split('\n');
    const at = (needle: string) => lines.findIndex((line) => line.includes(needle)) + 1;
    expect(output).toContain(`wrong.ts(${at("product_id: 'one'")},`);
    expect(output).toMatch(/Type 'string' is not assignable to type 'number'/);
    expect(output).toContain(`wrong.ts(${at("shop.GET('/shop/v2.0/products', {})")},`);
    // Those two, and nothing else.
    expect(output.split('\n').filter((line) => /\.ts\(\d+,\d+\): error/.test(line))).toHaveLength(2);
  });
});
