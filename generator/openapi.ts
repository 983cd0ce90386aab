import { ERROR_BODY_SCHEMA, receives } from '../runtime/contract.js';
import type { ResourceKeys } from './emit/index.js';
import type { Backend, List, Operation, ParamType, Project, Resource, ResultColumn, SqlStep, Step } from './ir.js';
import { camel } from './names.js';
import type { RunCache } from './run-cache.js';
import { auditKeeps } from './secrets.js';

/**
 * An OpenAPI 3.1 document for every backend, from the same IR as the
 * modules: paths, parameters and their column types, response schemas from
 * the row types, each backend's security scheme and the role it needs, the
 * token endpoints and the error bodies. Paths leave out BASE_PATH; the
 * server fills `servers` in when it serves the document.
 */
type Schema = Record<string, unknown>;

/** One resource's path in the document: an operation object per method. */
export type PathItem = Record<string, Schema>;

/** Path items kept by `npm run dev`, by path, each made from its resource's IR (emit/index.ts `resourceKeys`). */
export interface PathItemCache {
  pathItems: RunCache<PathItem>;
  keys: ResourceKeys;
}

const ERROR_REF = { $ref: '#/components/schemas/Error' };

const RATE_UNITS: Record<number, string> = { 1: 'second', 60: 'minute', 3600: 'hour' };

/** The fields every answer of a rate-limited operation carries (docs/contract.md §10). */
const RATE_LIMIT_FIELDS = {
  'RateLimit-Limit': { description: 'Calls allowed in the window.', schema: { type: 'string', pattern: '^[0-9]+$' } },
  'RateLimit-Remaining': { description: 'Calls left in the window.', schema: { type: 'string', pattern: '^[0-9]+$' } },
  'RateLimit-Reset': { description: 'Seconds until the window ends.', schema: { type: 'string', pattern: '^[0-9]+$' } },
};

/**
 * The answers many operations share, written once under `components/responses`
 * and referred to by each operation: with them inline, every operation
 * carried the same seven error answers again, and a project of 1,000
 * resources had a 9 MB document.
 */
const SHARED_RESPONSES = {
  BadRequest: errorResponse('A missing parameter, a value its column does not take, too many parameters, or a body that is not JSON or a form.'),
  WrongCredentials: errorResponse('Credentials are wrong, malformed, expired or of the other scheme.'),
  InvalidCredentials: errorResponse('Invalid credentials.'),
  NoCredentials: errorResponse('No Authorization header.'),
  Conflict: errorResponse('A duplicate key or a foreign-key violation.'),
  TooLarge: errorResponse('A request body over 1 MB.'),
  UnsupportedType: errorResponse('A request body that is neither JSON nor a form.'),
  TooManyLogins: retryLater('Too many failed logins from this address (or for this user name from it): try again after Retry-After seconds.'),
  RateLimited: rateLimited("Over the route's rate limit (rate_limit), or, on a login, too many failed logins: try again after Retry-After seconds."),
  InternalError: errorResponse('An unexpected failure; the details are in the server log under the request id.'),
  Unavailable: retryLater('The database is unreachable, busy or not ready: try again after Retry-After seconds.'),
};

function shared(name: keyof typeof SHARED_RESPONSES): Schema {
  return { $ref: `#/components/responses/${name}` };
}

