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
 * routing and authentication answer first (docs/internals/contract.md §3): the query
 * string, and a JSON or form body of at most 1 MB; at most `maxParams`
 * fields in the body and in the query string each.
 */
export type FieldReader = (ctx: Koa.Context, maxParams: number) => RequestFields;

export function fieldReader(): FieldReader {
  // A parser per limit (a server has two: MAX_PARAMS and the token door's), each decoding a form body as the
  // query string is decoded (queryFields) and refusing it at the first field past its limit. koa-bodyparser's
  // default, qs, took a third of the parse's time on a two-field body, built nested objects from `a[b]` and
  // `a.b`, which no parameter can be, and counted the fields only once it had made them all.
  const parsers = new Map<number, Koa.Middleware>();
  const parserFor = (maxParams: number): Koa.Middleware => {
    let parse = parsers.get(maxParams);
    if (parse === undefined) {
      const form = { parse: (text: string) => queryFields(text, maxParams) };
      // `qs` reaches co-body, koa-bodyparser's parser, which takes a module of that shape for form bodies.
      const options = { enableTypes: ['json', 'form'], jsonLimit: '1mb', formLimit: '1mb', strict: true, qs: form };
      parse = bodyParser(options as bodyParser.Options);
      parsers.set(maxParams, parse);
    }
    return parse;
  };
  const read = async (ctx: Koa.Context, maxParams: number): Promise<unknown> => {
    const request = ctx.request as typeof ctx.request & { body?: unknown };
    if (request.body === undefined) {
      try {
        await parserFor(maxParams)(ctx, async () => {});
      } catch (error) {
        // Too many form fields: co-body hangs the whole body on the error it passes on (`body`); only its words go on.
        if (error instanceof HttpError) throw badRequest(error.message);
        // A body that cannot be read (bad JSON, bad gzip, an aborted upload) is the client's fault,
        // whether or not the parser gave it a status; only the size and type limits keep theirs.
        const status = (error as { status?: unknown }).status;
        if (status === 413 || status === 415) throw error;
        throw new HttpError(400, 'Malformed request body');
      }
    }
    // A JSON body is counted once parsed (within its 1 MB); a form body was counted while it was read.
    if (typeof request.body === 'object' && request.body !== null && Object.keys(request.body).length > maxParams) {
      throw badRequest(`Too many parameters: at most ${maxParams}`);
    }
    return request.body;
  };
  return (ctx, maxParams) => {
    const query = queryFields(ctx.request.querystring, maxParams);
    // No body at all (a GET, say): nothing to parse, and no promise, on the hot path.
    if (ctx.req.headers['content-length'] === undefined && ctx.req.headers['transfer-encoding'] === undefined) return { query, body: undefined };
    return { query, body: read(ctx, maxParams) };
  };
}

/**
 * The query string's fields, or a form body's, in one pass, refused past `maxParams` of them.
 * Koa's `ctx.query` looks each key up again in the whole list (getAll), so its
 * work grows with the square of the fields' number, and the limit could only
 * be checked once it was done: a URL of a few thousand empty fields, within
 * the header limit, cost milliseconds of CPU before its 400. The decoding is
 * the same (WHATWG URLSearchParams), and a repeated key gives an array, as in
 * Koa, which readParams refuses.
 */
/** What URLSearchParams decodes or re-encodes in a query string. */
const DECODED = /[%+\u0080-\uffff]/;

export function queryFields(text: string, maxParams: number): Record<string, string | string[]> {
  const fields = new (Fields as unknown as new () => Record<string, string | string[]>)();
  if (text === '') return fields;
  // What URLSearchParams would change (a `%`, a `+`, a character past ASCII, which it re-encodes as UTF-8) goes
  // through it; anything else is its own text, cut at `&` and the first `=` as it cuts: its iterator and the copies
  // it makes were the largest item of ours in the one-row GET's profile (some 2 µs of a `?id=42`).
  if (DECODED.test(text)) {
    let count = 0;
    for (const [key, value] of new URLSearchParams(text)) count = add(fields, key, value, count, maxParams);
    return fields;
  }
  let count = 0;
  // URLSearchParams drops one leading `?` (`/path??a=1`).
  let start = text.startsWith('?') ? 1 : 0;
  // The next `=` at or after `start`, kept from piece to piece: looked up afresh for each piece, a text of many pieces
  // without one (`a&a&a...`, a form body of 1 MB) was searched to its end each time, seconds of CPU for one request.
  let equals = -1;
  while (start <= text.length) {
    let end = text.indexOf('&', start);
    if (end === -1) end = text.length;
    if (end > start) {
      if (equals < start) {
        equals = text.indexOf('=', start);
        if (equals === -1) equals = text.length;
      }
      count =
        equals >= end
          ? add(fields, text.slice(start, end), '', count, maxParams)
          : add(fields, text.slice(start, equals), text.slice(equals + 1, end), count, maxParams);
    }
    start = end + 1;
  }
  return fields;
}

/**
 * A request's fields inherit no name (`constructor`, `__proto__`, `toString` are fields like any other): their
 * prototype is an empty object of no prototype, frozen. Not `Object.create(null)` itself: V8 keeps such an object as
 * a dictionary, and each key cut from the text (not yet interned) was stored through the runtime, some 0.5 µs a
 * field against 0.1 (node 20, issue 46); an object made by `new` with this prototype stays in V8's fast mode.
 */
function Fields(): void {}
Fields.prototype = Object.freeze(Object.create(null));

/** One field: a repeated key gives an array; the count of distinct keys is refused past `maxParams`. */
function add(fields: Record<string, string | string[]>, key: string, value: string, count: number, maxParams: number): number {
  const seen = fields[key];
  if (seen === undefined) {
    if (++count > maxParams) throw badRequest(`Too many parameters: at most ${maxParams}`);
    fields[key] = value;
  } else if (Array.isArray(seen)) seen.push(value);
  else fields[key] = [seen, value];
  return count;
}
