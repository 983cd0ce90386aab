import type { Diagnostics, SourceLocation } from './diagnostics.js';
import type { AuthQuery, Backend, Bind, ExecuteStep, HttpMethod, Operation, PluginRef, Project, Resource, SqlStep, Step } from './ir.js';
import { parseXml, type RawAttribute, type RawElement } from './parse.js';
import { BUILTIN_PLUGINS } from './plugins.js';
import { binding, constant, RESERVED_WORDS } from './names.js';
import { scanSql, type Placeholder } from './sql.js';

/**
 * Stage 2: raw elements to the IR. Every check, and so every generation
 * error, lives here. Problems are collected, never thrown.
 */
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
  /** Parsed files kept by a long-running process, keyed by path and text; only clean parses are kept. */
  parsed?: Map<string, RawElement>;
}

/** The seed's §5.3 queries, for the default `usr` and `usr_role` tables. */
export const DEFAULT_AUTH_QUERIES = {
  // The seed's §5.3 queries compare $pass in SQL; these return the stored password instead, for the
  // server to verify its argon2id hash (or a plain-text row from before, in constant time).
  Basic: [
    'select r.user_id, r.role_name, u.pass_word',
    'from usr_role r inner join usr u on r.user_id = u.user_id',
    'where u.user_name = $user',
  ].join('\n'),
  Bearer: [
    'select cast(r.user_id as char) as sub, r.role_name as aud, u.pass_word',
    'from usr_role r inner join usr u on r.user_id = u.user_id',
    'where u.user_name = $user',
  ].join('\n'),
} as const;
const AUTH_QUERY_COLUMNS = { Basic: ['user_id', 'role_name'], Bearer: ['sub', 'aud'] } as const;

const METHODS: readonly HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
const BACKEND_NAME = /^[a-z][a-z0-9_-]*$/;
const RESOURCE_FILE = /^([a-z][a-z0-9_-]*)(?:@([0-9]+(?:\.[0-9]+)*))?\.xml$/;
const VERSION = /^[0-9]+(?:\.[0-9]+)*$/;
const ROLE = /^[A-Za-z0-9_.:-]{1,64}$/;
const STEP_ID = /^[A-Za-z_][A-Za-z0-9_]*$/;
const ARG_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Names the generated handler uses itself, or imports; a step may not shadow them. */
const RESERVED_STEP_IDS = new Set(['scope', 'params', 'uid', 'db', 'resource', 'cell', ...RESERVED_WORDS]);

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
  for (const [name, backendFiles] of byBackend) {
    const other = backendBindings.get(binding(name, 'Backend'));
    if (other) diagnostics.error(top(backendFiles[0]!.path), `backend "${name}" and backend "${other}" differ only in punctuation: rename one`);
    backendBindings.set(binding(name, 'Backend'), name);
    const settings = backendFiles.find((file) => file.path.endsWith('/backend.xml'));
    const backend = analyseBackend(name, settings, diagnostics, options.parsed);
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
    backends.push(backend);
  }
  return { backends };
}

// ---------------------------------------------------------------- backend.xml

interface BackendWithPlugins extends Backend {
  plugins: Map<string, PluginRef>;
}

