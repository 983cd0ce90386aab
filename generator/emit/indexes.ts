import { type StatementStructures, StructureKind, VariableDeclarationKind } from 'ts-morph';
import { type BackendSettings, MODULE_FORMAT } from '../../runtime/contract.js';
import type { Backend, Project, Resource } from '../ir.js';
import { binding } from '../names.js';
import { type EmitOptions, moduleName } from './layout.js';
import { doc, finish, objectConstant, quote, runtimeImport, templateLiteral } from './print.js';

/** The index modules: one per backend (its settings and resources), one listing every backend. */

/** Every setting of `BackendSettings` (runtime/contract.ts), in the order a backend's index lists them. */
const SETTINGS = [
  'name',
  'authScheme',
  'authQuery',
  'defaultTables',
  'uidType',
  'tokenLifetime',
  'clockSkew',
  'rehashPlaintext',
  'credentialCacheSeconds',
  'issuer',
  'iatUnit',
  'consoleRole',
  'absentCredentialsStatus',
  'issuers',
  'apiKeys',
  'refreshLifetime',
  'sessionLifetime',
  'maxSessions',
  'rolesQuery',
  'webhooks',
  'tenant',
  'batch',
  'mcp',
] as const satisfies readonly (keyof BackendSettings)[];
// A setting added to the contract but not listed here is a compile error, not a module that lacks it.
type Unlisted = Exclude<keyof BackendSettings, (typeof SETTINGS)[number]>;
export const EVERY_SETTING_LISTED: [Unlisted] extends [never] ? true : Unlisted = true;

function literal(value: string | number | boolean | null | object): string {
  return typeof value === 'string' ? quote(value) : String(value);
}

function authQueryLiteral(backend: Backend): string {
  const query = backend.authQuery;
  if (!query) return 'null';
  return `{ sql: AUTH_QUERY_SQL, binds: [${query.binds.map(quote).join(', ')}], passwordColumn: ${query.passwordColumn === null ? 'null' : quote(query.passwordColumn)} }`;
}

/** The outside issuers (docs/internals/contract.md §9), one object each, a field a line, as a person would write them. */
function issuersLines(backend: Backend): string[] {
  if (backend.issuers.length === 0) return ['issuers: [],'];
  const list = (values: readonly string[]) => `[${values.map(quote).join(', ')}]`;
  const lines = ['issuers: ['];
  backend.issuers.forEach((issuer, index) => {
    const keys = 'jwksUri' in issuer.keys ? `{ jwksUri: ${quote(issuer.keys.jwksUri)} }` : `{ discovery: ${quote(issuer.keys.discovery)} }`;
    const roleMap = issuer.roleMap.map((mapping) => `      { from: ${quote(mapping.from)}, to: ${quote(mapping.to)} },`);
    const userQuery = issuer.userQuery === null ? 'null' : `{ sql: ${userQueryConstant(index)}, binds: ${list(issuer.userQuery.binds)} }`;
    lines.push(
      '  {',
      `    iss: ${quote(issuer.iss)},`,
      `    audience: ${list(issuer.audience)},`,
      `    keys: ${keys},`,
      `    algorithms: ${list(issuer.algorithms)},`,
      `    clockSkew: ${issuer.clockSkew},`,
      `    roles: { path: ${list(issuer.roles.path)}, format: ${quote(issuer.roles.format)} },`,
      ...(roleMap.length === 0 ? ['    roleMap: [],'] : ['    roleMap: [', ...roleMap, '    ],']),
      `    mapOnly: ${issuer.mapOnly},`,
      `    user: ${list(issuer.user)},`,
      // On a tenant backend: the claim that holds its users' tenant (docs/internals/contract.md §14).
      ...(issuer.tenant ? [`    tenant: ${list(issuer.tenant)},`] : []),
      `    userQuery: ${userQuery},`,
      '  },',
    );
  });
  lines.push('],');
  return lines;
}

/** The webhooks (docs/internals/contract.md §12), one a line; none written when the backend has none. */
function webhooksLines(backend: Backend): string[] {
  if (backend.webhooks === undefined || backend.webhooks.length === 0) return [];
  return [
    'webhooks: [',
    ...backend.webhooks.map(
      (webhook) => `  { events: [${webhook.events.map(quote).join(', ')}], url: ${quote(webhook.url)}, secret: ${quote(webhook.secret)} },`,
    ),
    '],',
  ];
}

/** A tenant backend's tenant (docs/internals/contract.md §14); none written on a backend without one. */
function tenantLines(backend: Backend): string[] {
  const tenant = backend.tenant;
  if (tenant === undefined) return [];
  const userQuery = tenant.userQuery === null ? 'null' : '{ sql: TENANT_QUERY_SQL }';
  const userColumn = tenant.userColumn === undefined ? '' : `, userColumn: ${quote(tenant.userColumn)}`;
  const triggers = tenant.triggers ? ', triggers: true' : '';
  return [`tenant: { column: ${quote(tenant.column)}, type: ${quote(tenant.type)}, userQuery: ${userQuery}${userColumn}${triggers} },`];
}

function userQueryConstant(index: number): string {
  return `USER_QUERY_${index + 1}_SQL`;
}

