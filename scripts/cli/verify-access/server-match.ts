// The server's own OpenAPI document against the one these resources make: apart, since it runs before any user is
// made and anything else is sent.
import type { Project } from '../../../generator/ir.js';
import type { Send } from './call.js';
import { VerifyUsage } from './errors.js';

/**
 * The server's own OpenAPI document against the one the resources make: each operation (method and path) of the
 * resources' backends and the names of its parameters (query and body). What a call can change is read from the
 * resources (a write without parameters is never sent): a server deployed from other resources could run a write
 * that takes a parameter here and none there, so any difference stops the run before anything is sent and any
 * user made. Backends the server serves beside them (another project's) are left out. `document` is the resources'
 * (generator/openapi.ts `openApiDocument`); the server's own is answered, which its MCP tools are made from.
 */
export async function compareWithServer(base: string, send: Send, project: Project, document: object, resourcesDir: string): Promise<object> {
  const answer = await send('GET', `${base}/openapi.json`, {});
  let served: unknown;
  try {
    served = answer.status === 200 ? JSON.parse(answer.text) : undefined;
  } catch {
    served = undefined;
  }
  if (served === undefined || typeof served !== 'object' || served === null) {
    throw new VerifyUsage(
      `the server at ${base} answers /openapi.json with ${answer.status}, not its OpenAPI document: verify-access compares it with ${resourcesDir}/ before it sends anything (is BASE_URL the server with its BASE_PATH?)`,
    );
  }
  const theirs = operationsOf(served);
  const ours = operationsOf(document);
  const differences: string[] = [];
  for (const [operation, params] of ours) {
    const there = theirs.get(operation);
    if (there === undefined) differences.push(`${operation} is not served there`);
    else if (there !== params) differences.push(`${operation} takes (${there}) there, (${params}) in ${resourcesDir}/`);
  }
  // Operations of other backends the server also serves (another project's) are not these resources' business.
  const mine = (operation: string) => project.backends.some((backend) => operation.split(' ')[1]!.startsWith(`/${backend.name}/`));
  for (const operation of theirs.keys()) {
    if (!ours.has(operation) && mine(operation)) differences.push(`${operation} is served there, not in ${resourcesDir}/`);
  }
  if (differences.length > 0) {
    const shown = differences.slice(0, 10).join('; ');
    throw new VerifyUsage(
      `the server at ${base} was not built from these resources (${shown}${differences.length > 10 ? `; and ${differences.length - 10} more` : ''}): deploy them, or verify against the resources it runs (--lock, --resources); nothing was sent and no user made`,
    );
  }
  return served;
}

/** Each operation of an OpenAPI document, `METHOD path`, with the sorted names of its parameters (query and body). */
function operationsOf(document: object): Map<string, string> {
  const operations = new Map<string, string>();
  const paths = (document as { paths?: unknown }).paths;
  if (typeof paths !== 'object' || paths === null) return operations;
  for (const [pathname, item] of Object.entries(paths as Record<string, unknown>)) {
    if (typeof item !== 'object' || item === null) continue;
    for (const [method, operation] of Object.entries(item as Record<string, unknown>)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method) || typeof operation !== 'object' || operation === null) continue;
      const { parameters, requestBody } = operation as {
        parameters?: { name?: unknown }[];
        requestBody?: { content?: Record<string, { schema?: { properties?: object } }> };
      };
      const names = new Set<string>();
      for (const parameter of Array.isArray(parameters) ? parameters : []) if (typeof parameter?.name === 'string') names.add(parameter.name);
      for (const content of Object.values(requestBody?.content ?? {})) for (const name of Object.keys(content?.schema?.properties ?? {})) names.add(name);
      operations.set(`${method.toUpperCase()} ${pathname}`, [...names].sort().join(', '));
    }
  }
  return operations;
}
