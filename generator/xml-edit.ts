import { endOfStartTag } from './parse.js';

/**
 * Sets or clears the `auth` attribute of a resource file's root element by
 * editing the text of its start tag alone: comments, order, quoting and
 * formatting of everything else stay byte for byte as they were.
 */
const ROLE = /^[A-Za-z0-9_.:-]{1,64}$/;

export function isRoleName(role: string): boolean {
  return ROLE.test(role);
}

/** An `auth` value: role names separated by single spaces, or `*` (docs/contract.md §8). */
function isAuthValue(value: string): boolean {
  return value === '*' || value.split(' ').every((word) => ROLE.test(word));
}

export function setAuthAttribute(xml: string, role: string | null): string {
  if (role !== null && !isAuthValue(role)) throw new Error(`not an auth value: ${role}`);
  const start = rootStart(xml);
  const end = startTagEnd(xml, start);
  const tag = xml.slice(start, end);
  // An attribute named exactly auth, with either quote, preceded by white space.
  const existing = /(\s+)auth(\s*=\s*)(["'])[^"']*\3/.exec(tag);
  let edited: string;
  if (existing) {
    edited =
      role === null
        ? tag.slice(0, existing.index) + tag.slice(existing.index + existing[0].length)
        : tag.slice(0, existing.index) + `${existing[1]}auth${existing[2]}${existing[3]}${role}${existing[3]}` + tag.slice(existing.index + existing[0].length);
  } else if (role === null) {
    edited = tag;
  } else {
    // After the version attribute when there is one, which is where people write it.
    const version = /\sv\s*=\s*(["'])[^"']*\1/.exec(tag);
    const at = version ? version.index + version[0].length : tag.length - (tag.endsWith('/>') ? 2 : 1);
    edited = `${tag.slice(0, at)} auth="${role}"${tag.slice(at)}`;
  }
  return xml.slice(0, start) + edited + xml.slice(end);
}

/** Where the root element's start tag begins: past the XML declaration, comments and PIs. */
function rootStart(xml: string): number {
  let i = 0;
  while (i < xml.length) {
    const open = xml.indexOf('<', i);
    if (open === -1) break;
    if (xml.startsWith('<?', open)) i = xml.indexOf('?>', open) + 2;
    else if (xml.startsWith('<!--', open)) i = xml.indexOf('-->', open) + 3;
    else if (xml.startsWith('<!', open)) throw new Error('document type declarations are not supported');
    else return open;
    if (i < 2) break;
  }
  throw new Error('no root element');
}

function startTagEnd(xml: string, start: number): number {
  const end = endOfStartTag(xml, start);
  if (xml[end - 1] !== '>') throw new Error('unterminated start tag');
  return end;
}
