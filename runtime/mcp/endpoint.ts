import type { IncomingMessage } from 'node:http';
import { type JSONRPCMessage, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import type Koa from 'koa';
import type { Guard } from '../auth/guard.js';
import { callerReach } from '../auth/reach.js';
import { type Principal, principalName } from '../auth/scheme.js';
import { credentialsOf } from '../auth/transport/transport.js';
import type { BackendModule } from '../contract.js';
import { HttpError } from '../errors.js';
import type { RequestState } from '../request-log.js';
import { canonicalTenant } from '../tenants/canonical.js';
import type { McpRequest } from './call.js';
import { ToolAnswer } from './call.js';
import { refuseForeign } from './origin.js';
import type { ExchangeTransport } from './transport.js';

/** The most a request's body may hold: what every route's JSON body may (body.ts). */
const MAX_BODY = 1024 * 1024;
/** Most messages in one batch of the protocol versions that have batches. */
const MAX_BATCH = 100;
/** The first version whose POST carries one message, never a batch (MCP 2025-06-18, "Streamable HTTP"). */
const SINGLE_MESSAGE_SINCE = '2025-06-18';

export interface EndpointOptions {
  backend: BackendModule;
  guard: Guard;
  transport: ExchangeTransport;
  allowedOrigins: ReadonlySet<string>;
  /** The 401's WWW-Authenticate without credentials on a Bearer backend with Issuers (RFC 9728); else undefined. */
  challenge: ((ctx: Koa.Context) => string) | undefined;
}

/**
 * `POST {base}/<backend>/mcp` (docs/internals/contract.md §16), the Streamable HTTP transport, stateless, answered
 * in JSON: each check answered as the SDK's own transport answers it (406, 415, 400 with a JSON-RPC error), after
 * the HTTP rules every door has (another site's page, DNS rebinding: 403; credentials the backend refuses: its 401
 * or 429). Requests are answered 200 with their answers (one, or a batch's); notifications and responses alone 202.
 */
export function mcpEndpoint({ backend, guard, transport, allowedOrigins, challenge }: EndpointOptions): Koa.Middleware {
  const backends = [backend];
  const guards = new Map([[backend.name, guard]]);
  return async (ctx) => {
    refuseForeign(ctx as unknown as Koa.Context, allowedOrigins);
    // Read from Node's headers as they are, rather than through Koa's getters (`ctx.get`, some µs a request).
    const headers = ctx.req.headers;
    const accept = headers.accept ?? '';
    if (!/application\/json|application\/\*|\*\/\*/i.test(accept)) return rpcError(ctx, 406, -32000, 'Not Acceptable: Client must accept application/json');
    if (!isJson(headers['content-type'] ?? '')) return rpcError(ctx, 415, -32000, 'Unsupported Media Type: Content-Type must be application/json');
    const version = oneHeader(headers['mcp-protocol-version']);
    if (version !== '' && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
      return rpcError(
        ctx,
        400,
        -32000,
        `Bad Request: Unsupported protocol version: ${version} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`,
      );
    }
    const { authorization, apiKey } = credentialsOf(ctx);
    if (authorization === undefined && apiKey === undefined && challenge !== undefined) {
      throw new HttpError(401, 'Authentication required', { 'WWW-Authenticate': challenge(ctx as unknown as Koa.Context) }, 'no_credentials');
    }
    // Who the caller is, asked of the backend's guard as `?for=me` asks it; its refusal is the HTTP answer.
    const reach = await callerReach(backends, guards, authorization, apiKey, ctx.ip).catch((error: unknown) => {
      throw challenge === undefined ? error : pointed(error, challenge(ctx as unknown as Koa.Context));
    });
    const principal: Principal | undefined = reach.get(backend.name);
    if (principal !== undefined) nameCaller(ctx.state as RequestState, principal, backend);
    let parsed: unknown;
    try {
      parsed = JSON.parse(await bodyText(ctx.req));
    } catch (error) {
      if (error instanceof HttpError) throw error;
      return rpcError(ctx, 400, -32700, 'Parse error: Invalid JSON');
    }
    const batch = Array.isArray(parsed);
    if (batch && (version >= SINGLE_MESSAGE_SINCE || (parsed as unknown[]).length === 0 || (parsed as unknown[]).length > MAX_BATCH)) {
      return rpcError(
        ctx,
        400,
        -32600,
        `Invalid Request: ${version >= SINGLE_MESSAGE_SINCE ? `a POST carries one message in ${version}` : `a batch holds 1 to ${MAX_BATCH} messages`}`,
      );
    }
    const messages = (batch ? parsed : [parsed]) as unknown[];
    if (!messages.every(isMessage)) return rpcError(ctx, 400, -32600, 'Invalid Request: not a JSON-RPC 2.0 message');
    if (batch && messages.some((message) => (message as { method?: unknown }).method === 'initialize')) {
      return rpcError(ctx, 400, -32600, 'Invalid Request: initialize is sent alone');
    }
    const request: McpRequest = { ctx: ctx as unknown as Koa.Context, principal };
    const closed = () => {
      if (!ctx.res.writableFinished) transport.abandon(request);
    };
    ctx.res.once('close', closed);
    // Each audited tool call waits for this answer to close (routes.ts, audited): a batch's calls are as many
    // listeners, more than Node's default ten, which is no leak (each goes with the answer) but warns as one would.
    if (messages.length > 1) ctx.res.setMaxListeners(ctx.res.getMaxListeners() + messages.length);
    const answers = await transport.handle(messages as JSONRPCMessage[], request);
    ctx.res.off('close', closed);
    if (answers.length === 0) {
      ctx.status = 202;
      return;
    }
    ctx.status = 200;
    ctx.set('Content-Type', 'application/json');
    // An answer for this caller alone: no shared cache keeps it.
    ctx.set('Cache-Control', 'no-store');
    ctx.body = batch ? `[${answers.map(answerText).join(',')}]` : answerText(answers[0]!);
  };
}

/** A JSON-RPC answer's text: a tool call's result written as its route's text stands (call.ts, ToolAnswer). */
function answerText(answer: JSONRPCMessage): string {
  const result = (answer as { result?: unknown }).result;
  if (!(result instanceof ToolAnswer)) return JSON.stringify(answer);
  return `{"jsonrpc":"2.0","id":${JSON.stringify((answer as { id: unknown }).id)},"result":${result.json()}}`;
}

/**
 * A refused token's 401 pointing at the protected resource metadata too: MCP asks it of every 401, so that a client
 * whose token expired or was revoked learns where to get another as one that sent none does. The scheme's own
 * challenge (its error, its description) stays; the metadata is one more parameter of it.
 */
function pointed(error: unknown, challenge: string): unknown {
  if (!(error instanceof HttpError) || error.status !== 401) return error;
  const own = error.headers['WWW-Authenticate'];
  const header = own === undefined || !/^Bearer\b/i.test(own) ? challenge : `${own}, ${challenge.replace(/^Bearer /, '')}`;
  return new HttpError(401, error.message, { ...error.headers, 'WWW-Authenticate': header }, error.reason);
}

/**
 * Who the caller is, in the request's access log line as a route's line names it (scope.ts): its user (an outside
 * issuer's with the issuer), its key, its tenant. A tool call's own state is its sub-context's, which no line reads.
 */
function nameCaller(state: RequestState, principal: Principal & { keyId?: number }, backend: BackendModule): void {
  state.userId = principalName(principal);
  if (principal.keyId !== undefined) state.keyId = principal.keyId;
  if (backend.tenant !== undefined) state.tenant = canonicalTenant(backend.tenant.type, principal.tenant);
}

/** A JSON-RPC error with no id, in a status of its own (the SDK transport's answers to what it cannot handle). */
function rpcError(ctx: Koa.ParameterizedContext, status: number, code: number, message: string): void {
  ctx.status = status;
  ctx.set('Content-Type', 'application/json');
  ctx.body = JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });
}