function analyseBackend(name: string, file: SourceFile | undefined, diagnostics: Diagnostics, parsed?: Map<string, RawElement>): BackendWithPlugins {
  const backend: BackendWithPlugins = {
    name,
    source: file?.path ?? null,
    authScheme: null,
    authQuery: null,
    defaultTables: true,
    uidType: 'integer',
    tokenLifetime: 3600,
    clockSkew: 0,
    rehashPlaintext: false,
    credentialCacheSeconds: 60,
    issuer: name,
    iatUnit: 's',
    consoleRole: 'admin',
    absentCredentialsStatus: 403,
    resources: [],
    plugins: new Map(),
  };
  if (!file) return backend;
  const root = parseCached(file, diagnostics, parsed);
  if (!root) return backend;
  const attrs = new AttributeReader(root, diagnostics);
  if (root.name !== 'Backend') {
    diagnostics.error(root.at, `the root element of backend.xml is Backend, not ${root.name}`);
    return backend;
  }
  checkNamespace(attrs, diagnostics);
  const scheme = attrs.optional('auth_scheme');
  if (scheme !== undefined) {
    const normalised = scheme.value.toLowerCase();
    if (normalised === 'basic') backend.authScheme = 'Basic';
    else if (normalised === 'bearer') backend.authScheme = 'Bearer';
    else diagnostics.error(scheme.at, `auth_scheme is Basic or Bearer, not "${scheme.value}"`);
  }
  const lifetime = attrs.optional('token_lifetime');
  if (lifetime !== undefined) {
    if (/^[1-9][0-9]{0,8}$/.test(lifetime.value)) backend.tokenLifetime = Number(lifetime.value);
    else diagnostics.error(lifetime.at, `token_lifetime is a whole number of seconds, not "${lifetime.value}"`);
  }
  const skew = attrs.optional('clock_skew');
  if (skew !== undefined) {
    if (/^[0-9]{1,3}$/.test(skew.value) && Number(skew.value) <= 300) backend.clockSkew = Number(skew.value);
    else diagnostics.error(skew.at, `clock_skew is 0 to 300 seconds, not "${skew.value}"`);
  }
  const rehash = attrs.optional('rehash_plaintext');
  if (rehash !== undefined) {
    if (rehash.value === 'true' || rehash.value === 'false') backend.rehashPlaintext = rehash.value === 'true';
    else diagnostics.error(rehash.at, `rehash_plaintext is true or false, not "${rehash.value}"`);
  }
  const credentialCache = attrs.optional('credential_cache');
  if (credentialCache !== undefined) {
    if (/^[0-9]{1,4}$/.test(credentialCache.value)) backend.credentialCacheSeconds = Number(credentialCache.value);
    else diagnostics.error(credentialCache.at, `credential_cache is a number of seconds (0 turns it off), not "${credentialCache.value}"`);
  }
  const issuer = attrs.optional('issuer');
  if (issuer !== undefined) {
    if (issuer.value.trim() !== '') backend.issuer = issuer.value;
    else diagnostics.error(issuer.at, 'issuer must not be empty');
  }
  const iatUnit = attrs.optional('iat_unit');
  if (iatUnit !== undefined) {
    if (iatUnit.value === 's' || iatUnit.value === 'ms') backend.iatUnit = iatUnit.value;
    else diagnostics.error(iatUnit.at, `iat_unit is s or ms, not "${iatUnit.value}"`);
  }
  const consoleRole = attrs.optional('console_role');
  if (consoleRole !== undefined) {
    if (ROLE.test(consoleRole.value)) backend.consoleRole = consoleRole.value;
    else diagnostics.error(consoleRole.at, `console_role is not a valid role name: "${consoleRole.value}"`);
  }
  const absent = attrs.optional('absent_credentials');
  if (absent !== undefined) {
    if (absent.value === '403' || absent.value === '401') backend.absentCredentialsStatus = absent.value === '401' ? 401 : 403;
    else diagnostics.error(absent.at, `absent_credentials is 403 (the seed's rule) or 401, not "${absent.value}"`);
  }
  const uidType = attrs.optional('uid_type');
  if (uidType !== undefined) {
    if (uidType.value === 'integer' || uidType.value === 'text') backend.uidType = uidType.value;
    else diagnostics.error(uidType.at, `uid_type is integer or text, not "${uidType.value}"`);
  }
  attrs.rejectOthers();
  if (root.hasMixedText) diagnostics.error(root.at, 'Backend holds only elements, not text');

  let customQuery: RawElement | undefined;
  for (const child of root.children) {
    if (child.name === 'AuthQuery') {
      if (customQuery) diagnostics.error(child.at, 'only one AuthQuery per backend');
      customQuery = child;
      new AttributeReader(child, diagnostics).rejectOthers();
    } else if (child.name === 'Plugin') {
      analysePluginDeclaration(child, backend, diagnostics);
    } else if (child.name === 'Desc') {
      new AttributeReader(child, diagnostics).rejectOthers();
    } else {
      diagnostics.error(child.at, `unknown element in Backend: ${child.name} (expected AuthQuery, Plugin or Desc)`);
    }
  }
  backend.defaultTables = customQuery === undefined;
  if (backend.authScheme !== null) {
    backend.authQuery = analyseAuthQuery(backend.authScheme, customQuery, root, diagnostics);
  } else if (customQuery) {
    diagnostics.error(customQuery.at, 'an AuthQuery needs auth_scheme on Backend');
  }
  return backend;
}