export function openApiDocument(project: Project, cache?: PathItemCache): Schema {
  const paths: Record<string, Record<string, unknown>> = {};
  const schemes = new Set<'Basic' | 'Bearer'>();
  for (const backend of project.backends) {
    if (backend.authScheme === 'Bearer') {
      schemes.add('Bearer');
      paths[`/${backend.name}/`] = { post: shapeA(backend) };
    }
    if (backend.refreshLifetime !== null) {
      paths[`/${backend.name}/v1.0/token/refresh`] = { post: refreshOperation(backend) };
      paths[`/${backend.name}/v1.0/logout`] = { post: logoutOperation(backend) };
    }
    for (const resource of backend.resources) {
      if (resource.operations.some((operation) => operation.access !== null) && backend.authScheme) schemes.add(backend.authScheme);
      const path = `/${backend.name}/v${resource.version}/${resource.name}`;
      const item = () =>
        Object.fromEntries(resource.operations.map((operation) => [operation.method.toLowerCase(), operationObject(backend, resource, operation)]));
      paths[path] = cache ? cache.pathItems.through(path, cache.keys.get(resource)!, item) : item();
    }
  }
  const securitySchemes: Record<string, Schema> = {};
  if (project.backends.some((backend) => backend.apiKeys && backend.authScheme !== null)) {
    securitySchemes.apiKeyAuth = {
      type: 'apiKey',
      in: 'header',
      name: 'X-API-Key',
      description:
        'An API key (xr_...) made by xmlrest key create or the console, on backends with api_keys="on"; also accepted as Authorization: Bearer xr_....',
    };
  }
  if (schemes.has('Basic')) securitySchemes.basicAuth = { type: 'http', scheme: 'basic', description: 'HTTP Basic: user name and password on every request.' };
  if (schemes.has('Bearer')) {
    securitySchemes.bearerAuth = {
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
      description: bearerDescription(project),
    };
  }
  const webhooks = eventDocuments(project);
  return {
    openapi: '3.1.0',
    info: { title: 'xmlrest API', version: '1.0', description: `Generated by xmlrest from ${project.backends.length} backend(s).` },
    servers: [{ url: '/' }],
    tags: project.backends.map((backend) => ({
      name: backend.name,
      description: backend.authScheme ? `${backend.authScheme} authentication` : 'No authentication',
    })),
    paths,
    ...(Object.keys(webhooks).length > 0 ? { webhooks } : {}),
    components: {
      securitySchemes,
      responses: SHARED_RESPONSES,
      schemas: {
        Error: ERROR_BODY_SCHEMA,
        WriteResult: {
          type: 'object',
          required: ['affectedRows', 'insertId'],
          properties: { affectedRows: { type: 'integer' }, insertId: { type: ['integer', 'null'] } },
        },
      },
    },
  };
}

