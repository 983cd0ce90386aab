import type { RateLimit } from '../../runtime/contract.js';
import { HTTP_METHODS } from '../../runtime/contract.js';
import type { Diagnostics, SourceLocation } from '../diagnostics.js';
import type { Access, Bind, Emit, ExecuteStep, HttpMethod, Operation, PluginRef, SqlStep, Step } from '../ir.js';
import { RESERVED_WORDS } from '../names.js';
import { BUILTIN_PLUGINS } from '../plugins.js';
import { type Placeholder, scanSql } from '../sql/index.js';
import { readAccess, readRateLimit } from './access.js';
import { type AuditParams, readAuditParams, requestAuditParams } from './audit.js';
import { ARG_NAME, type BackendWithPlugins } from './backend-plugins.js';
import { type AnalyseOptions, AttributeReader, type RawAttribute, type RawElement, readBool, readDesc, type SourceFile, scanCached } from './elements.js';
import { analyseEmit, checkEmitsWrite } from './emit.js';
import { readIdempotency } from './idempotency.js';
import { analyseList, LIST_ELEMENTS } from './list.js';
import { readOwner } from './ownership.js';
import { STEP_SOURCES, type StepSource } from './step-sources.js';
import { checkPluginTenant, checkTenantParam, readStepTenant, tenantBindable } from './tenant.js';
import { analyseValidator, readMaxAge } from './validator.js';
import { analyseVersion } from './version.js';

/** A request of a resource file: its method, status and steps, each bind checked against the steps before it. */
const STEP_ID = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Names the generated handler uses itself, or imports; a step may not shadow them. */
const RESERVED_STEP_IDS = new Set(['scope', 'params', 'uid', 'tenant', 'db', 'resource', 'cell', ...RESERVED_WORDS]);

export interface RequestContext {
  backend: BackendWithPlugins;
  /** The resource's access, which a Request's own `auth` replaces. */
  access: Access;
  /** The resource's rate limit, which a Request's own `rate_limit` replaces. */
  rateLimit: RateLimit | null;
  /** The resource's `audit`, which a Request's own replaces (docs/internals/contract.md §12). */
  audit: boolean;
  /** The resource's `audit_params`, which a Request's own replaces. */
  auditParams: AuditParams | undefined;
  file: SourceFile;
  stepIds: Map<string, SourceLocation>;
  /** Every step id of the file, to tell a later step from an unknown one. */
  allStepIds: Set<string>;
  options: AnalyseOptions;
}