function analyseAuthQuery(scheme: 'Basic' | 'Bearer', element: RawElement | undefined, root: RawElement, diagnostics: Diagnostics): AuthQuery {
  const text = element ? element.text : DEFAULT_AUTH_QUERIES[scheme];
  const scanned = scanSql(text);
  const locate = (offset: number) => (element ? element.locate(offset) : root.at);
  for (const problem of scanned.problems) diagnostics.error(locate(problem.offset), `AuthQuery: ${problem.message}`);
  const binds: ('user' | 'pass')[] = [];
  for (const placeholder of scanned.placeholders) {
    if (placeholder.kind === 'param' && (placeholder.name === 'user' || placeholder.name === 'pass')) binds.push(placeholder.name);
    else diagnostics.error(element?.at ?? root.at, `AuthQuery may use only $user and $pass, not ${describePlaceholder(placeholder)}`);
  }
  if (scanned.statement !== 'read') diagnostics.error(element?.at ?? root.at, 'AuthQuery must be a SELECT');
  const required = AUTH_QUERY_COLUMNS[scheme];
  if (scanned.columns !== null) {
    const missing = required.filter((column) => !scanned.columns!.includes(column));
    if (missing.length > 0) {
      diagnostics.error(element?.at ?? root.at, `a ${scheme} AuthQuery returns the columns ${required.join(' and ')}; missing: ${missing.join(', ')}`);
    }
  }
  // Either the query compares $pass itself (as the seed's do), or it returns pass_word for the server to verify.
  let passwordColumn: string | null = null;
  if (!binds.includes('pass')) {
    if (scanned.columns !== null && !scanned.columns.includes('pass_word')) {
      diagnostics.error(element?.at ?? root.at, 'an AuthQuery compares $pass in SQL, or returns a pass_word column for the server to verify');
    }
    passwordColumn = 'pass_word';
  }
  return { sql: scanned.sql, binds, passwordColumn };
}

function analysePluginDeclaration(element: RawElement, backend: BackendWithPlugins, diagnostics: Diagnostics): void {
  const attrs = new AttributeReader(element, diagnostics);
  const classname = attrs.required('classname');
  const use = attrs.optional('use');
  const module = attrs.optional('module');
  const exportName = attrs.optional('export');
  attrs.rejectOthers();
  if (!classname) return;
  if (backend.plugins.has(classname.value) || BUILTIN_PLUGINS.has(classname.value)) {
    diagnostics.error(classname.at, `plug-in class declared twice: ${classname.value}`);
    return;
  }
  if (use && !module && !exportName) {
    const target = BUILTIN_PLUGINS.get(use.value) ?? backend.plugins.get(use.value);
    if (target) backend.plugins.set(classname.value, { ...target, classname: classname.value });
    else diagnostics.error(use.at, `alias of an unknown plug-in class: ${use.value}`);
  } else if (module && exportName && !use) {
    if (!/^[A-Za-z0-9_./-]+\.ts$/.test(module.value) || module.value.includes('..')) {
      diagnostics.error(module.at, `module is a project-relative .ts path: ${module.value}`);
    } else if (!ARG_NAME.test(exportName.value)) {
      diagnostics.error(exportName.at, `export is the name of an exported function: ${exportName.value}`);
    } else {
      backend.plugins.set(classname.value, { classname: classname.value, module: module.value, exportName: exportName.value, builtin: false });
    }
  } else {
    diagnostics.error(element.at, 'a Plugin has either use="<classname>" (an alias) or module="<path>.ts" and export="<name>"');
  }
}

