/** A JSON Schema (2020-12, as OpenAPI 3.1 writes one), as plain data. */
export type Schema = Record<string, unknown>;

const COMPONENT = '#/components/schemas/';

/**
 * A schema of the OpenAPI document made whole for a tool (docs/internals/contract.md §16): every `$ref` to one of
 * the document's component schemas replaced by the schema itself, so that an agent reads a tool without the
 * document; one that refers to itself, however deep, is kept once under `$defs` instead (a copy would never end).
 */
export function inlineRefs(schema: Schema, components: Readonly<Record<string, Schema>>): Schema {
  const defs: Record<string, Schema> = {};
  const walk = (value: unknown, within: readonly string[]): unknown => {
    if (Array.isArray(value)) return value.map((item) => walk(item, within));
    if (typeof value !== 'object' || value === null) return value;
    const { $ref, ...rest } = value as Schema;
    if (typeof $ref === 'string' && $ref.startsWith(COMPONENT)) {
      const name = $ref.slice(COMPONENT.length);
      const target = components[name];
      if (target !== undefined) {
        if (within.includes(name)) {
          if (!(name in defs)) {
            defs[name] = {};
            defs[name] = walk(target, [...within]) as Schema;
          }
          return { ...mapped(rest, within), $ref: `#/$defs/${name}` };
        }
        return { ...(walk(target, [...within, name]) as Schema), ...mapped(rest, within) };
      }
    }
    return mapped(value as Schema, within);
  };
  const mapped = (object: Schema, within: readonly string[]): Schema => {
    const out: Schema = {};
    for (const [key, item] of Object.entries(object)) out[key] = walk(item, within);
    return out;
  };
  const whole = walk(schema, []) as Schema;
  return Object.keys(defs).length === 0 ? whole : { ...whole, $defs: { ...((whole.$defs as Schema | undefined) ?? {}), ...defs } };
}
