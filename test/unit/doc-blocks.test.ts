import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectation, shellBlocks, unmet } from '../support/doc-blocks.js';

/** The rules test/integration/guide-blocks.test.ts runs the documentation's shell blocks by. */
function page(text: string): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'doc-blocks-')), 'page.md');
  writeFileSync(file, text);
  return file;
}

describe('a page’s shell blocks', () => {
  it('takes the # lines right under a command as what it prints, a trailing status or JSON too, and other comments as prose', () => {
    const [block] = shellBlocks(
      page(
        [
          '```sh',
          '# prose before a command',
          'curl -i http://x/a     # 403, no credentials',
          'curl http://x/b        # every session of the user',
          '# {"ended":1}',
          '',
          '# prose after a blank line',
          'echo a \\',
          '  b',
          '# a b',
          '```',
        ].join('\n'),
      ),
    );
    expect(block!.commands.map((command) => [command.text, command.expect.map((expected) => expected.written)])).toEqual([
      ['curl -i http://x/a     # 403, no credentials', ['403, no credentials']],
      ['curl http://x/b        # every session of the user', ['{"ended":1}']],
      ['echo a \\\n  b', ['a b']],
    ]);
  });

  it('reads a marker on the line before the fence, and leaves other languages alone', () => {
    const blocks = shellBlocks(
      page(['<!-- not run: needs a collector -->', '```sh', 'npm start', '```', '```xml', '<a/>', '```', '```sh', 'ls', '```'].join('\n')),
    );
    expect(blocks.map((block) => [block.first, block.skipped])).toEqual([
      ['npm start', { kind: 'not run', reason: 'needs a collector' }],
      ['ls', undefined],
    ]);
  });
});

describe('an expectation', () => {
  it('checks a status, and a text within one line with ... for any run of characters, the rest literal', () => {
    const expected = expectation('201 {"token":"eyJ...","refresh_token":"xrr_..."}');
    expect(expected.status).toBe(201);
    expect(unmet(expected, '{"token":"eyJabc.def","refresh_token":"xrr_1"}', 201)).toBeUndefined();
    expect(unmet(expected, '{"token":"eyJabc.def","refresh_token":"xrr_1"}', 200)).toBe('status 200, not 201');
    expect(unmet(expected, '{"token":"eyJabc","type":"Bearer"}', 201)).toMatch(/^no line holds/);
    // Literal: a dot is a dot, brackets are brackets; ... never crosses a line.
    expect(unmet(expectation('{"a":[1]}'), '{"a":[11]}', undefined)).toMatch(/^no line holds/);
    expect(unmet(expectation('a...b'), 'a\nb', undefined)).toMatch(/^no line holds/);
    expect(unmet(expectation('403'), 'anything', undefined)).toBe('status none (no curl ran), not 403');
    // A comma after the status begins prose, not text to find.
    expect(unmet(expectation('403, no credentials'), '{"message":"Forbidden"}', 403)).toBeUndefined();
  });
});