// ---------------------------------------------------------------- resources

function analyseResource(file: SourceFile, backend: BackendWithPlugins, diagnostics: Diagnostics, options: AnalyseOptions): Resource | undefined {
  const fileName = file.path.split('/').at(-1)!;
  const nameMatch = RESOURCE_FILE.exec(fileName);
  if (!nameMatch) {
    diagnostics.error(top(file.path), `resource file names are lower-case <name>.xml or <name>@<version>.xml: ${fileName}`);
    return undefined;
  }
  if (nameMatch[1] === 'index') {
    diagnostics.error(top(file.path), 'the resource name "index" is reserved for the backend\'s own module: rename the file');
    return undefined;
  }
  const root = parseCached(file, diagnostics, options.parsed);
  if (!root) return undefined;
  if (root.name !== 'Resource') {
    diagnostics.error(root.at, `the root element is Resource, not ${root.name}`);
    return undefined;
  }
  const attrs = new AttributeReader(root, diagnostics);
  checkNamespace(attrs, diagnostics);
  const v = attrs.required('v');
  const auth = attrs.optional('auth');
  attrs.rejectOthers();
  const errorsBefore = diagnostics.count;

  let version = nameMatch[2] ?? '1.0';
  if (v) {
    if (!VERSION.test(v.value)) diagnostics.error(v.at, `v is a version such as 1.0, not "${v.value}"`);
    else if (nameMatch[2] !== undefined && nameMatch[2] !== v.value) {
      diagnostics.error(v.at, `the file name says version ${nameMatch[2]} but v says ${v.value}`);
    } else version = v.value;
  }
  if (auth) {
    if (!ROLE.test(auth.value)) diagnostics.error(auth.at, `auth is one role name (letters, digits, _ . : -), not "${auth.value}"`);
    else if (backend.authScheme === null) {
      diagnostics.error(auth.at, `resource is protected but backend "${backend.name}" has no auth_scheme: add resources/${backend.name}/backend.xml with auth_scheme="Basic" or "Bearer"`);
    }
  }
  if (root.hasMixedText) diagnostics.error(root.at, 'Resource holds only Desc and Request elements, not text');

  let description: string | null = null;
  const operations: Operation[] = [];
  const stepIds = new Map<string, SourceLocation>();
  const allStepIds = new Set(
    root.children.flatMap((request) => request.children.flatMap((step) => step.attributes.filter((a) => a.name === 'id').map((a) => a.value))),
  );
  for (const child of root.children) {
    if (child.name === 'Desc') {
      if (description !== null) diagnostics.error(child.at, 'only one Desc per Resource');
      description = readDesc(child, diagnostics);
    } else if (child.name === 'Request') {
      const operation = analyseRequest(child, { backend, auth: auth?.value ?? null, file, stepIds, allStepIds, options }, diagnostics);
      if (!operation) continue;
      if (operations.some((other) => other.method === operation.method)) {
        diagnostics.error(child.at, `a second ${operation.method} Request: one Request per method`);
      } else operations.push(operation);
    } else {
      diagnostics.error(child.at, `unknown element in Resource: ${child.name} (expected Desc or Request)`);
    }
  }
  if (operations.length === 0 && root.children.every((child) => child.name !== 'Request')) {
    diagnostics.error(root.at, 'a Resource needs at least one Request');
  }
  checkStepNames(operations, diagnostics);
  if (diagnostics.count > errorsBefore) return undefined;
  operations.sort((a, b) => METHODS.indexOf(a.method) - METHODS.indexOf(b.method));
  return { backend: backend.name, name: nameMatch[1]!, version, auth: auth?.value ?? null, source: file.path, description, operations };
}

interface RequestContext {
  backend: BackendWithPlugins;
  auth: string | null;
  file: SourceFile;
  stepIds: Map<string, SourceLocation>;
  /** Every step id of the file, to tell a later step from an unknown one. */
  allStepIds: Set<string>;
  options: AnalyseOptions;
}

