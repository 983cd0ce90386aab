import { describe, expect, it } from 'vitest';
import { authAttributes, setAuthAttribute } from '../../generator/index.js';

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
    expect(() => setAuthAttribute(FILE, 'a" onload="x')).toThrow('auth is role names');
  });

  it('refuses a list with no role name in it, on the resource and on a method: it is never public', () => {
    for (const empty of ['', ' ', '\t \n']) expect(() => setAuthAttribute(FILE, empty)).toThrow(/^auth holds no role name$/);
    for (const empty of [' ', '\t']) expect(() => setAuthAttribute(FILE, empty, 'GET')).toThrow(/^auth holds no role name$/);
  });

  it('writes the canonical list: one space between roles, each once', () => {
    expect(setAuthAttribute(FILE, ' b  a\tb ')).toBe(FILE.replace("auth='customer'", "auth='b a'"));
  });
});

const METHODS = `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0" auth="customer">
  <!-- <Request method="GET" auth="not-this"> -->
  <Request method="GET"><Sql id="a"><![CDATA[select '<Request method="POST">' as a]]></Sql></Request>
  <Request status="201" method='post' auth='admin'>
    <Sql id="b">select 1 as b</Sql>
  </Request>
  <Request method="DELETE" status="200"/>
</Resource>
`;

describe('setAuthAttribute on a method (a Request own auth, docs/internals/contract.md §8)', () => {
  it('adds a method rule after its method attribute, public as auth=""', () => {
    expect(setAuthAttribute(METHODS, 'a b', 'GET')).toBe(METHODS.replace('<Request method="GET">', '<Request method="GET" auth="a b">'));
    expect(setAuthAttribute(METHODS, '', 'GET')).toBe(METHODS.replace('<Request method="GET">', '<Request method="GET" auth="">'));
    expect(setAuthAttribute(METHODS, '*', 'DELETE')).toBe(
      METHODS.replace('<Request method="DELETE" status="200"/>', '<Request method="DELETE" auth="*" status="200"/>'),
    );
  });

  it('changes or removes the rule of the method named in any letter case, and nothing else', () => {
    expect(setAuthAttribute(METHODS, 'admin x', 'POST')).toBe(METHODS.replace("auth='admin'", "auth='admin x'"));
    expect(setAuthAttribute(METHODS, null, 'POST')).toBe(METHODS.replace(" auth='admin'", ''));
    expect(setAuthAttribute(METHODS, null, 'GET')).toBe(METHODS);
    expect(() => setAuthAttribute(METHODS, 'x', 'PATCH')).toThrow('no PATCH Request');
  });

  it('reads the rules as written: the resource, and the methods that have their own', () => {
    expect(authAttributes('m.xml', METHODS)).toEqual({ resource: 'customer', requests: { POST: 'admin' }, methods: ['GET', 'POST', 'DELETE'] });
    expect(authAttributes('m.xml', setAuthAttribute(METHODS, '', 'GET')).requests).toEqual({ GET: '', POST: 'admin' });
  });
});
