// Writes a client can retry and race safely, in the document (docs/internals/contract.md §15): the validators of
// reads and their 304, versioned writes and If-Match, Idempotency-Key, and a backend's batches. Apart from
// operation.ts, which calls `safeWrites` once an operation's own answers are written; the parts they share live
// under `components` (parameters, headers, responses, schemas), put there only when some operation uses them.
import { DEFAULT_IDEMPOTENCY_RETENTION_SECONDS, IDEMPOTENCY_KEY_MAX_LENGTH } from '../../runtime/contract.js';
import type { Backend, Operation, Project } from '../ir.js';
import { camel } from '../names.js';
import { errorResponse, retryLater, type Schema, shared } from './responses.js';

const PARAMETER = (name: string) => ({ $ref: `#/components/parameters/${name}` });
const HEADER = (name: string) => ({ $ref: `#/components/headers/${name}` });
const RESPONSE = (name: string) => ({ $ref: `#/components/responses/${name}` });
const SCHEMA = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** An entity tag as the server writes it: strong, a digest or a version's digits (runtime/contract/safe-writes.ts). */
const TAG = { type: 'string', pattern: '^"[!#-~]*"$' };

const HEADERS = {
  ETag: {
    description:
      'The strong entity tag of this answer: a digest of its bytes, what its validator read, or the version of its row ("7"). Send it back as If-None-Match to revalidate, or (a version) as If-Match to write only if the row is unchanged.',
    schema: TAG,
  },
  CacheControl: {
    description: '`private, no-cache` on a protected route, `no-cache` on a public one, `public, max-age=<n>` where the route says max_age.',
    schema: { type: 'string' },
  },
  Vary: { description: 'The headers the answer depends on (the credential headers on a protected route).', schema: { type: 'string' } },
  IdempotentReplayed: {
    description: 'true when this is the recorded answer of an earlier request with the same Idempotency-Key and the same request.',
    schema: { type: 'string', enum: ['true'] },
  },
};

const IF_MATCH =
  'The ETag a GET of the row gave (its version, "7"). The write runs only if the row still has that version, compared in the write itself; `*` any existing row. A weak tag, a digest or several tags never match (412).';
const IDEMPOTENCY_KEY = `A key the client makes for this request (1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} printable ASCII characters, a UUID say): the request runs once per key per caller. A retry with the same key and request answers the first answer again (Idempotent-Replayed: true); with another request, 422; while the first still runs, 409. Kept ${DEFAULT_IDEMPOTENCY_RETENTION_SECONDS / 3600} h by default.`;

const PARAMETERS = {
  IfNoneMatch: {
    name: 'If-None-Match',
    in: 'header',
    required: false,
    description: 'The ETag (or tags, or `*`) of an answer the client holds: when it still matches, the answer is 304 with no body.',
    schema: { type: 'string' },
  },
  IfMatch: {
    name: 'If-Match',
    in: 'header',
    required: false,
    description: `${IF_MATCH} Without it, the write runs unconditionally.`,
    schema: { type: 'string' },
  },
  IfMatchRequired: { name: 'If-Match', in: 'header', required: true, description: `${IF_MATCH} Required: 428 without it.`, schema: { type: 'string' } },
  IdempotencyKey: {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description: IDEMPOTENCY_KEY,
    schema: { type: 'string', minLength: 1, maxLength: IDEMPOTENCY_KEY_MAX_LENGTH },
  },
  IdempotencyKeyRequired: {
    name: 'Idempotency-Key',
    in: 'header',
    required: true,
    description: `${IDEMPOTENCY_KEY} Required: 400 without it.`,
    schema: { type: 'string', minLength: 1, maxLength: IDEMPOTENCY_KEY_MAX_LENGTH },
  },
};

const RESPONSES = {
  NotModified: {
    description: 'The answer the client holds (If-None-Match) is still current: no body.',
    headers: { ETag: HEADER('ETag'), 'Cache-Control': HEADER('CacheControl'), Vary: HEADER('Vary') },
  },
  NotFound: errorResponse('No such row: nothing was written.'),
  PreconditionFailed: {
    ...errorResponse(
      'The row changed since the If-Match tag was read (or the tag is weak, a digest, or several): nothing was written. ETag is its current version.',
    ),
    headers: { ETag: HEADER('ETag') },
  },
  PreconditionRequired: errorResponse('This write requires If-Match: GET the row first and send its ETag.'),
  IdempotencyConflict: retryLater(
    'A duplicate key or a foreign-key violation; or the first request with this Idempotency-Key is still running: try again after Retry-After seconds.',
  ),
  IdempotencyKeyReused: errorResponse('This Idempotency-Key was used for another request (another method, path, query or body).'),
};