function operationObject(backend: Backend, resource: Resource, operation: Operation): Schema {
  const object: Schema = {
    operationId: `${camel(backend.name)}_${camel(resource.name)}_v${resource.version.replaceAll('.', '_')}_${operation.method.toLowerCase()}`,
    tags: [backend.name],
    summary: operation.description ?? resource.description ?? `${operation.method} ${resource.name}`,
  };
  const notes: string[] = [];
  const access = operation.access;
  if (access !== null) {
    notes.push(
      access === '*'
        ? 'Requires any authenticated user.'
        : `Requires ${access.length === 1 ? 'the role' : 'any one of the roles'} ${access.map((role) => `\`${role}\``).join(', ')}.`,
    );
    object['x-xmlrest-roles'] = access === '*' ? '*' : [...access];
    object.security = [{ [backend.authScheme === 'Basic' ? 'basicAuth' : 'bearerAuth']: [] }, ...(backend.apiKeys ? [{ apiKeyAuth: [] }] : [])];
  } else if (resource.auth !== null) {
    // A public method of a protected resource: say so, and that no credentials are needed.
    notes.push('Public: needs no credentials, although the resource is protected.');
    object.security = [];
  }
  if (operation.transaction) notes.push('Runs in one transaction: any failure rolls back every step.');
  if (operation.paramsFromBody) notes.push('Reads its fields from the body only: a field in the query string is missing (400).');
  if (operation.emits !== undefined) notes.push(`Emits ${[...new Set(operation.emits.map((emit) => emit.event))].join(', ')} when it commits (see webhooks).`);
  if (operation.audit) {
    const keeps = auditKeeps(operation);
    notes.push(
      `Every call is recorded in the API audit (xmlrest_api_audit), keeping ${keeps.length === 0 ? 'no parameter value' : `the values of ${keeps.join(', ')} only`}.`,
    );
    object['x-xmlrest-audit'] = true;
  }

  const params = operation.params.map((name) => ({ name, type: operation.paramTypes[name] }));
  const list = listOf(operation);
  if (list) notes.push(listNote(list));
  if (notes.length > 0) object.description = notes.join(' ');
  if (operation.method === 'GET' || operation.method === 'DELETE') {
    if (params.length > 0) {
      object.parameters = params.map(({ name, type }) => ({
        name,
        in: 'query',
        required: type?.optional !== true,
        ...(list ? listParamDescription(list, name) : {}),
        schema: { ...paramSchema(type, true), ...(list?.page && name === 'limit' ? { default: list.page.size } : {}) },
      }));
    }
  } else if (params.length > 0) {
    object.requestBody = requestBody(params.map(({ name, type }) => [name, paramSchema(type, false)]));
  }
  const outputs = operation.steps.filter((step) => step.output);
  const paged = list?.page !== null && list !== undefined;
  const responses: Record<string, unknown> = {
    [String(operation.status)]: {
      description: `One field per step with output="true"${paged ? ', and next: the cursor of the next page' : ''}.`,
      ...(paged ? { headers: { Link: LINK_HEADER } } : {}),
      content: {
        'application/json': {
          schema: {
            type: 'object',
            required: [...outputs.map((step) => step.id), ...(paged ? ['next'] : [])],
            properties: { ...Object.fromEntries(outputs.map((step) => [step.id, stepSchema(step)])), ...(paged ? { next: NEXT_CURSOR } : {}) },
          },
        },
      },
    },
  };
  // Every status the operation can answer, each with its body (a validating proxy checks them all).
  const issuesTokens = operation.steps.some((step) => step.kind === 'execute' && step.plugin.builtin && step.plugin.exportName === 'tokenGenerator');
  if (issuesTokens && backend.refreshLifetime !== null) {
    // A token request of a backend with sessions answers the session's refresh token beside its output.
    const schema = (responses[String(operation.status)] as { content: { 'application/json': { schema: { required: string[]; properties: object } } } }).content[
      'application/json'
    ].schema;
    schema.required.push('refresh_token');
    schema.properties = { ...schema.properties, refresh_token: REFRESH_TOKEN };
  }
  const checksPasswords = issuesTokens || (access !== null && backend.authScheme === 'Basic');
  if (params.length > 0) responses['400'] = shared('BadRequest');
  if (access !== null || issuesTokens) responses['401'] = shared(issuesTokens && access === null ? 'InvalidCredentials' : 'WrongCredentials');
  if (access !== null) {
    responses['403'] =
      access === '*' ? shared('NoCredentials') : errorResponse(`No Authorization header, or the user holds none of the roles ${access.join(', ')}.`);
  }
  if (operation.steps.some((step) => step.kind === 'sql' && step.statement === 'write')) responses['409'] = shared('Conflict');
  if (params.length > 0) {
    responses['413'] = shared('TooLarge');
    responses['415'] = shared('UnsupportedType');
  }
  if (operation.rateLimit !== null) {
    responses['429'] = shared('RateLimited');
    (responses[String(operation.status)] as Schema).headers = { ...((responses[String(operation.status)] as Schema).headers as object), ...RATE_LIMIT_FIELDS };
    object.description = `${object.description ? `${object.description} ` : ''}At most ${operation.rateLimit.limit} calls per ${RATE_UNITS[operation.rateLimit.seconds] ?? `${operation.rateLimit.seconds} s`} per ${access === null ? 'client address' : 'user (per API key for a key)'}, for the whole deployment.`;
  } else if (checksPasswords) responses['429'] = shared('TooManyLogins');
  responses['500'] = shared('InternalError');
  responses['503'] = shared('Unavailable');
  object.responses = responses;
  return object;
}

/** The Standard Webhooks headers every delivery carries (docs/contract.md §12). */
const WEBHOOK_HEADERS = [
  { name: 'webhook-id', description: "The event's id (msg_...): the same on every attempt and for every webhook; an idempotency key." },
  { name: 'webhook-timestamp', description: 'When this attempt was made, in seconds since the epoch: refuse one too far from your clock.' },
  {
    name: 'webhook-signature',
    description:
      'v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}"> with the secret, one per secret (separated by spaces) while it is rotated.',
  },
].map((header) => ({ ...header, in: 'header', required: true, schema: { type: 'string' } }));

/**
 * OpenAPI's `webhooks`: each event type a backend emits, the body its webhooks receive (the Standard Webhooks
 * payload, typed from the emitting step), its headers and the answers the sender reads. Keyed by the type, or
 * by the type and the backend when two backends emit one.
 */
function eventDocuments(project: Project): Record<string, Schema> {
  const emitted = project.backends.flatMap((backend) =>
    backend.resources.flatMap((resource) =>
      resource.operations.flatMap((operation) => (operation.emits ?? []).map((emit) => ({ backend, resource, operation, emit }))),
    ),
  );
  const documents: Record<string, Schema> = {};
  const backendsOf = new Map<string, Set<string>>();
  for (const { backend, emit } of emitted) backendsOf.set(emit.event, (backendsOf.get(emit.event) ?? new Set()).add(backend.name));
  for (const { backend, resource, operation, emit } of emitted) {
    const name = backendsOf.get(emit.event)!.size > 1 ? `${emit.event} (${backend.name})` : emit.event;
    const step = operation.steps.find((candidate) => candidate.id === emit.step)!;
    const emitters = `${operation.method} /${backend.name}/v${resource.version}/${resource.name}`;
    const existing = documents[name]?.post as Schema | undefined;
    if (existing) {
      existing.description = `${existing.description as string} Also emitted by ${emitters}.`;
      continue;
    }
    documents[name] = {
      post: {
        operationId: `${camel(backend.name)}_event_${emit.event.replaceAll('.', '_')}`,
        tags: [backend.name],
        summary: `Event ${emit.event}`,
        description:
          // The receivers' URLs stay out: this document is public, and a URL names an internal host or holds a
          // capability token; operators see them in xmlrest events list and the console.
          `Emitted by ${emitters} in its transaction, sent once it commits to the backend's webhooks that receive it. ` +
          `${emit.changes === null ? '' : 'Sent only when the writes before it found a row. '}` +
          'Delivered at least once (use webhook-id to drop repeats), retried with backoff for 24 h on anything but a 2xx' +
          `${emit.key !== null ? ', in order among events of the same key' : ''}; a 410 stops deliveries to the webhook.`,
        parameters: WEBHOOK_HEADERS,
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['type', 'timestamp', ...(emit.key === null ? [] : ['key']), 'data'],
                properties: {
                  type: { const: emit.event },
                  timestamp: { type: 'string', format: 'date-time', description: 'When the request emitted it.' },
                  ...(emit.key === null ? {} : { key: { type: ['string', 'number', 'null'], description: 'What the event is about: the value of its key.' } }),
                  data: { type: 'object', required: [step.id], properties: { [step.id]: stepSchema(step) } },
                },
              },
            },
          },
        },
        responses: {
          '200': { description: 'Received: any 2xx is a delivery.' },
          '410': { description: 'Gone: no more deliveries to this webhook until an operator retries (xmlrest events retry).' },
        },
      },
    };
  }
  return documents;
}

