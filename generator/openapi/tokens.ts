// The backend's own token endpoints (shape A, refresh, logout) and what its Bearer tokens may be: paths no
// resource file declares, apart from the resources' operations.
import type { Backend, Project } from '../ir.js';
import { camel } from '../names.js';
import { errorResponse, requestBody, type Schema, shared } from './responses.js';

export function shapeA(backend: Backend): Schema {
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

export const REFRESH_TOKEN = {
  type: 'string',
  // Either form the server takes (runtime/auth/sessions/refresh-tokens.ts REFRESH_TOKEN_PATTERN; a unit test keeps them equal).
  pattern: '^xrr_[0-9A-Za-z]{43}([0-9A-Za-z]{11})?$',
  description: 'Buys one new pair at {backend}/v1.0/token/refresh, then is used up.',
};

/** `POST /<backend>/v1.0/token/refresh` (docs/internals/contract.md §10). */
export function refreshOperation(backend: Backend): Schema {
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

/** `POST /<backend>/v1.0/logout` (docs/internals/contract.md §10). */
export function logoutOperation(backend: Backend): Schema {
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

/** What a Bearer token may be: the backend's own, or an access token of an identity provider it accepts (docs/internals/contract.md §9). */
export function bearerDescription(project: Project): string {
  const own = 'A token from the backend\'s token endpoint; the "Bearer " prefix is optional.';
  const issuers = project.backends.flatMap((backend) =>
    backend.issuers.map((issuer) => `${issuer.iss} (backend ${backend.name}, audience ${issuer.audience.join(' or ')})`),
  );
  return issuers.length === 0 ? own : `${own} Also an access token of an identity provider the backend accepts: ${issuers.join('; ')}.`;
}