function analyseRequest(element: RawElement, context: RequestContext, diagnostics: Diagnostics): Operation | undefined {
  const attrs = new AttributeReader(element, diagnostics);
  const method = attrs.required('method');
  const status = attrs.optional('status');
  attrs.rejectOthers();
  if (element.hasMixedText) diagnostics.error(element.at, 'Request holds only Desc, Sql and Execute elements, not text');
  let httpMethod: HttpMethod | undefined;
  if (method) {
    const upper = method.value.toUpperCase() as HttpMethod;
    if (METHODS.includes(upper)) httpMethod = upper;
    else diagnostics.error(method.at, `method is one of ${METHODS.join(', ')}, not "${method.value}"`);
  }
  let httpStatus = 200;
  if (status) {
    if (/^2[0-9][0-9]$/.test(status.value) && status.value !== '204') httpStatus = Number(status.value);
    else diagnostics.error(status.at, `status is a success status with a body (200-299, not 204), not "${status.value}"`);
  }

  let description: string | null = null;
  const steps: Step[] = [];
  const params: string[] = [];
  let usesUid = false;
  const bindOf = (placeholder: Placeholder, at: SourceLocation, where: string): Bind | undefined => {
    if (placeholder.kind === 'param') {
      if (!params.includes(placeholder.name)) params.push(placeholder.name);
      return placeholder;
    }
    if (placeholder.kind === 'uid') {
      usesUid = true;
      if (context.auth === null) {
        diagnostics.error(at, `${where} uses $uid but the resource has no auth attribute: $uid is the authenticated user's id`);
        return undefined;
      }
      return placeholder;
    }
    const target = steps.find((step) => step.id === placeholder.step);
    if (!target) {
      const known = context.allStepIds.has(placeholder.step);
      diagnostics.error(at, `${where} refers to ${known ? "a later step or another request's step" : 'an unknown step'}: ${placeholder.step}`);
      return undefined;
    }
    if (target.kind === 'execute') return { ...placeholder, target: 'plugin', at };
    if (target.statement === 'write') {
      if (placeholder.column !== 'affectedRows' && placeholder.column !== 'insertId') {
        diagnostics.error(at, `${where} reads column "${placeholder.column}" of write step "${target.id}", which gives affectedRows and insertId`);
        return undefined;
      }
      if (placeholder.row !== 0) {
        diagnostics.error(at, `${where} reads row ${placeholder.row} of write step "${target.id}", which has one row: 0`);
        return undefined;
      }
      return { ...placeholder, target: 'write', at };
    }
    if (target.columns !== null && !target.columns.includes(placeholder.column)) {
      diagnostics.error(at, `${where} reads unknown column "${placeholder.column}" of step "${target.id}" (it returns ${target.columns.join(', ')})`);
      return undefined;
    }
    return { ...placeholder, target: 'rows', at };
  };

  for (const child of element.children) {
    if (child.name === 'Desc') {
      if (description !== null) diagnostics.error(child.at, 'only one Desc per Request');
      description = readDesc(child, diagnostics);
      continue;
    }
    if (child.name !== 'Sql' && child.name !== 'Execute') {
      diagnostics.error(child.at, `unknown element in Request: ${child.name} (expected Desc, Sql or Execute)`);
      continue;
    }
    const stepAttrs = new AttributeReader(child, diagnostics);
    const idAttr = stepAttrs.optional('id');
    const outputAttr = stepAttrs.optional('output');
    const classnameAttr = child.name === 'Execute' ? stepAttrs.required('classname') : undefined;
    stepAttrs.rejectOthers();
    const id = idAttr?.value ?? automaticStepId(context);
    if (idAttr) {
      if (!STEP_ID.test(id)) diagnostics.error(idAttr.at, `a step id is a name (letters, digits, _), not "${id}"`);
      else if (RESERVED_STEP_IDS.has(id)) diagnostics.error(idAttr.at, `step id "${id}" is reserved: rename the step`);
    }
    const earlier = context.stepIds.get(id);
    if (earlier) diagnostics.error(idAttr?.at ?? child.at, `duplicate step id "${id}" (first at line ${earlier.line})`);
    else context.stepIds.set(id, idAttr?.at ?? child.at);
    let output = true;
    if (outputAttr) {
      if (outputAttr.value === 'true' || outputAttr.value === 'false') output = outputAttr.value === 'true';
      else diagnostics.error(outputAttr.at, `output is true or false, not "${outputAttr.value}"`);
    }
    const where = `step "${id}"`;

    if (child.name === 'Sql') {
      if (child.children.length > 0) diagnostics.error(child.children[0]!.at, `Sql holds only the statement, not ${child.children[0]!.name}`);
      const scanned = scanSql(child.text);
      for (const problem of scanned.problems) diagnostics.error(child.locate(problem.offset), `${where}: ${problem.message}`);
      const binds: Bind[] = [];
      for (const [index, placeholder] of scanned.placeholders.entries()) {
        const bind = bindOf(placeholder, child.locate(scanned.placeholderOffsets[index]!), where);
        if (bind) binds.push(bind);
      }
      const step: SqlStep = {
        kind: 'sql',
        id,
        output,
        description: null,
        sql: scanned.sql,
        binds,
        statement: scanned.statement,
        columns: scanned.columns,
        typed: null,
        paramTargets: scanned.paramTargets,
        at: child.at,
      };
      steps.push(step);
    } else {
      if (child.text.trim() !== '') diagnostics.error(child.at, 'Execute holds only Arg elements, not text');
      const plugin = classnameAttr ? resolvePlugin(classnameAttr, context, diagnostics) : undefined;
      const args: ExecuteStep['args'] = [];
      for (const argElement of child.children) {
        if (argElement.name !== 'Arg') {
          diagnostics.error(argElement.at, `unknown element in Execute: ${argElement.name} (expected Arg)`);
          continue;
        }
        const argAttrs = new AttributeReader(argElement, diagnostics);
        const name = argAttrs.required('name');
        const value = argAttrs.required('value');
        argAttrs.rejectOthers();
        if (!name || !value) continue;
        if (!ARG_NAME.test(name.value)) diagnostics.error(name.at, `an Arg name is a name (letters, digits, _), not "${name.value}"`);
        else if (args.some((arg) => arg.name === name.value)) diagnostics.error(name.at, `duplicate Arg "${name.value}"`);
        const bind = argBind(value, where, bindOf, diagnostics);
        if (bind) args.push({ name: name.value, bind, at: name.at });
      }
      if (plugin) steps.push({ kind: 'execute', id, output, description: null, plugin, args, at: child.at });
    }
  }
  if (steps.length === 0) diagnostics.error(element.at, 'a Request needs at least one Sql or Execute step');
  if (!httpMethod) return undefined;
  const sqlSteps = steps.filter((step): step is SqlStep => step.kind === 'sql');
  const transaction = sqlSteps.length > 1 || sqlSteps.some((step) => step.statement === 'write');
  return { method: httpMethod, status: httpStatus, description, params, paramTypes: {}, usesUid, transaction, steps };
}

