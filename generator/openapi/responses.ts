// The answers and bodies many operations share (the error body, Retry-After, RateLimit fields), written once
// under `components` or made by one helper: apart so that every part of the document refers to the same ones.

/** A JSON Schema, or any object of the document. */
export type Schema = Record<string, unknown>;

const ERROR_REF = { $ref: '#/components/schemas/Error' };

/** The fields every answer of a rate-limited operation carries (docs/internals/contract.md §10). */
export const RATE_LIMIT_FIELDS = {
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
export const SHARED_RESPONSES = {
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

export function shared(name: keyof typeof SHARED_RESPONSES): Schema {
  return { $ref: `#/components/responses/${name}` };
}

function rateLimited(description: string): Schema {
  const answer = retryLater(description);
  return { ...answer, headers: { ...(answer.headers as object), ...RATE_LIMIT_FIELDS } };
}

/** A refusal that says when to try again. */
export function retryLater(description: string): Schema {
  return {
    ...errorResponse(description),
    headers: { 'Retry-After': { description: 'Seconds to wait before trying again.', schema: { type: 'string', pattern: '^[0-9]+$' } } },
  };
}

export function requestBody(fields: [string, Schema][], types = ['application/json', 'application/x-www-form-urlencoded']): Schema {
  const schema = { type: 'object', required: fields.map(([name]) => name), properties: Object.fromEntries(fields) };
  return { required: true, content: Object.fromEntries(types.map((type) => [type, { schema }])) };
}

export function errorResponse(description: string): Schema {
  return { description, content: { 'application/json': { schema: ERROR_REF } } };
}
