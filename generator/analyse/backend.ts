import { defaultAuthQuery } from '../../runtime/auth/users/user-tables.js';
import {
  AUTH_SCHEMES,
  type AuthSchemeName,
  DEFAULT_BATCH_MAX_OPERATIONS,
  DEFAULT_BATCH_TIMEOUT_SECONDS,
  DEFAULT_CONSOLE_ROLE,
} from '../../runtime/contract.js';
import type { Diagnostics, SourceLocation } from '../diagnostics.js';
import type { AuthQuery, Backend } from '../ir.js';
import { BUILTIN_PLUGINS } from '../plugins.js';
import { scanSql } from '../sql/index.js';
import { ARG_NAME, type BackendWithPlugins } from './backend-plugins.js';
import {
  type AnalyseOptions,
  AttributeReader,
  type AttributeRule,
  rule as attributeRule,
  checkNamespace,
  describePlaceholder,
  parseCached,
  type RawElement,
  ROLE,
  type SourceFile,
} from './elements.js';
import { analyseIssuer } from './issuer.js';
import { analyseRolesQuery, checkSessionQueries } from './roles-query.js';
import { finishTenant, type ReadTenant, readTenant } from './tenant.js';
import { analyseWebhook } from './webhook.js';

const AUTH_QUERY_COLUMNS = { Basic: ['user_id', 'role_name'], Bearer: ['sub', 'aud'] } as const;

/** One rule per attribute of `Backend` (adding one is adding a row, and the setting to `BackendSettings`). */
const rule = <K extends keyof Backend>(name: string, field: K, parse: (value: string) => Backend[K] | undefined, error: (value: string) => string) =>
  attributeRule<Backend, K>(name, field, parse, error);

const whole =
  (pattern: RegExp, max = Infinity) =>
  (value: string) =>
    pattern.test(value) && Number(value) <= max ? Number(value) : undefined;
const oneOf =
  <T extends string>(...values: readonly T[]) =>
  (value: string) =>
    values.find((candidate) => candidate === value);
const bool = (value: string) => (value === 'true' ? true : value === 'false' ? false : undefined);

