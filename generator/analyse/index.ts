import type { Diagnostics, SourceLocation } from '../diagnostics.js';
import type { Backend, Project } from '../ir.js';
import { binding } from '../names.js';
import { analyseBackend } from './backend.js';
import { type AnalyseOptions, compare, compareVersions, type SourceFile, top } from './elements.js';
import { checkEventShapes } from './emit.js';
import { checkToolNames } from './mcp.js';
import { analyseResource } from './resource.js';

/**
 * Stage 2: raw elements to the IR. Every check, and so every generation
 * error, lives here (one module per element: backend.ts, resource.ts,
 * request.ts). Problems are collected, never thrown.
 */
export { type AnalyseOptions, RESOURCE_NAMESPACE, type SourceFile } from './elements.js';

/** A backend's name: its folder under resources/ and the first part of its paths (`xmlrest init --backend` too). */
export const BACKEND_NAME = /^[a-z][a-z0-9_-]*$/;
/** Paths the server answers outside BASE_PATH (docs/internals/contract.md §7): no backend may take them. */
export const RESERVED_BACKENDS: ReadonlySet<string> = new Set(['healthz', 'readyz', 'metrics']);

export function analyse(files: readonly SourceFile[], diagnostics: Diagnostics, options: AnalyseOptions): Project {
  const resourcesDir = options.resourcesDir ?? 'resources';
  const byBackend = new Map<string, SourceFile[]>();
  for (const file of [...files].sort((a, b) => (a.path < b.path ? -1 : 1))) {
    const parts = file.path.startsWith(`${resourcesDir}/`) ? file.path.slice(resourcesDir.length + 1).split('/') : [];
    const backend = parts[0] ?? '';
    if (parts.length !== 2 || !BACKEND_NAME.test(backend)) {
      diagnostics.error(top(file.path), `resource files live at ${resourcesDir}/<backend>/<name>.xml, with a lower-case backend name: ${file.path}`);
      continue;
    }
    byBackend.set(backend, [...(byBackend.get(backend) ?? []), file]);
  }
  const backends: Backend[] = [];
  const backendBindings = new Map<string, string>();
  /** Which backend holds each issuer, and where it says so: two backends of one issuer would take each other's tokens. */
  const issuers = new Map<string, { name: string; at: SourceLocation }>();
  /** Each outside issuer's iss, and where: a backend's own tokens and an identity provider's must never be told apart by guesswork. */
  const outside: { iss: string; name: string; at: SourceLocation }[] = [];
  for (const [name, backendFiles] of byBackend) {
    const other = backendBindings.get(binding(name, 'Backend'));
    if (other) diagnostics.error(top(backendFiles[0]!.path), `backend "${name}" and backend "${other}" differ only in punctuation: rename one`);
    backendBindings.set(binding(name, 'Backend'), name);
    if (RESERVED_BACKENDS.has(name)) {
      diagnostics.error(top(backendFiles[0]!.path), `the backend name "${name}" is reserved for the server's own ${name} endpoint: rename the folder`);
      continue;
    }
    const settings = backendFiles.find((file) => file.path.endsWith('/backend.xml'));
    const { backend, issuerAt, outsideIssuersAt } = analyseBackend(name, settings, diagnostics, options);
    for (const [iss, at] of outsideIssuersAt) outside.push({ iss, name, at });
    // Backends are taken in name order: the second to claim an issuer is the one reported, naming the first.
    const at = issuerAt ?? top(backendFiles[0]!.path);
    const claimed = issuers.get(backend.issuer);
    if (claimed) {
      diagnostics.error(
        at,
        `backend "${name}" has the issuer "${backend.issuer}" of backend "${claimed.name}" (${claimed.at.file}:${claimed.at.line}:${claimed.at.col}): give each backend its own issuer`,
      );
    } else issuers.set(backend.issuer, { name, at });
    const seen = new Map<string, string>();
    /** TypeScript binding of each resource, to refuse two names that differ only in punctuation. */
    const identifiers = new Map<string, string>();
    for (const file of backendFiles) {
      if (file === settings) continue;
      const resource = analyseResource(file, backend, diagnostics, options);
      if (!resource) continue;
      const key = `${resource.name}@${resource.version}`;
      const earlier = seen.get(key);
      if (earlier) {
        diagnostics.error(top(file.path), `resource "${resource.name}" version ${resource.version} is also defined in ${earlier}`);
        continue;
      }
      seen.set(key, file.path);
      const identifier = `${binding(resource.name, 'Resource')}@${resource.version}`;
      const twin = identifiers.get(identifier);
      if (twin !== undefined && twin !== resource.name) {
        diagnostics.error(top(file.path), `resource "${resource.name}" and resource "${twin}" differ only in punctuation: rename one`);
        continue;
      }
      identifiers.set(identifier, resource.name);
      backend.resources.push(resource);
    }
    backend.resources.sort((a, b) => compare(a.name, b.name) || compareVersions(a.version, b.version));
    checkEventShapes(backend, diagnostics);
    checkToolNames(backend, diagnostics);
    // Sessions answer at {base}/<backend>/v1.0/logout (docs/internals/contract.md §10): no resource may take the path.
    const logout =
      backend.refreshLifetime === null ? undefined : backend.resources.find((resource) => resource.name === 'logout' && resource.version === '1.0');
    if (logout)
      diagnostics.error(top(logout.source), `resource "logout" v1.0 takes the path of backend "${name}"'s session logout (refresh_lifetime): rename it`);
    backends.push(backend);
  }
  for (const { iss, name, at } of outside) {
    const own = issuers.get(iss);
    if (own)
      diagnostics.error(
        at,
        `the Issuer of backend "${name}" has the iss "${iss}" that backend "${own.name}" signs its own tokens with: give that backend another issuer`,
      );
  }
  return { backends };
}
