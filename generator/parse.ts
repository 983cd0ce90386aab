import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { type Diagnostics, LineMap, type SourceLocation } from './diagnostics.js';

/**
 * Stage 1: XML text to raw elements that keep their `file:line:col`. No
 * meaning is given to any name here; analyse.ts does that.
 */
export interface RawAttribute {
  name: string;
  value: string;
  at: SourceLocation;
}

export interface RawElement {
  name: string;
  attributes: RawAttribute[];
  children: RawElement[];
  /** The element's own text and CDATA, entity-decoded, in document order. */
  text: string;
  /** Where the character at `offset` of `text` is (exact unless entities shorten the text). */
  locate(offset: number): SourceLocation;
  at: SourceLocation;
  /** Non-blank text appears between child elements. */
  hasMixedText: boolean;
}

const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  parseAttributeValue: false,
  parseTagValue: false,
  trimValues: false,
  // References are decoded here, once (decodeReferences, decodeContent): decoding `&amp;` first, and the
  // numeric references it then spells after, would read `&amp;#13;` as a carriage return.
  processEntities: false,
  htmlEntities: false,
  captureMetaData: true,
  cdataPropName: '#cdata',
});
const META = XMLParser.getMetaDataSymbol() as unknown as symbol;

type OrderedNode = Record<string, unknown>;

/** Parses one file; on malformed XML reports where and returns undefined. */
export function parseXml(file: string, original: string, diagnostics: Diagnostics): RawElement | undefined {
  // XML treats CR LF as LF (XML 1.0 §2.11); doing it first keeps columns right on Windows files.
  const text = original.replace(/\r\n?/g, '\n');
  const lines = new LineMap(file, text);
  // No DTD processing at all: an entity declaration could expand without bound or read local files.
  const dtd = findOutsideComments(text, /<!DOCTYPE|<!ENTITY/gi);
  if (dtd !== -1) {
    diagnostics.error(lines.at(dtd), 'document type declarations are not allowed (no DTD, no entities)');
    return undefined;
  }
  const illegal = ILLEGAL_CHARACTER.exec(text);
  if (illegal) {
    diagnostics.error(lines.at(illegal.index), `malformed XML: the character ${codePoint(illegal[0])} is not allowed in XML`);
    return undefined;
  }
  const valid = XMLValidator.validate(text, { allowBooleanAttributes: false });
  if (valid !== true) {
    const { line, col, msg } = valid.err;
    diagnostics.error({ file, line: line ?? 1, col: col ?? 1 }, `malformed XML: ${lowerFirst(msg)}`);
    return undefined;
  }
  if (!checkReferences(text, lines, diagnostics)) return undefined;
  let nodes: OrderedNode[];
  try {
    nodes = parser.parse(text) as OrderedNode[];
  } catch (error) {
    // The validator passes a few shapes the parser then refuses (found by test/unit/hostile.test.ts).
    const where = /line:?\s*(\d+)/i.exec((error as Error).message);
    diagnostics.error(where ? { file, line: Number(where[1]), col: 1 } : lines.at(0), `malformed XML: ${lowerFirst((error as Error).message)}`);
    return undefined;
  }
  const roots = nodes.filter((node) => elementName(node) !== undefined);
  if (roots.length !== 1) {
    const second = roots[1];
    diagnostics.error(second ? lines.at(startOf(second)) : lines.at(0), 'malformed XML: a document has exactly one root element');
    return undefined;
  }
  return toRaw(roots[0]!, text, lines);
}

function toRaw(node: OrderedNode, source: string, lines: LineMap): RawElement {
  const name = elementName(node)!;
  const start = startOf(node);
  const tagEnd = endOfStartTag(source, start);
  const attributes: RawAttribute[] = Object.entries((node[':@'] as Record<string, string> | undefined) ?? {}).map(([attributeName, value]) => ({
    name: attributeName,
    value: decodeReferences(String(value)),
    at: lines.at(attributeOffset(source, start, tagEnd, attributeName)),
  }));
  const children: RawElement[] = [];
  let text = '';
  let hasMixedText = false;
  for (const child of (node[name] as OrderedNode[]) ?? []) {
    if ('#text' in child) {
      text += String(child['#text']);
    } else if ('#cdata' in child) {
      text += ((child['#cdata'] as OrderedNode[]) ?? []).map((part) => String(part['#text'] ?? '')).join('');
    } else if (elementName(child) !== undefined) {
      if (children.length > 0 && text.trim() !== '') hasMixedText = true;
      children.push(toRaw(child, source, lines));
    }
  }
  if (children.length > 0 && text.trim() !== '') hasMixedText = true;
  if (children.length === 0) {
    // A leaf's text is decoded here, keeping each character's place in the file, so that an error
    // inside a statement points at the right column whatever entities, CDATA or comments precede it.
    const selfClosing = source[tagEnd - 2] === '/';
    const decoded = selfClosing ? { text: '', offsets: [] } : decodeContent(source, tagEnd);
    const locate = (offset: number) => lines.at(decoded.offsets[offset] ?? decoded.offsets.at(-1) ?? tagEnd);
    return { name, attributes, children, text: decoded.text, locate, at: lines.at(start), hasMixedText };
  }
  return { name, attributes, children, text, locate: () => lines.at(tagEnd), at: lines.at(start), hasMixedText };
}

function elementName(node: OrderedNode): string | undefined {
  return Object.keys(node).find((key) => key !== ':@' && !key.startsWith('#') && !key.startsWith('?'));
}