/** Which shared parts the project's operations use: only those go under `components`. */
interface Uses {
  reads: boolean;
  versions: boolean;
  required: boolean;
  keys: boolean;
  requiredKeys: boolean;
  batches: boolean;
}

function usesOf(project: Project): Uses {
  const operations = project.backends.flatMap((backend) => backend.resources.flatMap((resource) => resource.operations));
  const batches = project.backends.some((backend) => backend.batch !== undefined);
  return {
    reads: operations.some((operation) => operation.method === 'GET') || batches,
    versions: operations.some((operation) => operation.version !== undefined),
    required: operations.some((operation) => operation.version?.required === true),
    keys: operations.some(takesKey) || batches,
    requiredKeys: operations.some((operation) => takesKey(operation) && operation.idempotency === 'required'),
    batches,
  };
}

/** A POST takes Idempotency-Key when its handler runs a transaction, where the record is written (§15), or when it requires one. */
function takesKey(operation: Operation): boolean {
  return operation.method === 'POST' && (operation.transaction || operation.idempotency === 'required');
}

/**
 * One operation's validators, preconditions and key: its header parameters, the headers of its success answer, and
 * the statuses they add. `success` is the operation's own 2xx answer, as operation.ts wrote it.
 */
export function safeWrites(operation: Operation, object: Schema, responses: Record<string, unknown>): void {
  const success = responses[String(operation.status)] as Schema;
  const parameters: unknown[] = [];
  const notes: string[] = [];
  const headers: Record<string, unknown> = {};
  if (operation.method === 'GET') {
    parameters.push(PARAMETER('IfNoneMatch'));
    Object.assign(headers, { ETag: HEADER('ETag'), 'Cache-Control': HEADER('CacheControl') });
    responses['304'] = RESPONSE('NotModified');
    if (operation.validator !== undefined) {
      notes.push(
        operation.validator.kind === 'version'
          ? 'Its ETag is the version of its row, read by a validator before the main statement: a 304 costs that read alone, and the tag is what If-Match takes.'
          : 'Its ETag comes from a validator, a cheaper statement read before the main one: a 304 costs that read alone.',
      );
    }
    if (operation.maxAge !== undefined) notes.push(`Shared caches may keep it ${operation.maxAge} s (Cache-Control: public, max-age=${operation.maxAge}).`);
  }
  if (operation.version !== undefined) {
    const { column, required } = operation.version;
    parameters.push(PARAMETER(required ? 'IfMatchRequired' : 'IfMatch'));
    headers.ETag = HEADER('ETag');
    responses['404'] = RESPONSE('NotFound');
    responses['412'] = RESPONSE('PreconditionFailed');
    if (required) responses['428'] = RESPONSE('PreconditionRequired');
    notes.push(
      `A versioned write (column ${column}): ${required ? 'send' : 'it takes'} If-Match with the ETag a GET gave, and it writes only if the row is unchanged (else 412 with the current ETag); its answer's ETag is the new version.`,
    );
  }
  if (takesKey(operation)) {
    const required = operation.idempotency === 'required';
    parameters.push(PARAMETER(required ? 'IdempotencyKeyRequired' : 'IdempotencyKey'));
    headers['Idempotent-Replayed'] = HEADER('IdempotentReplayed');
    responses['400'] ??= shared('BadRequest');
    responses['409'] = RESPONSE('IdempotencyConflict');
    responses['422'] = RESPONSE('IdempotencyKeyReused');
    if (required) notes.push('Requires an Idempotency-Key: a retry with the same key never runs it twice.');
  }
  if (parameters.length > 0) object.parameters = [...((object.parameters as unknown[] | undefined) ?? []), ...parameters];
  if (Object.keys(headers).length > 0) success.headers = { ...((success.headers as object | undefined) ?? {}), ...headers };
  if (notes.length > 0) object.description = [object.description, ...notes].filter(Boolean).join(' ');
}

