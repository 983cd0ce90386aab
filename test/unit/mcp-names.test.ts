import { describe, expect, it } from 'vitest';
import { generate } from '../../generator/index.js';

/** mcp="on" (docs/internals/contract.md §16): the attribute, and the tool names its routes would get, checked at generate. */
const NS = 'xmlns="urn:xmlrest:resource:1.0"';
const backend = (attributes: string) => ({ path: 'resources/agents/backend.xml', text: `<Backend ${NS} auth_scheme="Basic" ${attributes}/>` });
const resource = (name: string) => ({
  path: `resources/agents/${name}.xml`,
  text: `<Resource ${NS} v="1.0" auth="staff">\n  <Request method="GET"><Sql id="rows">select 1 as one</Sql></Request>\n</Resource>\n`,
});

describe('mcp on a backend', () => {
  it('is on or off, off unless said', () => {
    expect(generate([backend('mcp="yes"'), resource('notes')])).toEqual({
      ok: false,
      errors: ['resources/agents/backend.xml:1:63: mcp is on or off, not "yes"'],
    });
    const off = generate([backend(''), resource('notes')]);
    expect(off.ok && off.files.get('generated/agents/index.ts')).not.toContain('mcp:');
    const on = generate([backend('mcp="on"'), resource('notes')]);
    expect(on.ok && on.files.get('generated/agents/index.ts')).toContain('mcp: true,');
  });

  it("refuses a route whose tool's name would pass MCP's 128 characters, at its file, and only when MCP is on", () => {
    const long = 'n'.repeat(115);
    const refused = generate([backend('mcp="on"'), resource(long)]);
    expect(refused).toEqual({
      ok: false,
      errors: [
        `resources/agents/${long}.xml:1:1: mcp="on": the tool of GET ${long} v1.0 would be named "agents_${long}_v1_0_get", longer than MCP's 128 characters: shorten the resource's name`,
      ],
    });
    expect(generate([backend(''), resource(long)]).ok).toBe(true);
    expect(generate([backend('mcp="on"'), resource('n'.repeat(110))]).ok).toBe(true);
  });
});