/** A header's text: Node joins a repeated one it does not know with `, `, and its type allows a list, joined the same way. */
function oneHeader(value: string | string[] | undefined): string {
  return value === undefined ? '' : typeof value === 'string' ? value : value.join(', ');
}

/** `application/json`, with parameters or none (a parsed media type, never a substring). */
function isJson(type: string): boolean {
  return type.split(';')[0]!.trim().toLowerCase() === 'application/json';
}

/** A request, a notification or a response of JSON-RPC 2.0, by its shape; the server checks each request's params. */
function isMessage(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const message = value as Record<string, unknown>;
  if (message.jsonrpc !== '2.0') return false;
  const id = message.id;
  const validId = typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id));
  if (typeof message.method === 'string') return !('id' in message) || validId;
  return validId && ('result' in message || 'error' in message);
}

/** The body's text, refused past MAX_BODY (413) and when encoded (415): nothing else reads it. */
function bodyText(req: IncomingMessage): Promise<string> {
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') throw new HttpError(415, 'Unsupported body encoding: send JSON as it is');
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > MAX_BODY) throw new HttpError(413, 'Request body too large');
  // Read by its events: a stream's async iterator costs more than a small body's whole read.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const data = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY) chunks.push(chunk);
    };
    const done = (error?: Error) => {
      req.off('data', data).off('end', done).off('error', done).off('aborted', aborted);
      if (error !== undefined) reject(error);
      else if (size > MAX_BODY) reject(new HttpError(413, 'Request body too large'));
      else resolve(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8'));
    };
    const aborted = () => done(new HttpError(400, 'Request body aborted'));
    req.on('data', data).on('end', done).on('error', done).on('aborted', aborted);
  });
}