export const BACKEND_ATTRIBUTES: readonly AttributeRule<Backend>[] = [
  rule(
    'auth_scheme',
    'authScheme',
    (value) => AUTH_SCHEMES.find((scheme) => scheme.toLowerCase() === value.toLowerCase()),
    (value) => `auth_scheme is ${AUTH_SCHEMES.join(' or ')}, not "${value}"`,
  ),
  rule('token_lifetime', 'tokenLifetime', whole(/^[1-9][0-9]{0,8}$/), (value) => `token_lifetime is a whole number of seconds, not "${value}"`),
  rule('clock_skew', 'clockSkew', whole(/^[0-9]{1,3}$/, 300), (value) => `clock_skew is 0 to 300 seconds, not "${value}"`),
  rule('rehash_plaintext', 'rehashPlaintext', bool, (value) => `rehash_plaintext is true or false, not "${value}"`),
  rule(
    'credential_cache',
    'credentialCacheSeconds',
    whole(/^[0-9]{1,4}$/),
    (value) => `credential_cache is a number of seconds (0 turns it off), not "${value}"`,
  ),
  rule(
    'issuer',
    'issuer',
    (value) => (value.trim() !== '' ? value : undefined),
    () => 'issuer must not be empty',
  ),
  rule('iat_unit', 'iatUnit', oneOf('s', 'ms'), (value) => `iat_unit is s or ms, not "${value}"`),
  rule(
    'console_role',
    'consoleRole',
    (value) => (ROLE.test(value) ? value : undefined),
    (value) => `console_role is not a valid role name: "${value}"`,
  ),
  rule(
    'absent_credentials',
    'absentCredentialsStatus',
    (value) => (value === '403' ? 403 : value === '401' ? 401 : undefined),
    (value) => `absent_credentials is 403 (the seed's rule) or 401, not "${value}"`,
  ),
  rule('uid_type', 'uidType', oneOf('integer', 'text'), (value) => `uid_type is integer or text, not "${value}"`),
  rule(
    'refresh_lifetime',
    'refreshLifetime',
    whole(/^[1-9][0-9]{1,8}$/),
    (value) => `refresh_lifetime is a whole number of seconds (at least 10), not "${value}"`,
  ),
  rule(
    'session_lifetime',
    'sessionLifetime',
    whole(/^[1-9][0-9]{1,9}$/),
    (value) => `session_lifetime is a whole number of seconds (at least 10), not "${value}"`,
  ),
  rule(
    'max_sessions',
    'maxSessions',
    whole(/^[1-9][0-9]{0,5}$/),
    (value) => `max_sessions is a whole number of live sessions a user may hold, at least 1, not "${value}"`,
  ),
  rule(
    'api_keys',
    'apiKeys',
    (value) => (value === 'on' ? true : value === 'off' ? false : undefined),
    (value) => `api_keys is on or off, not "${value}"`,
  ),
  // Batches (docs/internals/contract.md §15): batch="on" first, so that its bounds below find the setting to change.
  {
    name: 'batch',
    apply: (value, target) => {
      if (value === 'on') target.batch = { maxOperations: DEFAULT_BATCH_MAX_OPERATIONS, timeoutMs: DEFAULT_BATCH_TIMEOUT_SECONDS * 1000 };
      return value === 'on' || value === 'off';
    },
    error: (value) => `batch is on or off, not "${value}"`,
  },
  // MCP (docs/internals/contract.md §16): the backend's routes as tools at {base}/<backend>/mcp; absent when off.
  {
    name: 'mcp',
    apply: (value, target) => {
      if (value === 'on') target.mcp = true;
      return value === 'on' || value === 'off';
    },
    error: (value) => `mcp is on or off, not "${value}"`,
  },
  {
    name: 'batch_max_operations',
    apply: batchBound('maxOperations', 1000, 1),
    error: (value) => `batch_max_operations is a whole number of operations, 1 to 1000, not "${value}"`,
  },
  {
    name: 'batch_timeout',
    apply: batchBound('timeoutMs', 300, 1000),
    error: (value) => `batch_timeout is a whole number of seconds, 1 to 300, not "${value}"`,
  },
];

/** A bound of a backend's batches, 1 to `max`: kept only when batch="on" (its absence is reported in analyseBackend). */
function batchBound(field: 'maxOperations' | 'timeoutMs', max: number, unit: number): AttributeRule<Backend>['apply'] {
  return (value, target) => {
    const parsed = whole(/^[1-9][0-9]{0,3}$/, max)(value);
    if (parsed === undefined) return false;
    if (target.batch !== undefined) target.batch = { ...target.batch, [field]: parsed * unit };
    return true;
  };
}

/** A backend, and where its issuer is said: the issuer attribute, or the Backend element when it is defaulted. */
export interface AnalysedBackend {
  backend: BackendWithPlugins;
  issuerAt: SourceLocation | undefined;
  /** Where each outside issuer's `iss` is said, by iss. */
  outsideIssuersAt: Map<string, SourceLocation>;
}