export function analyseRequest(element: RawElement, context: RequestContext, diagnostics: Diagnostics): Operation | undefined {
  const attrs = new AttributeReader(element, diagnostics);
  const method = attrs.required('method');
  const status = attrs.optional('status');
  const own = attrs.optional('auth');
  const ownRate = attrs.optional('rate_limit');
  const owner = readOwner(attrs.optional('owner'), diagnostics);
  const ownAudit = attrs.optional('audit');
  const ownAuditParams = readAuditParams(attrs.optional('audit_params'), diagnostics);
  const versionAttr = attrs.optional('version');
  const ifMatchAttr = attrs.optional('if_match');
  const ownIdempotency = attrs.optional('idempotency');
  const maxAgeAttr = attrs.optional('max_age');
  attrs.rejectOthers();
  const audit = ownAudit ? (readBool(ownAudit, diagnostics) ?? context.audit) : context.audit;
  const rateLimit = ownRate ? readRateLimit(ownRate, diagnostics) : context.rateLimit;
  // A Request's own auth replaces the resource's; auth="" makes the method public (docs/internals/contract.md §8).
  const ownAccess = own ? readAccess(own, 'Request', context.backend, diagnostics) : undefined;
  const access = own ? (ownAccess === undefined ? '*' : ownAccess) : context.access;
  if (element.hasMixedText) diagnostics.error(element.at, 'Request holds only Desc, Validator, Sql, Execute, Emit, Page, Filter and Sort elements, not text');
  let httpMethod: HttpMethod | undefined;
  if (method) {
    const upper = method.value.toUpperCase() as HttpMethod;
    if (HTTP_METHODS.includes(upper)) httpMethod = upper;
    else diagnostics.error(method.at, `method is one of ${HTTP_METHODS.join(', ')}, not "${method.value}"`);
  }
  let httpStatus = 200;
  if (status) {
    if (/^2[0-9][0-9]$/.test(status.value) && status.value !== '204') httpStatus = Number(status.value);
    else diagnostics.error(status.at, `status is a success status with a body (200-299, not 204), not "${status.value}"`);
  }

  let description: string | null = null;
  const steps: Step[] = [];
  const emits: Emit[] = [];
  const params: string[] = [];
  /** Page, Filter and Sort (docs/internals/contract.md §11), read once the steps are known; and each Sql step's text as written. */
  const listElements: RawElement[] = [];
  /** `<Validator>` (docs/internals/contract.md §15), read once the steps are known. */
  const validatorElements: RawElement[] = [];
  const texts = new Map<SqlStep, string>();
  const sources = new Map<SqlStep, StepSource>();
  let usesUid = false;
  let usesTenant = false;
  const bindOf = (placeholder: Placeholder, at: SourceLocation, where: string): Bind | undefined => {
    if (placeholder.kind === 'param') {
      if (!params.includes(placeholder.name)) params.push(placeholder.name);
      return placeholder;
    }
    if (placeholder.kind === 'claim') {
      diagnostics.error(at, `${where} uses $claim.${placeholder.name}, which only an Issuer's UserQuery in backend.xml may use`);
      return undefined;
    }
    if (placeholder.kind === 'uid') {
      usesUid = true;
      if (access === null) {
        const why = own ? `${method?.value.toUpperCase() ?? 'the request'} is public (auth="")` : 'the resource has no auth attribute';
        diagnostics.error(at, `${where} uses $uid but ${why}: $uid is the authenticated user's id`);
        return undefined;
      }
      return placeholder;
    }
    if (placeholder.kind === 'tenant') {
      const publicBecause = own ? `${method?.value.toUpperCase() ?? 'the request'} is public (auth="")` : 'the resource has no auth attribute';
      if (!tenantBindable(context.backend, access === null ? publicBecause : null, at, where, diagnostics)) return undefined;
      usesTenant = true;
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
    if (child.name === 'Emit') {
      const bind = (value: RawAttribute, where: string) => argBind(value, where, bindOf, diagnostics);
      const emit = analyseEmit(child, { backend: context.backend, steps, allStepIds: context.allStepIds, bind }, diagnostics);
      if (emit) emits.push(emit);
      continue;
    }
    if (LIST_ELEMENTS.has(child.name)) {
      listElements.push(child);
      continue;
    }
    if (child.name === 'Validator') {
      validatorElements.push(child);
      continue;
    }
    if (child.name !== 'Sql' && child.name !== 'Execute') {
      diagnostics.error(child.at, `unknown element in Request: ${child.name} (expected Desc, Validator, Sql, Execute, Emit, Page, Filter or Sort)`);
      continue;
    }
    const stepAttrs = new AttributeReader(child, diagnostics);
    const idAttr = stepAttrs.optional('id');
    const outputAttr = stepAttrs.optional('output');
    const classnameAttr = child.name === 'Execute' ? stepAttrs.required('classname') : undefined;
    const tenant = readStepTenant(stepAttrs.optional('tenant'), context.backend, diagnostics);
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
      const scanned = scanCached(child.text, context.options.scans);
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
        ...(tenant ? { tenant } : {}),
      };
      steps.push(step);
      texts.set(step, child.text);
      sources.set(step, { text: child.text, locate: (offset) => child.locate(offset) });
      // What the tenant proof reads (analyse/tenant-proof.ts): the text as written, and where its offsets are.
      if (context.backend.tenant) STEP_SOURCES.set(step, { text: child.text, locate: (offset) => child.locate(offset) });
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
      if (plugin) checkPluginTenant(plugin, tenant, context.backend, child.at, where, diagnostics);
      if (plugin) steps.push({ kind: 'execute', id, output, description: null, plugin, args, at: child.at, ...(tenant ? { tenant } : {}) });
    }
  }
  if (steps.length === 0) diagnostics.error(element.at, 'a Request needs at least one Sql or Execute step');
  checkEmitsWrite(emits, steps, diagnostics);
  const version = analyseVersion(versionAttr, ifMatchAttr, { method: httpMethod, steps, sources, backend: context.backend, at: element.at }, diagnostics);
  const validator = analyseValidator(
    validatorElements,
    { method: method?.value.toUpperCase(), tenant: context.backend.tenant !== undefined, file: context.file, options: context.options },
    bindOf,
    diagnostics,
  );
  const maxAge = readMaxAge(maxAgeAttr, method?.value.toUpperCase(), access === null, diagnostics);
  if (!httpMethod) return undefined;
  const list = analyseList(listElements, { method: httpMethod, steps, params, texts }, diagnostics);
  const allParams = list ? [...params, ...list.params] : params;
  checkTenantParam(allParams, context.backend, element.at, diagnostics);
  const auditParams = requestAuditParams(ownAuditParams, context.auditParams, { audit, method: httpMethod, params: allParams }, diagnostics);
  const sqlSteps = steps.filter((step): step is SqlStep => step.kind === 'sql');
  const transaction = sqlSteps.length > 1 || sqlSteps.some((step) => step.statement === 'write');
  const idempotency = readIdempotency(ownIdempotency, { method: httpMethod, transaction }, diagnostics);
  // A request that checks credentials reads its fields from the body only, so it needs a body.
  const login = steps.find((step): step is ExecuteStep => step.kind === 'execute' && step.plugin.login === true);
  if (login && (httpMethod === 'GET' || httpMethod === 'DELETE')) {
    diagnostics.error(login.at, `${login.plugin.classname} reads credentials from the request body only: call it from a POST request, not ${httpMethod}`);
  }
  return {
    method: httpMethod,
    status: httpStatus,
    description,
    params: allParams,
    paramTypes: list ? { ...list.types } : {},
    access,
    rateLimit,
    ...(owner ? { owner } : {}),
    usesUid,
    ...(context.backend.tenant && access !== null ? { tenant: { binds: usesTenant } } : {}),
    transaction,
    ...(login ? { paramsFromBody: true as const } : {}),
    steps,
    ...(emits.length > 0 ? { emits } : {}),
    ...(audit ? { audit: true as const } : {}),
    ...(auditParams ? { auditParams } : {}),
    ...(version ? { version } : {}),
    ...(idempotency ? { idempotency } : {}),
    ...(validator ? { validator } : {}),
    ...(maxAge !== undefined ? { maxAge } : {}),
  };
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
