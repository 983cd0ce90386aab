import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generate, readSources, type TypeSnapshot } from '../../generator/index.js';

/**
 * README's tenant walk-through (issue 43): the error it prints is the one `npm run generate` gives when the join's
 * filter is taken out of resources/crm/notes.xml, word for word, and the file as committed generates. Against the
 * database the facts of the changed statement are asked again; here they are the committed statement's, under the
 * changed text, as the database would answer (the statement names the same tables).
 */
const FILTERED = 'inner join crm_contact c on c.contact_id = n.contact_id and c.org_id = $tenant';
const UNFILTERED = 'inner join crm_contact c on c.contact_id = n.contact_id';
const STEP = 'resources/crm/notes.xml GET notes';

function readmeError(): string {
  const readme = readFileSync('README.md', 'utf8');
  const block = /<!-- the proof's words: test\/unit\/tenant-readme\.test\.ts -->\n```text\n([^\n]+)\n```/.exec(readme);
  if (!block) throw new Error("README.md has no block of the proof's words");
  return block[1]!;
}

describe("README's tenant walk-through", () => {
  const snapshot = JSON.parse(readFileSync('generated/column-types.json', 'utf8')) as TypeSnapshot;

  it('generates as committed', () => {
    expect(readFileSync('resources/crm/notes.xml', 'utf8')).toContain(FILTERED);
    const result = generate(readSources('.', 'resources'), { types: snapshot, exists: () => false });
    expect(result.ok ? [] : result.errors).toEqual([]);
  });

  it('fails, without the join filter, with the words README shows', () => {
    const sources = readSources('.', 'resources').map((source) =>
      source.path === 'resources/crm/notes.xml' ? { ...source, text: source.text.replace(FILTERED, UNFILTERED) } : source,
    );
    const entry = snapshot[STEP]!;
    const changed = { ...entry, sql: entry.sql.replace(' and c.org_id = ?', '') };
    expect(changed.sql).not.toBe(entry.sql);
    const result = generate(sources, { types: { ...snapshot, [STEP]: changed }, exists: () => false });
    expect(result.ok ? [] : result.errors).toEqual([readmeError()]);
  });
});
