import { HTTP_METHODS } from '../../runtime/contract.js';
import type { Diagnostics, SourceLocation } from '../diagnostics.js';
import type { Operation, Resource } from '../ir.js';
import { constant } from '../names.js';
import { readAccess, readRateLimit } from './access.js';
import { checkResourceAuditParams, readAuditParams } from './audit.js';
import type { BackendWithPlugins } from './backend-plugins.js';
import { type AnalyseOptions, AttributeReader, checkNamespace, parseCached, readBool, readDesc, type SourceFile, top } from './elements.js';
import { checkEventNames } from './emit.js';
import { analyseRequest } from './request.js';
import { settleValidatorKind } from './validator.js';

/** A resource file: its name and version from the file name and `v`, its `auth`, its requests. */
const RESOURCE_FILE = /^([a-z][a-z0-9_-]*)(?:@([0-9]+(?:\.[0-9]+)*))?\.xml$/;
const VERSION = /^[0-9]+(?:\.[0-9]+)*$/;

export function analyseResource(file: SourceFile, backend: BackendWithPlugins, diagnostics: Diagnostics, options: AnalyseOptions): Resource | undefined {
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
  const rate = attrs.optional('rate_limit');
  const auditAttr = attrs.optional('audit');
  const auditParams = readAuditParams(attrs.optional('audit_params'), diagnostics);
  attrs.rejectOthers();
  const errorsBefore = diagnostics.count;

  let version = nameMatch[2] ?? '1.0';
  if (v) {
    if (!VERSION.test(v.value)) diagnostics.error(v.at, `v is a version such as 1.0, not "${v.value}"`);
    else if (nameMatch[2] !== undefined && nameMatch[2] !== v.value) {
      diagnostics.error(v.at, `the file name says version ${nameMatch[2]} but v says ${v.value}`);
    } else version = v.value;
  }
  // Undefined when the attribute is wrong (reported): its requests are still checked as if protected.
  const access = auth ? readAccess(auth, 'Resource', backend, diagnostics) : null;
  const rateLimit = rate ? readRateLimit(rate, diagnostics) : null;
  const audit = auditAttr ? (readBool(auditAttr, diagnostics) ?? false) : false;
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
      const operation = analyseRequest(
        child,
        { backend, access: access === undefined ? '*' : access, rateLimit, audit, auditParams, file, stepIds, allStepIds, options },
        diagnostics,
      );
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
  checkResourceAuditParams(auditParams, operations, diagnostics);
  checkStepNames(operations, diagnostics);
  checkEventNames(operations, diagnostics);
  // A versioned write's column (its Request's `version`): a GET's Validator then tags with it (analyse/validator.ts).
  const versions = root.children.flatMap((child) => (child.name === 'Request' ? child.attributes.filter((attribute) => attribute.name === 'version') : []));
  settleValidatorKind(operations, versions, diagnostics);
  if (diagnostics.count > errorsBefore) return undefined;
  operations.sort((a, b) => HTTP_METHODS.indexOf(a.method) - HTTP_METHODS.indexOf(b.method));
  return { backend: backend.name, name: nameMatch[1]!, version, auth: auth?.value ?? null, source: file.path, description, operations };
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
    if (other !== undefined && other !== step.id)
      diagnostics.error(step.at, `step ids "${other}" and "${step.id}" differ only in case or punctuation: rename one`);
    names.set(constant(step.id), step.id);
  }
}
