import type { Diagnostics } from '../diagnostics.js';
import type { Backend } from '../ir.js';
import { operationId } from '../names.js';
import { top } from './elements.js';

/** What MCP takes as a tool's name (the specification's SEP-986 rule, 2025-11-25). */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/**
 * The tools of a backend with mcp="on" (docs/internals/contract.md §16): each resource method's OpenAPI operationId
 * is its tool's name, so each must be a name MCP takes and no two may be the same. Names are made of letters,
 * digits and `_` only, so a name fails by its length (a long backend and resource name), and two meet only when
 * the punctuation rule above them let them through: both are caught here, at the resource's file, rather than
 * by an agent that cannot call the tool.
 */
export function checkToolNames(backend: Backend, diagnostics: Diagnostics): void {
  if (backend.mcp !== true) return;
  const seen = new Map<string, string>();
  for (const resource of backend.resources) {
    for (const operation of resource.operations) {
      const name = operationId(backend.name, resource.name, resource.version, operation.method);
      const at = top(resource.source);
      if (!TOOL_NAME.test(name)) {
        diagnostics.error(
          at,
          `mcp="on": the tool of ${operation.method} ${resource.name} v${resource.version} would be named "${name}", longer than MCP's 128 characters: shorten the resource's name`,
        );
        continue;
      }
      const other = seen.get(name);
      if (other !== undefined)
        diagnostics.error(
          at,
          `mcp="on": the tool of ${operation.method} ${resource.name} v${resource.version} has the name "${name}" of one in ${other}: rename one resource`,
        );
      else seen.set(name, resource.source);
    }
  }
}
