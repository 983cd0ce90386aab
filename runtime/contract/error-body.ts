/**
 * Body of every error response (docs/internals/contract.md §3, §4); `requestId` only
 * on a 500, to quote when reporting it.
 */
export interface ErrorBody {
  message: string;
  status: number;
  requestId?: string;
}

/** The same body as JSON Schema, for the OpenAPI document. */
export const ERROR_BODY_SCHEMA = {
  type: 'object',
  required: ['message', 'status'],
  properties: {
    message: { type: 'string' },
    status: { type: 'integer' },
    requestId: { type: 'string', description: 'Only on 500: quote it when reporting the failure.' },
  },
} as const;