/** `POST /<backend>/batch` of a backend with batches on (`batch="on"`), or undefined. */
export function batchOperation(backend: Backend): Schema | undefined {
  if (backend.batch === undefined) return undefined;
  const { maxOperations, timeoutMs } = backend.batch;
  const scheme = backend.authScheme === null ? [] : [{ [backend.authScheme === 'Basic' ? 'basicAuth' : 'bearerAuth']: [] }];
  const failure = (description: string) => ({ description, content: { 'application/json': { schema: { anyOf: [SCHEMA('BatchFailure'), SCHEMA('Error')] } } } });
  return {
    operationId: `${camel(backend.name)}_batch`,
    tags: [backend.name],
    summary: `Runs several of ${backend.name}'s operations in one transaction`,
    description: `At most ${maxOperations} operations, run in order in one transaction, each through its own route (its guard with this request's credentials, parameters, steps, rate limit, audit, events): all commit or none. A value {"$ref": "/<index>/<pointer>"} in a body takes what an earlier operation answered. Past ${timeoutMs / 1000} s the batch is rolled back (503). An operation the credentials may not call alone fails the batch.`,
    // Each operation is checked by its own route: the batch itself takes the backend's credentials, or none for public routes.
    security: [...scheme, ...(backend.apiKeys && backend.authScheme !== null ? [{ apiKeyAuth: [] }] : []), {}],
    parameters: [PARAMETER('IdempotencyKey')],
    requestBody: {
      required: true,
      content: {
        'application/json': {
          schema: {
            type: 'object',
            required: ['operations'],
            properties: { operations: { type: 'array', maxItems: maxOperations, items: SCHEMA('BatchOperation') } },
          },
        },
      },
    },
    responses: {
      '200': {
        description: "Every operation's status and body, in order: the batch committed.",
        headers: { 'Idempotent-Replayed': HEADER('IdempotentReplayed') },
        content: { 'application/json': { schema: SCHEMA('BatchAnswer') } },
      },
      '4XX': failure(
        'An operation failed with this status (index, and its error), and nothing was committed; or, before any ran, a batch over its bounds, an unknown path or header (400), a body too large (413), an Idempotency-Key in use (409) or reused (422).',
      ),
      '500': shared('InternalError'),
      '503': {
        ...failure('The database is unreachable or busy, or the batch ran past its time: nothing was committed; try again after Retry-After seconds.'),
        headers: { 'Retry-After': { description: 'Seconds to wait before trying again.', schema: { type: 'string', pattern: '^[0-9]+$' } } },
      },
    },
  };
}

/** What the operations of a project use of the parts above, by kind of component. */
export function safeWriteComponents(project: Project): { parameters: Schema; headers: Schema; responses: Schema; schemas: Schema } {
  const uses = usesOf(project);
  const pick = <T extends object>(parts: T, names: (keyof T | false)[]) =>
    Object.fromEntries(names.filter((name): name is keyof T => name !== false).map((name) => [name, parts[name]]));
  return {
    parameters: pick(PARAMETERS, [
      uses.reads && 'IfNoneMatch',
      uses.versions && 'IfMatch',
      uses.required && 'IfMatchRequired',
      uses.keys && 'IdempotencyKey',
      uses.requiredKeys && 'IdempotencyKeyRequired',
    ]),
    headers: pick(HEADERS, [(uses.reads || uses.versions) && 'ETag', uses.reads && 'CacheControl', uses.reads && 'Vary', uses.keys && 'IdempotentReplayed']),
    responses: pick(RESPONSES, [
      uses.reads && 'NotModified',
      uses.versions && 'NotFound',
      uses.versions && 'PreconditionFailed',
      uses.required && 'PreconditionRequired',
      uses.keys && 'IdempotencyConflict',
      uses.keys && 'IdempotencyKeyReused',
    ]),
    schemas: uses.batches ? BATCH_SCHEMAS : {},
  };
}

/** The batch's body, answer and failure, as runtime/contract/safe-writes.ts has them (BatchOperation, BatchAnswer, BatchFailure). */
const BATCH_SCHEMAS = {
  BatchOperation: {
    type: 'object',
    required: ['method', 'path'],
    properties: {
      method: { type: 'string', enum: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] },
      path: { type: 'string', description: "One of the backend's resource routes, with the base path; a query string allowed." },
      body: {
        type: 'object',
        description:
          'The parameters, as the route takes them in a JSON body. Any value may be {"$ref": "/<index>/<pointer>"}: what an earlier operation answered.',
      },
      headers: {
        type: 'object',
        description: 'If-Match and If-None-Match only: any other header is a 400.',
        properties: { 'If-Match': { type: 'string' }, 'If-None-Match': { type: 'string' } },
        additionalProperties: false,
      },
    },
    additionalProperties: false,
  },
  BatchAnswer: {
    type: 'object',
    required: ['results'],
    properties: {
      results: {
        type: 'array',
        items: { type: 'object', required: ['status', 'body'], properties: { status: { type: 'integer' }, body: { description: "The operation's answer." } } },
      },
    },
  },
  BatchFailure: {
    type: 'object',
    required: ['message', 'status', 'index', 'error'],
    properties: {
      message: { type: 'string', description: 'Operation <index> failed: <its message>' },
      status: { type: 'integer' },
      index: { type: 'integer', minimum: 0, description: 'The failing operation, from 0.' },
      error: SCHEMA('Error'),
    },
  },
};
