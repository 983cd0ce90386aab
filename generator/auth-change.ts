import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { authText, type HttpMethod, parseAuth } from '../runtime/contract.js';
import { Diagnostics } from './diagnostics.js';
import { parseXml } from './parse.js';
import { generateProject, type RunOptions } from './project.js';
import { authAttributes, setAuthAttribute } from './xml-edit.js';

/**
 * A change of who may call a resource, made by rewriting its file: what the
 * console's set-auth and `xmlrest resource auth` both do, the one way. The
 * value is checked (`parseAuth`, docs/internals/contract.md §8), the attribute set or
 * removed in the file's text (xml-edit.ts), the project regenerated; when the
 * project does not generate with the change, the file is put back as it was
 * and the generator's reasons returned.
 */
export interface AuthChange {
  /** The project folder `source` is relative to. */
  root: string;
  /** The resource file, project-relative (`resources/shop/report.xml`). */
  source: string;
  /** Whose `auth`: the resource's (absent), or this method's own, which replaces the resource's for it. */
  method?: HttpMethod | undefined;
  /**
   * The attribute's new value (role names, `*`, or on a method `""`, public), or null to remove it: a
   * resource without `auth` is public, a method without its own inherits the resource's.
   */
  auth: string | null;
  /** The file's etag (`etagOf` of its text) as the caller last read it: a file changed since is refused. Absent: as it is now. */
  etag?: string | undefined;
  /** Regenerates the project (in a server, and swaps the new routes in). */
  regenerate: () => Promise<Regeneration>;
}

export interface Regeneration {
  ok: boolean;
  ms: number;
  /** The generator's errors (`file:line:col: why`) when it refused. */
  errors?: readonly string[];
}

export type AuthChangeResult =
  | {
      ok: true;
      /** The attribute before and after, as written; null where there was, or is, none. */
      before: string | null;
      after: string | null;
      /** The file's new etag. */
      etag: string;
      /** How long regenerating took. */
      ms: number;
    }
  | {
      ok: false;
      /** invalid: not an auth value; changed: the file changed since `etag`; no-request: no Request for that method; refused: the project does not generate with it. */
      reason: 'invalid' | 'changed' | 'no-request' | 'refused';
      message: string;
      /** refused: the generator's own errors (`file:line:col: why`). */
      errors?: readonly string[];
    };

export async function changeAuth(change: AuthChange): Promise<AuthChangeResult> {
  let after: string | null = null;
  if (change.auth !== null) {
    const checked = parseAuth(change.auth, change.method ? 'Request' : 'Resource');
    if (!checked.ok) return { ok: false, reason: 'invalid', message: checked.message };
    after = authText(checked.access);
  }
  const file = path.join(change.root, change.source);
  const original = readFileSync(file, 'utf8');
  if (change.etag !== undefined && change.etag !== etagOf(original)) {
    return { ok: false, reason: 'changed', message: `${change.source} changed since the page loaded it: reload and try again` };
  }
  const attributes = authAttributes(change.source, original);
  const before = change.method ? (attributes.requests[change.method] ?? null) : attributes.resource;
  if (change.method && !attributes.methods.includes(change.method)) {
    return { ok: false, reason: 'no-request', message: `${change.source} has no ${change.method} Request` };
  }
  const edited = setAuthAttribute(original, after, change.method);
  writeAtomically(file, edited);
  const result = await change.regenerate().catch((error: unknown) => ({ ok: false, ms: 0, errors: [`xmlrest: ${(error as Error).message}`] }));
  if (!result.ok) {
    // Put the file back, unless someone changed it again meanwhile, and serve what was served before.
    if (readFileSync(file, 'utf8') === edited) writeAtomically(file, original);
    await change.regenerate().catch(() => undefined);
    const errors = result.errors?.length ? result.errors : ['the generator gave no reason'];
    return {
      ok: false,
      reason: 'refused',
      message: `${change.source} is as it was: the project does not generate with this change: ${errors.join('; ')}`,
      errors,
    };
  }
  return { ok: true, before, after, etag: etagOf(edited), ms: result.ms };
}

/**
 * The file of a resource, project-relative: `<name>@<version>.xml`, or
 * `<name>.xml` whose `v` is that version (the generator's naming rule);
 * undefined when there is none.
 */
export function findResourceFile(root: string, resourcesDir: string, backend: string, name: string, version: string): string | undefined {
  const folder = path.posix.join(resourcesDir, backend);
  const versioned = path.posix.join(folder, `${name}@${version}.xml`);
  if (existsSync(path.join(root, versioned))) return versioned;
  const plain = path.posix.join(folder, `${name}.xml`);
  if (!existsSync(path.join(root, plain))) return undefined;
  const diagnostics = new Diagnostics();
  const element = parseXml(plain, readFileSync(path.join(root, plain), 'utf8'), diagnostics);
  return element?.attributes.find((attribute) => attribute.name === 'v')?.value === version ? plain : undefined;
}

/** A generator line that is an error at a place, as opposed to a summary. */
const LOCATED = /^[^\s:]+:\d+:\d+: /;

/** `generateProject`, its lines kept: the errors at a place when it refuses (all its lines when none is). */
export async function regenerateProject(options: Omit<RunOptions, 'log'>, log: (line: string) => void = () => {}): Promise<Regeneration> {
  const started = performance.now();
  const lines: string[] = [];
  const code = await generateProject({
    ...options,
    log: (line) => {
      lines.push(line);
      log(line);
    },
  });
  const located = lines.filter((line) => LOCATED.test(line));
  return { ok: code === 0, ms: performance.now() - started, errors: code === 0 ? [] : located.length > 0 ? located : lines };
}

/** What a page read of a file's text, to tell whether it changed since: a digest of it. */
export function etagOf(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

/** A crash mid-write leaves the old file or the new one, never half of one: write a sibling, then rename. */
function writeAtomically(file: string, text: string): void {
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, text);
  renameSync(temporary, file);
}