export function emitBackendIndex(backend: Backend, file: string, options: EmitOptions): string {
  const statements = indexImports(
    options,
    file,
    backend.resources.map((resource) => ({ module: `./${moduleName(resource)}.js`, name: 'resource', alias: resourceIdentifier(resource) })),
  );
  if (backend.authQuery) {
    statements.push({
      kind: StructureKind.VariableStatement,
      docs: [
        backend.authScheme === 'Basic'
          ? 'Checks Basic credentials: returns user_id and role_name of every role the user holds.'
          : 'Checks the credentials of a token request: returns sub (the user id) and aud (a role) per role.',
      ],
      declarationKind: VariableDeclarationKind.Const,
      declarations: [{ name: 'AUTH_QUERY_SQL', initializer: templateLiteral(backend.authQuery.sql) }],
    });
  }
  if (backend.rolesQuery) {
    statements.push({
      kind: StructureKind.VariableStatement,
      docs: ['The roles the user holds now, asked at each refresh of a session: aud per role, no row when the user is gone.'],
      declarationKind: VariableDeclarationKind.Const,
      declarations: [{ name: 'ROLES_QUERY_SQL', initializer: templateLiteral(backend.rolesQuery.sql) }],
    });
  }
  if (backend.tenant?.userQuery) {
    statements.push({
      kind: StructureKind.VariableStatement,
      docs: ["A user's tenant, asked where the user's roles are read: the column tenant of its one row, none when the user has none."],
      declarationKind: VariableDeclarationKind.Const,
      declarations: [{ name: 'TENANT_QUERY_SQL', initializer: templateLiteral(backend.tenant.userQuery.sql) }],
    });
  }
  backend.issuers.forEach((issuer, index) => {
    if (issuer.userQuery === null) return;
    statements.push({
      kind: StructureKind.VariableStatement,
      docs: [doc(`Maps a token of ${issuer.iss} to a local user id: user_id of the first row, no row an unknown user.`)],
      declarationKind: VariableDeclarationKind.Const,
      declarations: [{ name: userQueryConstant(index), initializer: templateLiteral(issuer.userQuery.sql) }],
    });
  });
  const settingLines = (key: (typeof SETTINGS)[number]): string[] => {
    if (key === 'issuers') return issuersLines(backend);
    if (key === 'webhooks') return webhooksLines(backend);
    // Both written only when said, so that a backend without them is emitted as before.
    if (key === 'maxSessions') return backend.maxSessions === undefined ? [] : [`maxSessions: ${backend.maxSessions},`];
    if (key === 'rolesQuery') return backend.rolesQuery === undefined ? [] : ['rolesQuery: { sql: ROLES_QUERY_SQL },'];
    if (key === 'tenant') return tenantLines(backend);
    // Batches (docs/internals/contract.md §15) are off unless backend.xml says batch="on".
    if (key === 'batch')
      return backend.batch === undefined ? [] : [`batch: { maxOperations: ${backend.batch.maxOperations}, timeoutMs: ${backend.batch.timeoutMs} },`];
    // MCP (docs/internals/contract.md §16) is off unless backend.xml says mcp="on": an old module without the field is off too.
    if (key === 'mcp') return backend.mcp === undefined ? [] : ['mcp: true,'];
    return [`${key}: ${key === 'authQuery' ? authQueryLiteral(backend) : literal(backend[key])},`];
  };
  statements.push(
    objectConstant(`The ${backend.name} backend: its settings and resources.`, 'export const backend: BackendModule', [
      ...SETTINGS.flatMap(settingLines),
      `resources: [${backend.resources.map(resourceIdentifier).join(', ')}],`,
    ]),
  );
  return finish(file, statements, backend.source ?? `${options.resourcesDir}/${backend.name}/`, options.generatorVersion);
}

export function emitProjectIndex(project: Project, file: string, options: EmitOptions): string {
  const statements = indexImports(
    options,
    file,
    project.backends.map((backend) => ({ module: `./${backend.name}/index.js`, name: 'backend', alias: binding(backend.name, 'Backend') })),
    ['BackendModule', 'GeneratorStamp'],
  );
  // Read by the server before it serves them (runtime/module-format.ts): modules of a format it cannot serve stop it.
  statements.push({
    kind: StructureKind.VariableStatement,
    docs: ['Which xmlrest made these modules, and the format they have: a runtime that cannot serve it refuses to start.'],
    isExported: true,
    declarationKind: VariableDeclarationKind.Const,
    declarations: [{ name: 'generator', type: 'GeneratorStamp', initializer: `{ version: ${quote(options.generatorVersion)}, format: ${MODULE_FORMAT} }` }],
  });
  statements.push({
    kind: StructureKind.VariableStatement,
    docs: ['Every backend found under resources/, in name order.'],
    isExported: true,
    declarationKind: VariableDeclarationKind.Const,
    declarations: [
      {
        name: 'backends',
        type: 'readonly BackendModule[]',
        initializer: `[${project.backends.map((backend) => binding(backend.name, 'Backend')).join(', ')}]`,
      },
    ],
  });
  return finish(file, statements, `${options.resourcesDir}/`, options.generatorVersion);
}

function resourceIdentifier(resource: Resource): string {
  return binding(resource.name, 'Resource') + (resource.version === '1.0' ? '' : `V${resource.version.replaceAll('.', '_')}`);
}

/** An index module's imports: the runtime's types (`BackendModule`), then one binding from each module it lists. */
function indexImports(
  options: EmitOptions,
  file: string,
  modules: { module: string; name: string; alias: string }[],
  types: string[] = ['BackendModule'],
): (StatementStructures | string)[] {
  return [
    {
      kind: StructureKind.ImportDeclaration,
      moduleSpecifier: runtimeImport(options, file),
      isTypeOnly: true,
      namedImports: types,
    },
    ...modules.map(({ module, name, alias }) => ({ kind: StructureKind.ImportDeclaration as const, moduleSpecifier: module, namedImports: [{ name, alias }] })),
  ];
}
