import type Koa from 'koa';
import bodyParser from 'koa-bodyparser';
import { badRequest, HttpError } from './errors.js';

/** A request's fields: the query string's at once, the body's parsed (a promise) only when there is a body. */
export interface RequestFields {
  query: Record<string, string | string[]>;
  body: unknown | Promise<unknown>;
}

/**
 * A request's fields, read only when a handler reads parameters, so that
 * routing and authentication answer first (docs/contract.md §3): the query
 * string, and a JSON or form body of at most 1 MB; at most `maxParams`
 * fields in the body and in the query string each.
 */
export type FieldReader = (ctx: Koa.Context, maxParams: number) => RequestFields;

export function fieldReader(): FieldReader {
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
    const query = queryFields(ctx.querystring, maxParams);
    // No body at all (a GET, say): nothing to parse, and no promise, on the hot path.
    if (ctx.req.headers['content-length'] === undefined && ctx.req.headers['transfer-encoding'] === undefined) return { query, body: undefined };
    return { query, body: read(ctx, maxParams) };
  };
}

/**
 * The query string's fields, in one pass, refused past `maxParams` of them.
 * Koa's `ctx.query` looks each key up again in the whole list (getAll), so its
 * work grows with the square of the fields' number, and the limit could only
 * be checked once it was done: a URL of a few thousand empty fields, within
 * the header limit, cost milliseconds of CPU before its 400. The decoding is
 * the same (WHATWG URLSearchParams), and a repeated key gives an array, as in
 * Koa, which readParams refuses.
 */
export function queryFields(text: string, maxParams: number): Record<string, string | string[]> {
  const fields: Record<string, string | string[]> = Object.create(null);
  if (text === '') return fields;
  let count = 0;
  for (const [key, value] of new URLSearchParams(text)) {
    const seen = fields[key];
    if (seen === undefined) {
      if (++count > maxParams) throw badRequest(`Too many parameters: at most ${maxParams}`);
      fields[key] = value;
    } else if (Array.isArray(seen)) seen.push(value);
    else fields[key] = [seen, value];
  }
  return fields;
}
