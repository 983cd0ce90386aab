import { describe, expect, it } from 'vitest';
import { setAuthAttribute } from '../../generator/index.js';

const FILE = `<?xml version="1.0" encoding="UTF-8"?>
<!-- A comment with <Resource auth="not-this"> inside -->
<Resource xmlns="urn:xmlrest:resource:1.0"
          v="1.0" auth='customer'>
  <Desc>Keep   this   spacing</Desc>
  <!-- and this comment -->
  <Request method="GET"><Sql id="a">select 1 as a where 'auth="x"' = $p</Sql></Request>
</Resource>
`;

describe('setAuthAttribute', () => {
  it('changes only the value of the root element auth attribute, keeping its quotes', () => {
    const edited = setAuthAttribute(FILE, 'admin');
    expect(edited).toBe(FILE.replace("auth='customer'", "auth='admin'"));
  });

  it('removes the attribute and the white space before it, and adds it back after v', () => {
    const cleared = setAuthAttribute(FILE, null);
    expect(cleared).toBe(FILE.replace(" auth='customer'", ''));
    expect(setAuthAttribute(cleared, 'staff')).toBe(FILE.replace("auth='customer'", 'auth="staff"'));
    expect(setAuthAttribute(cleared, null)).toBe(cleared);
  });

  it('adds the attribute to a tag without v, and refuses what is not a role name', () => {
    expect(setAuthAttribute('<Resource>\n</Resource>', 'x')).toBe('<Resource auth="x">\n</Resource>');
    expect(() => setAuthAttribute(FILE, 'a" onload="x')).toThrow('not an auth value');
  });
});