function startOf(node: OrderedNode): number {
  return ((node as Record<symbol, unknown>)[META] as { startIndex?: number } | undefined)?.startIndex ?? 0;
}

/** Index just past the `>` of the start tag beginning at `start`, honouring quoted attribute values. */
export function endOfStartTag(source: string, start: number): number {
  let quote = '';
  for (let i = start; i < source.length; i++) {
    const c = source[i];
    if (quote) {
      if (c === quote) quote = '';
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '>') return i + 1;
  }
  return source.length;
}

function attributeOffset(source: string, start: number, end: number, name: string): number {
  const tag = source.slice(start, end);
  const match = new RegExp(`\\s(${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')})\\s*=`).exec(tag);
  return match ? start + match.index + 1 : start;
}

/** XML's five predefined entities; a Map, so that `&constructor;` names nothing. */
const ENTITIES = new Map([
  ['lt', '<'],
  ['gt', '>'],
  ['amp', '&'],
  ['quot', '"'],
  ['apos', "'"],
]);

/**
 * The character data of a leaf element from `start` to its end tag: entities
 * (named and numeric) decoded, CDATA taken as it is, comments and processing
 * instructions dropped. `offsets[i]` is where text character i came from.
 */
function decodeContent(source: string, start: number): { text: string; offsets: number[] } {
  let text = '';
  const offsets: number[] = [];
  let i = start;
  while (i < source.length) {
    if (source.startsWith('</', i)) break;
    if (source.startsWith('<![CDATA[', i)) {
      const end = source.indexOf(']]>', i);
      for (let j = i + 9; j < end; j++) {
        text += source[j];
        offsets.push(j);
      }
      i = end + 3;
    } else if (source.startsWith('<!--', i)) {
      i = source.indexOf('-->', i) + 3;
    } else if (source.startsWith('<?', i)) {
      i = source.indexOf('?>', i) + 2;
    } else if (source[i] === '&') {
      const end = source.indexOf(';', i);
      const name = source.slice(i + 1, end);
      text += ENTITIES.get(name) ?? (name.startsWith('#') ? characterOf(name.slice(1)) : undefined) ?? source.slice(i, end + 1);
      offsets.push(i);
      i = end + 1;
    } else {
      text += source[i];
      offsets.push(i);
      i++;
    }
  }
  return { text, offsets };
}

/** What XML 1.0 allows in a document (§2.2, Char): no other control character, no surrogate, no U+FFFE or U+FFFF. */
const ILLEGAL_CHARACTER = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;

/** An attribute value with its references decoded, in one pass (parseXml has checked each one). */
function decodeReferences(value: string): string {
  return value.replace(
    REFERENCE,
    (reference: string, code: string | undefined, name: string | undefined) => (code !== undefined ? characterOf(code) : ENTITIES.get(name!)) ?? reference,
  );
}

/** An entity or character reference: `&#x110000;`, `&#13;`, `&amp;`. */
const REFERENCE = /&(?:#(x[0-9A-Fa-f]+|[0-9]+)|([A-Za-z_:][-A-Za-z0-9._:]*));/g;

/** The character a numeric reference's code (`x110000`, `13`) names, when XML allows it (§4.1, Legal Character). */
function characterOf(code: string): string | undefined {
  const value = code.startsWith('x') ? parseInt(code.slice(1), 16) : parseInt(code, 10);
  if (!Number.isSafeInteger(value) || value > 0x10ffff) return undefined;
  const character = String.fromCodePoint(value);
  return ILLEGAL_CHARACTER.test(character) ? undefined : character;
}

/**
 * Every entity and character reference outside comments, CDATA and
 * processing instructions names something: one of the five entities XML
 * predefines (no DTD declares others), or a character XML allows. Reports
 * each one that does not, at its place; the validator passes them.
 */
function checkReferences(text: string, lines: LineMap, diagnostics: Diagnostics): boolean {
  const masked = text.replace(/<!--[\s\S]*?-->|<!\[CDATA\[[\s\S]*?\]\]>|<\?[\s\S]*?\?>/g, (m) => ' '.repeat(m.length));
  let clean = true;
  const sticky = new RegExp(REFERENCE.source, 'y');
  for (let at = masked.indexOf('&'); at !== -1; at = masked.indexOf('&', at + 1)) {
    sticky.lastIndex = at;
    const reference = sticky.exec(masked);
    const problem = !reference
      ? 'a & starts no reference (write &amp; for the character itself)'
      : reference[1] !== undefined
        ? characterOf(reference[1]) === undefined
          ? `${reference[0]} is not a character XML allows`
          : undefined
        : !ENTITIES.has(reference[2]!)
          ? `unknown entity ${reference[0]} (XML has &lt; &gt; &amp; &quot; &apos; and character references; no DTD declares others)`
          : undefined;
    if (problem) {
      diagnostics.error(lines.at(at), `malformed XML: ${problem}`);
      clean = false;
    }
  }
  return clean;
}

/** `U+0001`, as a character is named. */
function codePoint(character: string): string {
  return `U+${character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
}

function findOutsideComments(text: string, pattern: RegExp): number {
  const masked = text.replace(/<!--[\s\S]*?-->|<!\[CDATA\[[\s\S]*?\]\]>/g, (m) => ' '.repeat(m.length));
  const match = pattern.exec(masked);
  return match ? match.index : -1;
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}
