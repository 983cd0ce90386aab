import { readFileSync } from 'node:fs';
import { XMLParser } from 'fast-xml-parser';
import { byText, code, page, table } from './markdown.js';

/**
 * docs/reference/xml.md: every element of resource files and backend.xml and every attribute, read from the
 * editor schema (schema/resource-1.0.xsd): its type or allowed values, default, whether required, and its
 * meaning (the attribute's xs:documentation, else its type's). The analyser's attribute tables
 * (generator/analyse/) are held to the schema by test/unit/reference.test.ts.
 */
export const SCHEMA = 'schema/resource-1.0.xsd';

type Node = Record<string, unknown>;

export interface XmlAttribute {
  name: string;
  type: string;
  default: string;
  required: boolean;
  meaning: string;
}

export interface XmlElement {
  name: string;
  meaning: string;
  parents: Set<string>;
  children: string[];
  text: boolean;
  attributes: Map<string, XmlAttribute>;
}

const ARRAYS = new Set(['xs:element', 'xs:attribute', 'xs:attributeGroup', 'xs:complexType', 'xs:simpleType', 'xs:enumeration', 'xs:choice', 'xs:sequence']);

/** The schema's elements by name (one that appears in several places merged: its parents all named). */
export function readSchema(text = readFileSync(SCHEMA, 'utf8')): Map<string, XmlElement> {
  const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@', isArray: (name) => ARRAYS.has(name) });
  const schema = (parser.parse(text) as Node)['xs:schema'] as Node;
  const named = (kind: string) => new Map(list(schema[kind]).map((node) => [String(node['@name']), node]));
  const complexTypes = named('xs:complexType');
  const simpleTypes = named('xs:simpleType');
  const groups = named('xs:attributeGroup');
  const elements = new Map<string, XmlElement>();

  const visit = (decl: Node, parent: string | undefined) => {
    const name = String(decl['@name']);
    const typeName = decl['@type'] as string | undefined;
    const complex = (list(decl['xs:complexType'])[0] ?? (typeName ? complexTypes.get(typeName) : undefined)) as Node | undefined;
    let element = elements.get(name);
    const first = element === undefined;
    element ??= { name, meaning: '', parents: new Set(), children: [], text: false, attributes: new Map() };
    elements.set(name, element);
    if (parent) element.parents.add(parent);
    element.meaning ||= documentation(decl) || (complex ? documentation(complex) : '');
    if (!first) return;
    if (complex === undefined) {
      element.text = true;
      return;
    }
    const content = (complex['xs:simpleContent'] as Node | undefined)?.['xs:extension'] as Node | undefined;
    if (content) element.text = true;
    for (const holder of [complex, content ?? {}]) {
      for (const attribute of list(holder['xs:attribute'])) addAttribute(element, attribute);
      for (const ref of list(holder['xs:attributeGroup']))
        for (const attribute of list(groups.get(String(ref['@ref']))?.['xs:attribute'])) addAttribute(element, attribute);
    }
    for (const child of childElements(complex)) {
      if (!element.children.includes(String(child['@name']))) element.children.push(String(child['@name']));
      visit(child, name);
    }
  };

  const addAttribute = (element: XmlElement, attribute: Node) => {
    const typeName = attribute['@type'] as string | undefined;
    const simple = (list(attribute['xs:simpleType'])[0] ?? (typeName ? simpleTypes.get(typeName) : undefined)) as Node | undefined;
    element.attributes.set(String(attribute['@name']), {
      name: String(attribute['@name']),
      type: simple ? describeType(simple) : (BUILT_IN[typeName ?? 'xs:string'] ?? typeName ?? 'text'),
      default: String(attribute['@default'] ?? ''),
      required: attribute['@use'] === 'required',
      meaning: documentation(attribute) || (simple ? documentation(simple) : ''),
    });
  };

  for (const root of list(schema['xs:element'])) visit(root, undefined);
  return elements;
}

const BUILT_IN: Record<string, string> = { 'xs:string': 'text', 'xs:anyURI': 'a URL', 'xs:positiveInteger': 'a whole number, 1 or more' };

function list(value: unknown): Node[] {
  return value === undefined ? [] : Array.isArray(value) ? (value as Node[]) : [value as Node];
}

function documentation(node: Node): string {
  const annotation = node['xs:annotation'] as Node | undefined;
  const text = annotation?.['xs:documentation'];
  return typeof text === 'string' ? text.replace(/\s+/g, ' ').trim() : '';
}

/** The elements a content model names, through nested sequences and choices. */
function childElements(node: Node): Node[] {
  const found: Node[] = [...list(node['xs:element'])];
  for (const group of [...list(node['xs:sequence']), ...list(node['xs:choice'])]) found.push(...childElements(group));
  return found;
}

/** A simple type in words: its values, its range, or its pattern. */
function describeType(simple: Node): string {
  const restriction = simple['xs:restriction'] as Node | undefined;
  if (restriction === undefined) return 'text';
  const values = list(restriction['xs:enumeration']).map((value) => String(value['@value']));
  if (values.length > 0) return values.map(code).join(' or ');
  const max = (restriction['xs:maxInclusive'] as Node | undefined)?.['@value'];
  if (restriction['@base'] === 'xs:positiveInteger') return max === undefined ? 'a whole number, 1 or more' : `1 to ${String(max)}`;
  const pattern = (restriction['xs:pattern'] as Node | undefined)?.['@value'];
  if (pattern !== undefined) return `matches ${code(String(pattern))}`;
  if ((restriction['xs:minLength'] as Node | undefined)?.['@value'] !== undefined) return 'text, not empty';
  return BUILT_IN[String(restriction['@base'])] ?? 'text';
}

export function xmlPage(): string {
  const elements = [...readSchema().values()].sort(byText((element) => element.name));
  const sections = elements.map((element) => {
    const parts = [`## ${element.name}`];
    if (element.meaning) parts.push(element.meaning);
    const where =
      element.parents.size === 0
        ? `the root of ${element.name === 'Backend' ? 'backend.xml' : 'a resource file'}`
        : `in ${[...element.parents].sort().map(code).join(', ')}`;
    const holds = [element.children.length > 0 ? `the elements ${element.children.map(code).join(', ')}` : '', element.text ? 'text' : ''].filter(Boolean);
    parts.push(`Where: ${where}. Holds: ${holds.length > 0 ? holds.join(' and ') : 'nothing'}.`);
    const attributes = [...element.attributes.values()].sort(byText((attribute) => attribute.name));
    if (attributes.length > 0)
      parts.push(
        table(
          ['attribute', 'type or values', 'default', 'required', 'meaning'],
          attributes.map((attribute) => [code(attribute.name), attribute.type, code(attribute.default), attribute.required ? 'yes' : 'no', attribute.meaning]),
        ),
      );
    return parts.join('\n\n');
  });
  const count = elements.reduce((sum, element) => sum + element.attributes.size, 0);
  return page('Resource files and backend.xml', SCHEMA, [
    `Resource files (\`resources/<backend>/<name>.xml\`, root \`Resource\`) and a backend's settings (\`resources/<backend>/backend.xml\`, root \`Backend\`), ` +
      `namespace \`urn:xmlrest:resource:1.0\`: ${elements.length} elements, ${count} attributes. The generator is the judge: it also checks the SQL, ` +
      'the references between steps and the plug-ins. Point an editor at the schema for completion and early errors.',
    ...sections,
  ]);
}