const NEXT_CURSOR = {
  type: ['string', 'null'],
  description: 'The cursor of the next page: send it as after (with the same filters) for the rows that follow. Null on the last page.',
};

const LINK_HEADER = {
  description: 'On a page that has a next one: <path?...&after=cursor>; rel="next" (RFC 8288), the same request for the next page.',
  schema: { type: 'string' },
};

/** The operation's list (docs/contract.md §11), if a step is one. */
function listOf(operation: Operation): List | undefined {
  return operation.steps.find((step): step is SqlStep => step.kind === 'sql' && step.list !== undefined)?.list;
}

function listNote(list: List): string {
  const parts: string[] = [];
  if (list.filters.length > 0) parts.push(`Filters, each applied only when its parameter is sent: ${list.filters.map((filter) => filter.param).join(', ')}.`);
  if (list.sort) parts.push(`Sorted by ${list.sort.param}: one of ${list.sort.allow.map((allowed) => allowed.name).join(', ')}, - before it for descending.`);
  if (list.page) {
    parts.push(
      `Pages of ${list.page.size} rows (limit, at most ${list.page.max}) in a stable order; next holds the cursor of the next page (also in the Link header): send it as after, with the same filters, for the rows that follow. A cursor is signed: a changed, foreign or stale one is a 400.`,
    );
  }
  return parts.join(' ');
}

function listParamDescription(list: List, name: string): Schema {
  if (list.page && name === 'limit') return { description: `Rows in the page: ${list.page.size} unless given, at most ${list.page.max}.` };
  if (list.page && name === 'after') return { description: 'The cursor (next) of the page before: this page holds the rows after it, in its sort.' };
  if (list.sort && name === list.sort.param) {
    return {
      description: `The order${list.sort.default ? ` (default ${list.sort.default.desc ? '-' : ''}${list.sort.default.name})` : ''}: a name, - before it for descending.`,
    };
  }
  return list.filters.some((filter) => filter.param === name) ? { description: 'A filter: its condition applies only when the parameter is sent.' } : {};
}

function rateLimited(description: string): Schema {
  const answer = retryLater(description);
  return { ...answer, headers: { ...(answer.headers as object), ...RATE_LIMIT_FIELDS } };
}

/** A refusal that says when to try again. */
function retryLater(description: string): Schema {
  return {
    ...errorResponse(description),
    headers: { 'Retry-After': { description: 'Seconds to wait before trying again.', schema: { type: 'string', pattern: '^[0-9]+$' } } },
  };
}

