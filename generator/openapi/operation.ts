// One resource method's operation object: its security, notes, parameters and every answer it can give; apart
// from the document, which puts the operations, the token endpoints and the webhooks together.
import type { Backend, Operation, Resource } from '../ir.js';
import { operationId } from '../names.js';
import { auditKeeps } from '../secrets.js';
import { LINK_HEADER, listNote, listOf, listParamDescription, NEXT_CURSOR } from './lists.js';
import { errorResponse, RATE_LIMIT_FIELDS, requestBody, type Schema, shared } from './responses.js';
import { safeWrites } from './safe-writes.js';
import { paramSchema, stepSchema } from './schemas.js';
import { REFRESH_TOKEN } from './tokens.js';

const RATE_UNITS: Record<number, string> = { 1: 'second', 60: 'minute', 3600: 'hour' };

export function operationObject(backend: Backend, resource: Resource, operation: Operation): Schema {
  const object: Schema = {
    operationId: operationId(backend.name, resource.name, resource.version, operation.method),
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
  if (backend.tenant !== undefined) {
    // Whether every step is proven to keep to the caller's tenant, or one says it crosses (tenant="all").
    object['x-xmlrest-tenant'] = operation.steps.some((step) => step.tenant === 'all') ? 'all' : 'proven';
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
  if (access !== null && operation.tenant) {
    // A tenant backend's caller must have a tenant (docs/internals/contract.md §14): one without is refused too.
    responses['403'] = errorResponse(
      access === '*'
        ? 'No Authorization header, or the caller has no tenant.'
        : `No Authorization header, or the user holds none of the roles ${access.join(', ')}, or the caller has no tenant.`,
    );
  } else if (access !== null) {
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
  safeWrites(operation, object, responses);
  object.responses = responses;
  return object;
}
