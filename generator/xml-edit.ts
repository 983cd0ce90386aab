import { authText, type HttpMethod, parseAuth } from '../runtime/contract.js';
import { Diagnostics } from './diagnostics.js';
import { endOfStartTag, parseXml } from './parse.js';

/**
 * Edits of a resource file's `auth` attributes (docs/internals/contract.md §8): the
 * resource's own, on the root element, and a Request's own, which replaces
 * it for that method. Only the text of the one start tag changes: comments,
 * order, quoting and formatting of everything else stay byte for byte as
 * they were.
 */

/**
 * Sets (`auth` a value) or removes (`auth` null) the `auth` attribute of the
 * root element, or of the Request for `method`. The value is checked by the
 * rule every door shares (`parseAuth`) and written as its canonical text:
 * the roles separated by one space, `*`, or, on a Request, `""` (public).
 * Removing a Request's own `auth` makes the method inherit the resource's.
 */
export function setAuthAttribute(xml: string, auth: string | null, method?: HttpMethod): string {
  let value: string | null = null;
  if (auth !== null) {
    const checked = parseAuth(auth, method ? 'Request' : 'Resource');
    if (!checked.ok) throw new Error(checked.message);
    value = authText(checked.access);
  }
  const tag = method ? requestTag(xml, method) : rootTag(xml);
  const text = xml.slice(tag.start, tag.end);
  const attributes = attributesOf(text);
  const existing = attributes.find((attribute) => attribute.name === 'auth');
  let edited: string;
  if (existing) {
    const quote = existing.value[0]!;
    const written = value === null ? '' : `${existing.space}auth${existing.equals}${quote}${value}${quote}`;
    edited = text.slice(0, existing.start) + written + text.slice(existing.end);
  } else if (value === null) {
    edited = text;
  } else {
    // After the attribute that names the element (v, method) when there is one, which is where people write it.
    const after = attributes.find((attribute) => attribute.name === (method ? 'method' : 'v'));
    const at = after ? after.end : text.length - (text.endsWith('/>') ? 2 : 1);
    edited = `${text.slice(0, at)} auth="${value}"${text.slice(at)}`;
  }
  return xml.slice(0, tag.start) + edited + xml.slice(tag.end);
}

/**
 * The `auth` attributes of a resource file as written (entities decoded):
 * the resource's, and each Request's own, by method (a Request without one
 * inherits the resource's and is not listed); and the methods it has.
 */
export function authAttributes(file: string, xml: string): { resource: string | null; requests: Partial<Record<HttpMethod, string>>; methods: HttpMethod[] } {
  const diagnostics = new Diagnostics();
  const root = parseXml(file, xml, diagnostics);
  if (!root) throw new Error(diagnostics.lines()[0] ?? `${file}: not XML`);
  const value = (element: typeof root, name: string) => element.attributes.find((attribute) => attribute.name === name)?.value;
  const requests: Partial<Record<HttpMethod, string>> = {};
  const methods: HttpMethod[] = [];
  for (const child of root.children) {
    const method = value(child, 'method')?.toUpperCase() as HttpMethod | undefined;
    if (child.name !== 'Request' || method === undefined) continue;
    methods.push(method);
    const own = value(child, 'auth');
    if (own !== undefined) requests[method] = own;
  }
  return { resource: value(root, 'auth') ?? null, requests, methods };
}

interface Tag {
  name: string;
  start: number;
  end: number;
  depth: number;
}

/** The start tags of a document in order, with their depth (the root's is 0); comments, CDATA and PIs skipped. */
function* startTags(xml: string): Generator<Tag> {
  let depth = 0;
  let i = 0;
  while (i < xml.length) {
    const open = xml.indexOf('<', i);
    if (open === -1) return;
    if (xml.startsWith('<?', open)) i = past(xml, '?>', open);
    else if (xml.startsWith('<!--', open)) i = past(xml, '-->', open);
    else if (xml.startsWith('<![CDATA[', open)) i = past(xml, ']]>', open);
    else if (xml.startsWith('<!', open)) throw new Error('document type declarations are not supported');
    else if (xml.startsWith('</', open)) {
      depth--;
      i = past(xml, '>', open);
    } else {
      const end = endOfStartTag(xml, open);
      if (xml[end - 1] !== '>') throw new Error('unterminated start tag');
      const name = /^<([^\s/>]+)/.exec(xml.slice(open, end))?.[1] ?? '';
      yield { name, start: open, end, depth };
      if (xml[end - 2] !== '/') depth++;
      i = end;
    }
  }
}

/** The attributes of one start tag, each with where it is in the tag (from the white space before it) and its quoted value. */
function attributesOf(tag: string): { name: string; space: string; equals: string; value: string; start: number; end: number }[] {
  const name = /^<[^\s/>]+/.exec(tag)?.[0].length ?? 1;
  // Attribute after attribute from the end of the name: a value is taken whole, so no text inside one is mistaken for another.
  const pattern = /(\s+)([^\s=/>]+)(\s*=\s*)("[^"]*"|'[^']*')/y;
  pattern.lastIndex = name;
  const found = [];
  for (let match = pattern.exec(tag); match; match = pattern.exec(tag)) {
    found.push({ name: match[2]!, space: match[1]!, equals: match[3]!, value: match[4]!, start: match.index, end: match.index + match[0].length });
  }
  return found;
}

function past(xml: string, token: string, from: number): number {
  const at = xml.indexOf(token, from);
  if (at === -1) throw new Error(`unterminated ${token === '>' ? 'end tag' : 'markup'}`);
  return at + token.length;
}

function rootTag(xml: string): Tag {
  for (const tag of startTags(xml)) return tag;
  throw new Error('no root element');
}

/** The start tag of the root's Request child whose method is `method` (in any letter case, as the generator reads it). */
function requestTag(xml: string, method: HttpMethod): Tag {
  for (const tag of startTags(xml)) {
    if (tag.depth !== 1 || tag.name !== 'Request') continue;
    const attribute = attributesOf(xml.slice(tag.start, tag.end)).find((candidate) => candidate.name === 'method');
    if (attribute?.value.slice(1, -1).toUpperCase() === method) return tag;
  }
  throw new Error(`no ${method} Request`);
}