export function analyseBackend(name: string, file: SourceFile | undefined, diagnostics: Diagnostics, options: AnalyseOptions): AnalysedBackend {
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
    consoleRole: DEFAULT_CONSOLE_ROLE,
    absentCredentialsStatus: 403,
    issuers: [],
    apiKeys: false,
    refreshLifetime: null,
    sessionLifetime: 30 * 24 * 3600,
    resources: [],
    plugins: new Map(),
  };
  const outsideIssuersAt = new Map<string, SourceLocation>();
  if (!file) return { backend, issuerAt: undefined, outsideIssuersAt };
  const root = parseCached(file, diagnostics, options.parsed);
  if (!root) return { backend, issuerAt: undefined, outsideIssuersAt };
  const attrs = new AttributeReader(root, diagnostics);
  if (root.name !== 'Backend') {
    diagnostics.error(root.at, `the root element of backend.xml is Backend, not ${root.name}`);
    return { backend, issuerAt: undefined, outsideIssuersAt };
  }
  checkNamespace(attrs, diagnostics);
  for (const attribute of BACKEND_ATTRIBUTES) {
    const given = attrs.optional(attribute.name);
    if (given !== undefined && !attribute.apply(given.value, backend)) diagnostics.error(given.at, attribute.error(given.value));
  }
  const issuerAt = attrs.optional('issuer')?.at ?? root.at;
  attrs.rejectOthers();
  if (root.hasMixedText) diagnostics.error(root.at, 'Backend holds only elements, not text');

  let customQuery: RawElement | undefined;
  let rolesQuery: RawElement | undefined;
  let tenant: ReadTenant | undefined;
  /** Each outside Issuer's place, and whether it names its users' tenant claim (a tenant backend's need it). */
  const issuerTenants: { at: SourceLocation; tenant: boolean }[] = [];
  /** Where each webhook's URL is said: a backend sends each event once to a URL. */
  const webhookUrls = new Map<string, SourceLocation>();
  for (const child of root.children) {
    if (child.name === 'AuthQuery') {
      if (customQuery) diagnostics.error(child.at, 'only one AuthQuery per backend');
      customQuery = child;
      new AttributeReader(child, diagnostics).rejectOthers();
    } else if (child.name === 'RolesQuery') {
      if (rolesQuery) diagnostics.error(child.at, 'only one RolesQuery per backend');
      rolesQuery = child;
      backend.rolesQuery = analyseRolesQuery(child, diagnostics);
    } else if (child.name === 'Tenant') {
      if (tenant) diagnostics.error(child.at, 'only one Tenant per backend');
      else tenant = readTenant(child, diagnostics);
    } else if (child.name === 'Plugin') {
      analysePluginDeclaration(child, backend, diagnostics, options);
    } else if (child.name === 'Issuer') {
      const analysed = analyseIssuer(child, diagnostics);
      if (!analysed) continue;
      const { issuer, issAt } = analysed;
      const earlier = outsideIssuersAt.get(issuer.iss);
      if (earlier) {
        diagnostics.error(
          issAt,
          `two Issuers have the iss "${issuer.iss}" (the first at ${earlier.file}:${earlier.line}:${earlier.col}): give one Issuer every audience it serves`,
        );
        continue;
      }
      outsideIssuersAt.set(issuer.iss, issAt);
      issuerTenants.push({ at: issAt, tenant: issuer.tenant !== undefined });
      backend.issuers = [...backend.issuers, issuer];
    } else if (child.name === 'Webhook') {
      const analysed = analyseWebhook(child, diagnostics);
      if (!analysed) continue;
      const earlier = webhookUrls.get(analysed.webhook.url);
      if (earlier) {
        diagnostics.error(
          analysed.urlAt,
          `two Webhooks send to ${analysed.webhook.url} (the first at ${earlier.file}:${earlier.line}:${earlier.col}): give one Webhook every event type, separated by spaces`,
        );
        continue;
      }
      webhookUrls.set(analysed.webhook.url, analysed.urlAt);
      backend.webhooks = [...(backend.webhooks ?? []), analysed.webhook];
    } else if (child.name === 'Desc') {
      new AttributeReader(child, diagnostics).rejectOthers();
    } else {
      diagnostics.error(child.at, `unknown element in Backend: ${child.name} (expected AuthQuery, RolesQuery, Tenant, Issuer, Plugin, Webhook or Desc)`);
    }
  }
  if (backend.authScheme !== 'Bearer') {
    for (const at of outsideIssuersAt.values()) diagnostics.error(at, 'an Issuer needs auth_scheme="Bearer" on Backend: its tokens are Bearer tokens');
  }
  backend.defaultTables = customQuery === undefined;
  const refresh = attrs.optional('refresh_lifetime');
  if (refresh && backend.refreshLifetime !== null && backend.authScheme !== 'Bearer') {
    diagnostics.error(refresh.at, 'refresh_lifetime needs auth_scheme="Bearer": sessions refresh Bearer tokens');
  }
  const sessionLifetime = attrs.optional('session_lifetime');
  if (sessionLifetime && backend.refreshLifetime === null) {
    diagnostics.error(sessionLifetime.at, 'session_lifetime bounds sessions, which refresh_lifetime turns on: add refresh_lifetime');
  }
  checkSessionQueries(backend, { refresh: refresh?.at, maxSessions: attrs.optional('max_sessions')?.at, authQuery: customQuery, rolesQuery }, diagnostics);
  const apiKeys = attrs.optional('api_keys');
  if (backend.apiKeys && apiKeys) {
    // A key admits the roles it lists that its user still holds: the roles are read from the default user tables.
    if (backend.authScheme === null) diagnostics.error(apiKeys.at, 'api_keys="on" needs auth_scheme on Backend: keys stand in for its credentials');
    else if (customQuery)
      diagnostics.error(
        apiKeys.at,
        'api_keys="on" needs the default user tables (usr, usr_role), whose roles a key\'s user must still hold: this backend has its own AuthQuery',
      );
  }
  for (const bound of ['batch_max_operations', 'batch_timeout']) {
    const given = attrs.optional(bound);
    if (given && backend.batch === undefined) diagnostics.error(given.at, `${bound} bounds batches, which batch="on" turns on: add batch="on"`);
  }
  if (backend.authScheme !== null) {
    backend.authQuery = analyseAuthQuery(backend.authScheme, customQuery, root, diagnostics);
  } else if (customQuery) {
    diagnostics.error(customQuery.at, 'an AuthQuery needs auth_scheme on Backend');
  }
  if (tenant) {
    const settings = finishTenant(tenant, backend, customQuery, issuerTenants, diagnostics);
    if (settings) backend.tenant = settings;
  } else {
    for (const issuer of issuerTenants.filter((candidate) => candidate.tenant))
      diagnostics.error(issuer.at, "an Issuer's tenant names its users' tenant claim, for a backend with <Tenant>: add <Tenant> to Backend, or remove tenant");
  }
  return { backend, issuerAt, outsideIssuersAt };
}