/** An Arg value is a whole placeholder (`$name`, `$uid`, `$[step][row].column`) or a literal string. */
function argBind(
  value: RawAttribute,
  where: string,
  bindOf: (placeholder: Placeholder, at: SourceLocation, where: string) => Bind | undefined,
  diagnostics: Diagnostics,
): Bind | undefined {
  if (!value.value.startsWith('$')) return { kind: 'literal', value: value.value };
  const scanned = scanSql(value.value);
  const only = scanned.placeholders[0];
  if (scanned.placeholders.length !== 1 || scanned.sql !== '?' || !only) {
    diagnostics.error(value.at, `${where}: an Arg value is one of $name, $uid or $[step][row].column, or a text not starting with $: "${value.value}"`);
    return undefined;
  }
  return bindOf(only, value.at, where);
}

/** `step1`, `step2`, ... numbered across the resource, skipping ids that are taken. */
function automaticStepId(context: RequestContext): string {
  for (let n = 1; ; n++) {
    const id = `step${n}`;
    if (!context.stepIds.has(id) && !context.allStepIds.has(id)) return id;
  }
}

function resolvePlugin(classname: RawAttribute, context: RequestContext, diagnostics: Diagnostics): PluginRef | undefined {
  const plugin = context.backend.plugins.get(classname.value) ?? BUILTIN_PLUGINS.get(classname.value);
  if (!plugin) {
    diagnostics.error(
      classname.at,
      `unknown plug-in class: ${classname.value} (declare it in resources/${context.backend.name}/backend.xml as <Plugin classname="..." module="plugins/x.ts" export="x"/>, or alias a built-in with use="xmlrest.auth.TokenGenerator")`,
    );
    return undefined;
  }
  if (plugin.builtin && plugin.exportName === 'tokenGenerator' && context.backend.authScheme !== 'Bearer') {
    diagnostics.error(classname.at, `${classname.value} issues Bearer tokens: backend "${context.backend.name}" needs auth_scheme="Bearer"`);
    return undefined;
  }
  if (!plugin.builtin && !context.options.exists(plugin.module)) {
    diagnostics.error(classname.at, `plug-in module not found: ${plugin.module}`);
    return undefined;
  }
  return plugin;
}

