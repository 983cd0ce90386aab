import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Access, BackendModule, HttpMethod } from '../contract.js';
import { inlineRefs, type Schema } from './schema.js';

/** The headers a route takes that a tool takes as arguments named by the header (docs/internals/contract.md §16). */
export const HEADER_ARGUMENTS = ['If-Match', 'Idempotency-Key'] as const;

/**
 * One tool of a backend: what `tools/list` shows (`tool`), and the route a call of it runs: its method, its path
 * as the OpenAPI document names it (without the base path), who may call it, and which arguments travel as headers.
 */
export interface McpTool {
  tool: Tool;
  method: HttpMethod;
  /** `/<backend>/v<version>/<name>`. */
  path: string;
  access: Access;
  /** The header-named arguments this tool takes (`If-Match`, `Idempotency-Key`), in the order above. */
  headers: readonly string[];
}

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  schema?: Schema;
}

interface OperationObject {
  operationId?: string;
  summary?: string;
  description?: string;
  parameters?: (Parameter | { $ref: string })[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { content?: Record<string, { schema?: Schema }> } | { $ref: string }>;
}

/**
 * The backend's tools (docs/internals/contract.md §16), made once when the routes are mounted, from the generated
 * OpenAPI document, so that a tool is described by exactly the types OpenAPI gives its route: one per resource route
 * method, in the backend's order. What is not a resource route (token shape A, the session doors, the batch) has no
 * tool, and neither has a route that takes a secret (a password, a token request of shape B): an agent's arguments
 * pass through its model's context and its host's logs, where no password belongs.
 */
export function toolsOf(document: object, backend: BackendModule): McpTool[] {
  const doc = document as { paths?: Record<string, Record<string, OperationObject>>; components?: Record<string, Record<string, unknown>> };
  const tools: McpTool[] = [];
  for (const resource of backend.resources) {
    const path = `/${backend.name}/v${resource.version}/${resource.name}`;
    for (const [method, operation] of Object.entries(resource.operations) as [HttpMethod, NonNullable<(typeof resource.operations)[HttpMethod]>][]) {
      const object = doc.paths?.[path]?.[method.toLowerCase()];
      if (object?.operationId === undefined) continue;
      const tool = toolOf(doc, object, method, operation.status);
      if (tool === undefined) continue;
      tools.push({ ...tool, path, access: operation.access });
    }
  }
  return tools;
}

function toolOf(doc: { components?: Record<string, Record<string, unknown>> }, object: OperationObject, method: HttpMethod, status: number) {
  const resolve = <T>(value: T | { $ref: string }): T => {
    const ref = (value as { $ref?: unknown }).$ref;
    if (typeof ref !== 'string') return value as T;
    const [, , group, name] = ref.split('/');
    return doc.components?.[group!]?.[name!] as T;
  };
  const properties: Record<string, Schema> = {};
  const required: string[] = [];
  const headers: string[] = [];
  for (const parameter of (object.parameters ?? []).map((each) => resolve<Parameter>(each))) {
    if (parameter === undefined) continue;
    const header = HEADER_ARGUMENTS.find((name) => name === parameter.name);
    // Query parameters, and the headers a write takes; If-None-Match answers a 304 with no body, nothing for a tool.
    if (parameter.in !== 'query' && !(parameter.in === 'header' && header !== undefined)) continue;
    const schema = { ...(parameter.schema ?? {}) };
    const said = [parameter.description, schema.description].filter((text): text is string => typeof text === 'string' && text !== '');
    if (said.length > 0) schema.description = said.join(' ');
    properties[parameter.name] = schema;
    if (parameter.required === true) required.push(parameter.name);
    if (header !== undefined) headers.push(header);
  }
  const body = resolve(object.requestBody ?? {}).content?.['application/json']?.schema;
  if (body !== undefined) {
    const fields = resolve<Schema>(body);
    Object.assign(properties, fields.properties ?? {});
    for (const name of (fields.required as string[] | undefined) ?? []) if (!required.includes(name)) required.push(name);
  }
  const components = (doc.components?.schemas ?? {}) as Record<string, Schema>;
  const inputSchema = inlineRefs({ type: 'object', properties, ...(required.length > 0 ? { required } : {}) }, components) as Tool['inputSchema'];
  if (takesSecret(inputSchema)) return undefined;
  const answer = resolve(object.responses?.[String(status)] ?? {}) as { content?: Record<string, { schema?: Schema }> } | undefined;
  const answered = answer?.content?.['application/json']?.schema;
  // MCP takes an object as a tool's output schema: a route answering anything else says so in its text alone.
  const output = answered === undefined ? undefined : inlineRefs(answered, components);
  const outputSchema = output?.type === 'object' ? (output as Tool['outputSchema']) : undefined;
  const summary = object.summary ?? '';
  const description = [summary, object.description ?? ''].filter((text) => text !== '').join('\n\n');
  const tool: Tool = {
    name: object.operationId!,
    ...(summary === '' ? {} : { title: summary }),
    ...(description === '' ? {} : { description }),
    inputSchema,
    ...(outputSchema === undefined ? {} : { outputSchema }),
    annotations: annotationsOf(method),
  };
  return { tool, method, headers };
}

/**
 * A read is read-only and idempotent; of the writes, PUT and DELETE are idempotent and DELETE alone destructive
 * (MCP's default for a write is destructive, so the others say they are not). No tool reaches past the backend.
 */
function annotationsOf(method: HttpMethod): NonNullable<Tool['annotations']> {
  if (method === 'GET') return { readOnlyHint: true, idempotentHint: true, openWorldHint: false };
  return { readOnlyHint: false, destructiveHint: method === 'DELETE', idempotentHint: method === 'PUT' || method === 'DELETE', openWorldHint: false };
}

/** Whether any argument is a secret, as the document marks one (`format: password`). */
function takesSecret(schema: Schema): boolean {
  return Object.values((schema.properties ?? {}) as Record<string, Schema>).some((property) => property.format === 'password');
}
