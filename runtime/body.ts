import type Koa from 'koa';
import bodyParser from 'koa-bodyparser';
import { badRequest, HttpError } from './errors.js';

/**
 * The request body, parsed only when a handler reads parameters, so that
 * routing and authentication answer first (docs/contract.md §3): JSON or a
 * form, at most 1 MB, and at most `maxParams` fields in the body and in the
 * query string each.
 */
export type BodyReader = (ctx: Koa.Context, maxParams: number) => unknown | Promise<unknown>;

export function bodyReader(): BodyReader {
  const parse = bodyParser({ enableTypes: ['json', 'form'], jsonLimit: '1mb', formLimit: '1mb', strict: true });
  const read = async (ctx: Koa.Context, maxParams: number): Promise<unknown> => {
    const request = ctx.request as typeof ctx.request & { body?: unknown };
    if (request.body === undefined) {
      try {
        await parse(ctx, async () => {});
      } catch (error) {
        // A body that cannot be read (bad JSON, bad gzip, an aborted upload) is the client's fault,
        // whether or not the parser gave it a status; only the size and type limits keep theirs.
        const status = (error as { status?: unknown }).status;
        if (status === 413 || status === 415) throw error;
        throw new HttpError(400, 'Malformed request body');
      }
    }
    if (typeof request.body === 'object' && request.body !== null && Object.keys(request.body).length > maxParams) {
      throw badRequest(`Too many parameters: at most ${maxParams}`);
    }
    return request.body;
  };
  return (ctx, maxParams) => {
    if (Object.keys(ctx.query).length > maxParams) throw badRequest(`Too many parameters: at most ${maxParams}`);
    // No body at all (a GET, say): nothing to parse, and no promise, on the hot path.
    if (ctx.req.headers['content-length'] === undefined && ctx.req.headers['transfer-encoding'] === undefined) return undefined;
    return read(ctx, maxParams);
  };
}
