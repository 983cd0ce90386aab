/**
 * How XML names become TypeScript names. analyse.ts uses these to refuse two
 * names that would become one identifier; emit.ts to write them.
 */

/** Words that cannot name a variable or an import binding. */
export const RESERVED_WORDS = new Set([
  'break',
  'case',
  'catch',
  'class',
  'const',
  'continue',
  'debugger',
  'default',
  'delete',
  'do',
  'else',
  'enum',
  'export',
  'extends',
  'false',
  'finally',
  'for',
  'function',
  'if',
  'import',
  'in',
  'instanceof',
  'new',
  'null',
  'return',
  'super',
  'switch',
  'this',
  'throw',
  'true',
  'try',
  'typeof',
  'var',
  'void',
  'while',
  'with',
  'yield',
  'let',
  'static',
  'await',
  'implements',
  'interface',
  'package',
  'private',
  'protected',
  'public',
  'arguments',
  'eval',
  'undefined',
]);

export function words(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
}

export function pascal(name: string): string {
  return words(name)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');
}

export function camel(name: string): string {
  const text = pascal(name);
  return text.charAt(0).toLowerCase() + text.slice(1);
}

/** SCREAMING_SNAKE, for SQL constants. */
export function constant(name: string): string {
  return words(name)
    .map((word) => word.toUpperCase())
    .join('_');
}

/** A binding name for `name`, with `suffix` added only where the plain name is a reserved word. */
export function binding(name: string, suffix: string): string {
  const plain = camel(name);
  return RESERVED_WORDS.has(plain) ? plain + suffix : plain;
}

/**
 * An operation's id in the OpenAPI document, and its MCP tool's name (docs/internals/contract.md §16):
 * `shop_order_v1_0_get`, from backend, resource, version and method.
 */
export function operationId(backend: string, resource: string, version: string, method: string): string {
  return `${camel(backend)}_${camel(resource)}_v${version.replaceAll('.', '_')}_${method.toLowerCase()}`;
}