function analyseAuthQuery(scheme: AuthSchemeName, element: RawElement | undefined, root: RawElement, diagnostics: Diagnostics): AuthQuery {
  const text = element ? element.text : defaultAuthQuery(scheme);
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

function analysePluginDeclaration(element: RawElement, backend: BackendWithPlugins, diagnostics: Diagnostics, options: AnalyseOptions): void {
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
    // The generated code imports it and the server runs it: it must be the project's own file, wherever it leads.
    if (module.value.startsWith('/')) {
      diagnostics.error(module.at, `module is a project-relative .ts path, not an absolute one: ${module.value}`);
    } else if (!/^[A-Za-z0-9_./-]+\.ts$/.test(module.value) || module.value.includes('..')) {
      diagnostics.error(module.at, `module is a project-relative .ts path: ${module.value}`);
    } else if (options.leavesProject(module.value)) {
      diagnostics.error(module.at, `module leads outside the project through a symbolic link: ${module.value} (keep plug-ins inside the project)`);
    } else if (!ARG_NAME.test(exportName.value)) {
      diagnostics.error(exportName.at, `export is the name of an exported function: ${exportName.value}`);
    } else {
      backend.plugins.set(classname.value, { classname: classname.value, module: module.value, exportName: exportName.value, builtin: false });
    }
  } else {
    diagnostics.error(element.at, 'a Plugin has either use="<classname>" (an alias) or module="<path>.ts" and export="<name>"');
  }
}
