import { environmentReference, ROLE_NAME, referenceProblem } from '../../runtime/contract.js';
import type { Diagnostics, SourceLocation } from '../diagnostics.js';
import { parseXml, type RawAttribute, type RawElement } from '../parse.js';
import type { RunCache } from '../run-cache.js';
import { type Placeholder, type ScannedSql, scanSql } from '../sql/index.js';

/** What every part of the analysis shares: the input files, the options, and how raw elements are read. */
export const RESOURCE_NAMESPACE = 'urn:xmlrest:resource:1.0';

export interface SourceFile {
  /** Project-relative POSIX path, such as `resources/shop/orders.xml`. */
  path: string;
  text: string;
}

export interface AnalyseOptions {
  /** Project-relative folder holding one folder per backend; default `resources`. */
  resourcesDir?: string;
  /** Whether a project-relative file exists (user plug-in modules). */
  exists(path: string): boolean;
  /** Whether a project-relative path, its symbolic links followed, leads outside the project (user plug-in modules). */
  leavesProject(path: string): boolean;
  /** Parsed files kept by a long-running process, by path, each with its text; only clean parses are kept. */
  parsed?: RunCache<RawElement> | undefined;
  /** Scanned statements kept by a long-running process, keyed by their text. */
  scans?: RunCache<ScannedSql> | undefined;
}

/** A role name (console_role), by the rule every door shares. */
export const ROLE = ROLE_NAME;

export type { RawAttribute, RawElement };

export function parseCached(file: SourceFile, diagnostics: Diagnostics, cache: RunCache<RawElement> | undefined): RawElement | undefined {
  const cached = cache?.get(file.path, file.text);
  if (cached) return cached;
  const before = diagnostics.count;
  const root = parseXml(file.path, file.text, diagnostics);
  if (root && diagnostics.count === before) cache?.set(file.path, file.text, root);
  return root;
}

/**
 * A statement scanned (sql/), or as an earlier run scanned the same text: the
 * scan is a pure function of the text, and its result is only read, never
 * changed, so one result may serve every step that has the text.
 */
export function scanCached(text: string, cache: RunCache<ScannedSql> | undefined): ScannedSql {
  return cache ? cache.through(text, '', () => scanSql(text)) : scanSql(text);
}

/**
 * One rule per attribute of an element (Backend, Issuer): how its text becomes a field of `T` (undefined when it
 * cannot), and what to say when it cannot. Adding an attribute is adding a row to the element's table.
 */
export interface AttributeRule<T> {
  name: string;
  apply(value: string, target: T): boolean;
  error(value: string): string;
}

/**
 * A parse that also takes `${NAME}`, a reference to an environment variable read at start (docs/internals/contract.md §7),
 * kept as written: the server checks the value it names as this parse checks one written out. Any other text
 * holding `${` is refused (orReferenceError says why), never taken for a value.
 */
export function orReference(parse: (value: string) => string | undefined): (value: string) => string | undefined {
  return (value) => (environmentReference(value) !== undefined ? value : value.includes('${') ? undefined : parse(value));
}

/** The error of an attribute that takes a reference: a bad reference said as one, any other value as before. */
export function orReferenceError(attribute: string, error: (value: string) => string): (value: string) => string {
  return (value) => {
    const problem = referenceProblem(value);
    return problem === undefined ? error(value) : `${attribute}: ${problem}`;
  };
}

/** The rule of an attribute that sets one field of `T` from its parsed text. */
export function rule<T, K extends keyof T>(
  name: string,
  field: K,
  parse: (value: string) => T[K] | undefined,
  error: (value: string) => string,
): AttributeRule<T> {
  return {
    name,
    apply: (value, target) => {
      const parsed = parse(value);
      if (parsed === undefined) return false;
      target[field] = parsed;
      return true;
    },
    error,
  };
}

/**
 * Reads an element's attributes by its table into `target`, reports each value its rule refuses and every
 * attribute the table does not name, and returns the attributes given, by name (for their places).
 */
export function readAttributes<T>(element: RawElement, rules: readonly AttributeRule<T>[], target: T, diagnostics: Diagnostics): Map<string, RawAttribute> {
  const attrs = new AttributeReader(element, diagnostics);
  const given = new Map<string, RawAttribute>();
  for (const attribute of rules) {
    const value = attrs.optional(attribute.name);
    if (value === undefined) continue;
    given.set(attribute.name, value);
    if (!attribute.apply(value.value, target)) diagnostics.error(value.at, attribute.error(value.value));
  }
  attrs.rejectOthers();
  return given;
}

/** Reads attributes by name, then reports every one nobody asked for. */
export class AttributeReader {
  private readonly used = new Set<string>();
  constructor(
    private readonly element: RawElement,
    private readonly diagnostics: Diagnostics,
  ) {}

  optional(name: string): RawAttribute | undefined {
    this.used.add(name);
    return this.element.attributes.find((attribute) => attribute.name === name);
  }

  required(name: string): RawAttribute | undefined {
    const attribute = this.optional(name);
    if (!attribute) this.diagnostics.error(this.element.at, `${this.element.name} needs the attribute ${name}`);
    return attribute;
  }

  rejectOthers(): void {
    for (const attribute of this.element.attributes) {
      if (this.used.has(attribute.name)) continue;
      // Namespace declarations and schema hints are for editors.
      if (attribute.name.startsWith('xmlns:') || attribute.name.startsWith('xsi:')) continue;
      this.diagnostics.error(attribute.at, `unknown attribute on ${this.element.name}: ${attribute.name}`);
    }
  }
}

export function checkNamespace(attrs: AttributeReader, diagnostics: Diagnostics): void {
  const xmlns = attrs.optional('xmlns');
  if (xmlns && xmlns.value !== RESOURCE_NAMESPACE) {
    diagnostics.error(xmlns.at, `the namespace is ${RESOURCE_NAMESPACE} (or none), not "${xmlns.value}"`);
  }
}

/** An attribute that is true or false (output, audit); undefined (reported) when it is neither. */
export function readBool(attribute: RawAttribute, diagnostics: Diagnostics): boolean | undefined {
  if (attribute.value === 'true' || attribute.value === 'false') return attribute.value === 'true';
  diagnostics.error(attribute.at, `${attribute.name} is true or false, not "${attribute.value}"`);
  return undefined;
}

export function readDesc(element: RawElement, diagnostics: Diagnostics): string {
  new AttributeReader(element, diagnostics).rejectOthers();
  if (element.children.length > 0) diagnostics.error(element.children[0]!.at, 'Desc holds only text');
  return element.text.trim().replace(/\s+/g, ' ');
}

export function describePlaceholder(placeholder: Placeholder): string {
  if (placeholder.kind === 'param') return `$${placeholder.name}`;
  if (placeholder.kind === 'uid') return '$uid';
  if (placeholder.kind === 'tenant') return '$tenant';
  if (placeholder.kind === 'claim') return `$claim.${placeholder.name}`;
  return `$[${placeholder.step}][${placeholder.row}].${placeholder.column}`;
}

export function top(file: string): SourceLocation {
  return { file, line: 1, col: 1 };
}

export function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function compareVersions(a: string, b: string): number {
  const left = a.split('.').map(Number);
  const right = b.split('.').map(Number);
  for (let i = 0; i < Math.max(left.length, right.length); i++) {
    const difference = (left[i] ?? 0) - (right[i] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}