function shapeA(backend: Backend): Schema {
  return {
    operationId: `${camel(backend.name)}_token`,
    tags: [backend.name],
    summary: 'Issues a token for every role the user holds',
    description: 'Token request shape A. The credentials go in the body only.',
    requestBody: requestBody(
      [
        ['auth', { type: 'string', enum: ['bearer'] }],
        ['userid', { type: 'string' }],
        ['password', { type: 'string', format: 'password' }],
      ],
      ['application/x-www-form-urlencoded', 'application/json'],
    ),
    responses: {
      '200': {
        description: 'A token whose aud holds every role of the user.',
        content: {
          'application/json': {
            schema:
              backend.refreshLifetime === null
                ? { type: 'object', required: ['token', 'type'], properties: { token: { type: 'string' }, type: { const: 'Bearer' } } }
                : {
                    type: 'object',
                    required: ['token', 'type', 'refresh_token'],
                    properties: { token: { type: 'string' }, type: { const: 'Bearer' }, refresh_token: REFRESH_TOKEN },
                  },
          },
        },
      },
      '400': errorResponse('A missing field, auth other than bearer, or a body that is not JSON or a form.'),
      '401': shared('InvalidCredentials'),
      '413': shared('TooLarge'),
      '415': shared('UnsupportedType'),
      '429': shared('TooManyLogins'),
      '500': shared('InternalError'),
      '503': shared('Unavailable'),
    },
  };
}

const REFRESH_TOKEN = { type: 'string', pattern: '^xrr_[0-9A-Za-z]{43}$', description: 'Buys one new pair at {backend}/v1.0/token/refresh, then is used up.' };

/** `POST /<backend>/v1.0/token/refresh` (docs/contract.md §10). */
function refreshOperation(backend: Backend): Schema {
  return {
    operationId: `${camel(backend.name)}_token_refresh`,
    tags: [backend.name],
    summary: 'Exchanges a refresh token for a new access token and refresh token',
    description: `The refresh token is used up. Used again after ${10} s, it ends its whole session. A session ends after ${backend.refreshLifetime} s unused, and after ${backend.sessionLifetime} s in all.`,
    requestBody: requestBody([['refresh_token', REFRESH_TOKEN]], ['application/x-www-form-urlencoded', 'application/json']),
    responses: {
      '201': {
        description: 'A new pair.',
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['token', 'type', 'refresh_token'],
              properties: { token: { type: 'string' }, type: { const: 'Bearer' }, refresh_token: REFRESH_TOKEN },
            },
          },
        },
      },
      '400': errorResponse('No refresh_token in the body, or a body that is not JSON or a form.'),
      '401': errorResponse('The refresh token is unknown, used up, or its session is over.'),
      '413': shared('TooLarge'),
      '415': shared('UnsupportedType'),
      '500': shared('InternalError'),
      '503': shared('Unavailable'),
    },
  };
}

/** `POST /<backend>/v1.0/logout` (docs/contract.md §10). */
function logoutOperation(backend: Backend): Schema {
  return {
    operationId: `${camel(backend.name)}_logout`,
    tags: [backend.name],
    summary: "Ends the access token's session, or with scope=all every session of its user",
    security: [{ bearerAuth: [] }],
    requestBody: {
      required: false,
      content: Object.fromEntries(
        ['application/x-www-form-urlencoded', 'application/json'].map((type) => [
          type,
          { schema: { type: 'object', properties: { scope: { const: 'all' } } } },
        ]),
      ),
    },
    responses: {
      '200': {
        description: 'How many sessions ended.',
        content: { 'application/json': { schema: { type: 'object', required: ['ended'], properties: { ended: { type: 'integer', minimum: 0 } } } } },
      },
      '400': errorResponse('scope other than all, or a token of no session without scope=all.'),
      '401': shared('WrongCredentials'),
      '403': shared('NoCredentials'),
      '500': shared('InternalError'),
      '503': shared('Unavailable'),
    },
  };
}

function requestBody(fields: [string, Schema][], types = ['application/json', 'application/x-www-form-urlencoded']): Schema {
  const schema = { type: 'object', required: fields.map(([name]) => name), properties: Object.fromEntries(fields) };
  return { required: true, content: Object.fromEntries(types.map((type) => [type, { schema }])) };
}

function errorResponse(description: string): Schema {
  return { description, content: { 'application/json': { schema: ERROR_REF } } };
}