/** Two step ids that become one TypeScript name, or a step named like an imported plug-in, would not compile. */
function checkStepNames(operations: Operation[], diagnostics: Diagnostics): void {
  const steps = operations.flatMap((operation) => operation.steps);
  const imports = new Set(steps.flatMap((step) => (step.kind === 'execute' ? [step.plugin.exportName] : [])));
  const names = new Map<string, string>();
  for (const step of steps) {
    if (imports.has(step.id)) diagnostics.error(step.at, `step id "${step.id}" is the name of the plug-in it would shadow: rename the step`);
    // FOO_BAR_SQL and FooBarRow both come from the same words, so one key covers both.
    const other = names.get(constant(step.id));
    if (other !== undefined && other !== step.id) diagnostics.error(step.at, `step ids "${other}" and "${step.id}" differ only in case or punctuation: rename one`);
    names.set(constant(step.id), step.id);
  }
}

// ---------------------------------------------------------------- helpers

function parseCached(file: SourceFile, diagnostics: Diagnostics, cache: Map<string, RawElement> | undefined): RawElement | undefined {
  const key = `${file.path}\0${file.text}`;
  const cached = cache?.get(key);
  if (cached) return cached;
  const before = diagnostics.count;
  const root = parseXml(file.path, file.text, diagnostics);
  if (root && diagnostics.count === before) cache?.set(key, root);
  return root;
}

/** Reads attributes by name, then reports every one nobody asked for. */
class AttributeReader {
  private readonly used = new Set<string>();
  constructor(private readonly element: RawElement, private readonly diagnostics: Diagnostics) {}

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

function checkNamespace(attrs: AttributeReader, diagnostics: Diagnostics): void {
  const xmlns = attrs.optional('xmlns');
  if (xmlns && xmlns.value !== RESOURCE_NAMESPACE) {
    diagnostics.error(xmlns.at, `the namespace is ${RESOURCE_NAMESPACE} (or none), not "${xmlns.value}"`);
  }
}

function readDesc(element: RawElement, diagnostics: Diagnostics): string {
  new AttributeReader(element, diagnostics).rejectOthers();
  if (element.children.length > 0) diagnostics.error(element.children[0]!.at, 'Desc holds only text');
  return element.text.trim().replace(/\s+/g, ' ');
}

function describePlaceholder(placeholder: Placeholder): string {
  if (placeholder.kind === 'param') return `$${placeholder.name}`;
  if (placeholder.kind === 'uid') return '$uid';
  return `$[${placeholder.step}][${placeholder.row}].${placeholder.column}`;
}

function top(file: string): SourceLocation {
  return { file, line: 1, col: 1 };
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function compareVersions(a: string, b: string): number {
  const left = a.split('.').map(Number);
  const right = b.split('.').map(Number);
  for (let i = 0; i < Math.max(left.length, right.length); i++) {
    const difference = (left[i] ?? 0) - (right[i] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}