function stepSchema(step: Step): Schema {
  if (step.kind === 'execute') return { description: `What the plug-in ${step.plugin.classname} returns.` };
  if (step.statement === 'write') return { $ref: '#/components/schemas/WriteResult' };
  if (step.typed === null) {
    const properties = step.columns === null ? undefined : Object.fromEntries(step.columns.map((name) => [name, {}]));
    return { type: 'array', items: { type: 'object', ...(properties ? { properties } : {}) } };
  }
  return {
    type: 'array',
    items: {
      type: 'object',
      required: step.typed.map((column) => column.name),
      properties: Object.fromEntries(step.typed.map((column) => [column.name, columnSchema(column)])),
    },
  };
}

function columnSchema(column: ResultColumn): Schema {
  const nullable = (schema: Schema): Schema =>
    column.nullable ? (schema.type ? { ...schema, type: [schema.type, 'null'] } : { anyOf: [schema, { type: 'null' }] }) : schema;
  const description = { description: column.sqlType };
  switch (column.tsType) {
    case 'number':
      return nullable({ type: /int|year/.test(column.sqlType) ? 'integer' : 'number', ...description });
    case 'string':
      return nullable({ type: 'string', ...description, ...(/bigint|decimal/.test(column.sqlType) ? { pattern: '^-?[0-9]+(\\.[0-9]+)?$' } : {}) });
    case 'Date':
      return nullable({ type: 'string', format: 'date-time', ...description });
    case 'Buffer':
      return nullable({ type: 'object', ...description, properties: { type: { const: 'Buffer' }, data: { type: 'array', items: { type: 'integer' } } } });
    default:
      return description;
  }
}

function paramSchema(type: ParamType | undefined, inQuery: boolean): Schema {
  const described = type?.column ? { description: `Compared with or stored in ${type.column}.` } : {};
  const nullable = (schema: Schema): Schema => (type?.nullable && !inQuery && schema.type ? { ...schema, type: [schema.type, 'null'] } : schema);
  switch (type?.kind) {
    case 'integer':
      return nullable({
        type: 'integer',
        ...(type.unsigned ? { minimum: 0 } : {}),
        ...(type.min !== undefined ? { minimum: type.min } : {}),
        ...(type.max !== undefined ? { maximum: type.max } : {}),
        ...described,
      });
    case 'bigint':
    case 'decimal':
      return nullable({ type: 'string', pattern: type.kind === 'bigint' ? '^-?[0-9]+$' : '^-?([0-9]+(\\.[0-9]*)?|\\.[0-9]+)$', ...described });
    case 'number':
      return nullable({ type: 'number', ...described });
    case 'string': {
      // JSON Schema counts characters; a byte limit bounds them too (a character is at least one byte).
      const maxLength = Math.min(type.maxLength ?? Infinity, type.maxBytes ?? Infinity);
      const bytes = type.maxBytes !== undefined ? `At most ${type.maxBytes} bytes of UTF-8.` : undefined;
      const description = [described.description, bytes].filter(Boolean).join(' ');
      return nullable({
        type: 'string',
        ...(type.secret ? { format: 'password' } : {}),
        ...(maxLength !== Infinity ? { maxLength } : {}),
        ...(description ? { description } : {}),
      });
    }
    case 'enum':
      return nullable({ type: 'string', enum: type.values ?? [], ...described });
    case 'date':
      return nullable({ type: 'string', format: 'date', ...described });
    case 'datetime':
      return nullable({ type: 'string', pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}([ T][0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]{1,6})?)?)?Z?$', ...described });
    case 'time':
      return nullable({ type: 'string', pattern: '^-?[0-9]{1,3}:[0-9]{2}(:[0-9]{2}(\\.[0-9]{1,6})?)?$', ...described });
    default: {
      const text = { description: [described.description, 'Bound as text: a number or boolean as its text, as a form sends it.'].filter(Boolean).join(' ') };
      return inQuery ? { type: 'string', ...text } : { type: ['string', 'number', 'boolean', 'null'], ...text };
    }
  }
}

/** What a Bearer token may be: the backend's own, or an access token of an identity provider it accepts (docs/contract.md §9). */
function bearerDescription(project: Project): string {
  const own = 'A token from the backend\'s token endpoint; the "Bearer " prefix is optional.';
  const issuers = project.backends.flatMap((backend) =>
    backend.issuers.map((issuer) => `${issuer.iss} (backend ${backend.name}, audience ${issuer.audience.join(' or ')})`),
  );
  return issuers.length === 0 ? own : `${own} Also an access token of an identity provider the backend accepts: ${issuers.join('; ')}.`;
}
