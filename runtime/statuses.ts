/**
 * Every error status the server answers, with its body's message and the reason code the access log line, the
 * metrics (`xmlrest_auth_failures_total`) and a trace carry (never sent to the client): one list, from which
 * `npm run docs` writes docs/reference/errors.md. test/unit/reference.test.ts reads the runtime's and the console's sources for
 * the statuses and reasons they answer, and fails when one is missing here or one here is never answered.
 * The body is always `{"message", "status"}` (runtime/contract/error-body.ts), with `requestId` on a 500 and
 * on a database fault's 503.
 */
export interface ErrorStatus {
  status: number;
  /** The reason code, or '' when the answer carries none. */
  reason: string;
  /** The body's message; `*` stands for a value put in. */
  message: string;
  /** When it is answered. */
  when: string;
  /** Headers that come with it. */
  headers?: string;
  /** Answered by Node's HTTP server itself (runtime/listen.ts sets its limits), with an empty body. */
  byNode?: true;
  /** Answered by the admin console's API (console/) only. */
  console?: true;
}

const DB = 'the database did not answer in time, or a statement failed for a reason of the server (docs/contract.md §7)';

export const ERROR_STATUSES: readonly ErrorStatus[] = [
  { status: 400, reason: '', message: "Missing parameter '*'", when: 'a required parameter was not sent' },
  { status: 400, reason: '', message: "Parameter '*' must be *", when: 'a parameter is not of its type (docs/reference/parameters.md lists each message)' },
  { status: 400, reason: '', message: 'Too many parameters: at most *', when: 'more query-string and body fields than MAX_PARAMS' },
  { status: 400, reason: '', message: 'Malformed request body', when: 'a body that cannot be read: bad JSON, bad gzip, an aborted upload' },
  {
    status: 400,
    reason: 'bad_idempotency_key',
    message: 'Idempotency-Key must be 1 to * printable ASCII characters',
    when: 'a POST whose Idempotency-Key is empty, longer than 255 characters, or holds a space, a control or a character beyond ASCII',
  },
  {
    status: 400,
    reason: 'idempotency_key_required',
    message: 'This request requires an Idempotency-Key header',
    when: 'a POST of a Request with idempotency="required" sent without one',
  },
  {
    status: 400,
    reason: '',
    message: 'A value was rejected by the database: check the parameters',
    when: 'the database refused a value (NULL, out of range, too long, a CHECK)',
  },
  {
    status: 400,
    reason: '',
    message: "Parameter 'after' is not a cursor of this list: *",
    when: "a list's `after` was changed, or made for another list or user",
  },
  {
    status: 400,
    reason: '',
    message: "Parameter 'sort' is not the sort its cursor 'after' was made for (*): send that one, or none",
    when: "a list's `after` with another sort",
  },
  { status: 400, reason: '', message: "Parameter 'scope' must be 'all' or absent", when: 'logout with another scope' },
  { status: 400, reason: '', message: 'This token belongs to no session: *', when: 'logout with a token of no session' },
  { status: 400, reason: '', message: "Parameter 'auth' must be 'bearer'", when: 'a token request (shape A) with another auth' },
  { status: 400, reason: '', message: "Parameter 'for' must be 'me'", when: 'openapi.json?for= anything else' },
  {
    status: 401,
    reason: 'no_credentials',
    message: 'Credentials required',
    when: 'no credentials on a backend with absent_credentials="401"',
    headers: 'WWW-Authenticate',
  },
  {
    status: 401,
    reason: 'malformed',
    message: 'Malformed or wrong-scheme credentials: use Basic / Invalid credentials / Invalid token: *',
    when: 'an Authorization header that cannot be read, or a malformed token',
    headers: 'WWW-Authenticate',
  },
  {
    status: 401,
    reason: 'wrong_scheme',
    message: 'Malformed or wrong-scheme credentials: use Basic / Invalid token: *',
    when: "credentials of another scheme than the backend's",
    headers: 'WWW-Authenticate',
  },
  {
    status: 401,
    reason: 'unknown_user',
    message: 'Invalid credentials',
    when: 'no such user (or a token request for a user with no role)',
    headers: 'WWW-Authenticate (Basic)',
  },
  {
    status: 401,
    reason: 'bad_password',
    message: 'Invalid credentials',
    when: 'the password does not match the stored hash',
    headers: 'WWW-Authenticate (Basic)',
  },
  {
    status: 401,
    reason: 'bad_credentials',
    message: 'Invalid credentials',
    when: 'an AuthQuery that compares $pass itself found no row',
    headers: 'WWW-Authenticate (Basic)',
  },
  {
    status: 401,
    reason: 'expired',
    message: 'Invalid token: token expired',
    when: "a token past its exp (or an outside issuer's not yet valid)",
    headers: 'WWW-Authenticate',
  },
  {
    status: 401,
    reason: 'bad_signature',
    message: 'Invalid token: token signature is invalid',
    when: 'a signature that does not verify',
    headers: 'WWW-Authenticate',
  },
  { status: 401, reason: 'bad_algorithm', message: 'Invalid token: *', when: 'a token signed with an algorithm not accepted', headers: 'WWW-Authenticate' },
  { status: 401, reason: 'wrong_issuer', message: 'Invalid token: *', when: 'a token of another issuer', headers: 'WWW-Authenticate' },
  { status: 401, reason: 'wrong_backend', message: 'Invalid token: *', when: "another backend's token", headers: 'WWW-Authenticate' },
  { status: 401, reason: 'wrong_audience', message: 'Invalid token: *', when: "an outside issuer's token for another audience", headers: 'WWW-Authenticate' },
  {
    status: 401,
    reason: 'unknown_key',
    message: 'Invalid token: * / Invalid API key',
    when: 'a token signed by a key id JWT_SECRET no longer holds, or an API key not on record',
    headers: 'WWW-Authenticate (tokens)',
  },
  {
    status: 401,
    reason: 'unknown_kid',
    message: 'Invalid token: *',
    when: "an outside issuer's token whose key (kid) its key set does not hold",
    headers: 'WWW-Authenticate',
  },
  {
    status: 401,
    reason: 'revoked',
    message: 'Invalid token: token revoked',
    when: "a revoked token, or one of a revoked user's or an ended session's",
    headers: 'WWW-Authenticate',
  },
  { status: 401, reason: 'malformed_key', message: 'Invalid API key', when: 'a key of the wrong shape or checksum' },
  { status: 401, reason: 'revoked_key', message: 'Invalid API key', when: 'a revoked key' },
  { status: 401, reason: 'expired_key', message: 'Invalid API key', when: 'a key past its expiry' },
  { status: 401, reason: 'disabled_user', message: 'Invalid API key', when: 'a key of a disabled user' },
  { status: 401, reason: 'roles_revoked', message: 'Invalid API key', when: 'a key whose user holds none of its roles any more' },
  { status: 401, reason: 'malformed_refresh', message: 'Invalid refresh token', when: 'a refresh token of the wrong shape' },
  { status: 401, reason: 'unknown_refresh', message: 'Invalid refresh token', when: 'a refresh token of no session' },
  { status: 401, reason: 'session_ended', message: 'Invalid refresh token', when: 'the session has ended (logout, revocation, its lifetime)' },
  { status: 401, reason: 'refresh_contended', message: 'Invalid refresh token', when: 'the same refresh token used twice at once' },
  { status: 401, reason: 'refresh_reused', message: 'Invalid refresh token', when: 'a rotated refresh token used again: the session is ended' },
  { status: 401, reason: 'user_gone', message: 'Invalid refresh token', when: 'the user holds no role any more' },
  { status: 403, reason: 'no_credentials', message: 'Forbidden access to resource', when: 'no credentials (the default, absent_credentials="403")' },
  { status: 403, reason: 'no_scheme', message: 'Forbidden access to resource', when: 'a protected method on a backend with no auth_scheme' },
  { status: 403, reason: 'role_not_held', message: 'Forbidden access to resource', when: 'the caller holds none of the roles the method admits' },
  {
    status: 403,
    reason: 'no_tenant',
    message: 'Forbidden access to resource',
    when: "a tenant backend's caller who has no tenant, or one not of the tenant's type (docs/internals/contract.md §14)",
  },
  {
    status: 403,
    reason: 'tenant_crossed',
    message: 'Forbidden: the row belongs to another tenant',
    when: 'a write of a tenant backend with triggers="on" that the database\'s tenant triggers refused: its row names another tenant (runtime/tenants/triggers.ts)',
  },
  { status: 403, reason: 'unknown_user', message: 'Forbidden access to resource', when: "an outside issuer's token that maps to no local user" },
  {
    status: 403,
    reason: 'api_key_refused',
    message: "An API key is not accepted here: use a person's own credentials",
    when: 'an API key at a door that takes a person only',
  },
  {
    status: 403,
    reason: 'insecure_transport',
    message: 'Credentials must be sent over HTTPS',
    when: 'REQUIRE_TLS_FOR_CREDENTIALS and credentials over plain HTTP from beyond loopback',
  },
  { status: 403, reason: 'cross_site', message: 'Cross-site request refused', when: "a write from another site's page (Origin or Sec-Fetch-Site)" },
  { status: 404, reason: '', message: 'Not found', when: 'no resource at the path (and any unknown path on the admin port)' },
  { status: 405, reason: '', message: 'Method * not allowed', when: 'the path is a resource without that method', headers: 'Allow' },
  { status: 408, reason: '', message: '(empty)', when: 'a client slower than REQUEST_TIMEOUT_MS to send its request', byNode: true },
  {
    status: 409,
    reason: '',
    message: 'Conflict: a row with this key already exists / Conflict: the row refers to, or is referred to by, another row',
    when: 'a duplicate key, or a foreign key',
  },
  {
    status: 409,
    reason: 'idempotency_in_progress',
    message: 'A request with this Idempotency-Key is still running',
    when: "a POST whose Idempotency-Key's first use has not committed within a second (docs/internals/contract.md §15)",
    headers: 'Retry-After: 1',
  },
  { status: 413, reason: '', message: 'Request body too large', when: 'a body past 1 MB' },
  {
    status: 413,
    reason: 'event_too_large',
    message: 'The change is too large to be sent as an event: send smaller values',
    when: 'an Emit whose event is past EVENTS_MAX_BYTES',
  },
  { status: 415, reason: '', message: 'Unsupported body type: send JSON or form-encoded', when: 'a body of another content type' },
  {
    status: 429,
    reason: 'rate_limited',
    message: 'Too many requests: the rate limit of this route is reached / Too many failed logins: try again later',
    when: "a route's rate_limit is reached, or the failed-login limits (LOGIN_MAX_FAILURES...)",
    headers: 'Retry-After (and RateLimit, RateLimit-Policy on a rate_limit)',
  },
  {
    status: 429,
    reason: 'too_many_sessions',
    message: 'Too many sign-ins for this user: try again later',
    when: 'more sessions begun than LOGIN_MAX_SESSIONS in the window',
    headers: 'Retry-After',
  },
  {
    status: 422,
    reason: 'idempotency_key_reused',
    message: 'This Idempotency-Key was used with another request',
    when: 'a POST whose Idempotency-Key the caller used before with another method, path, query string or body',
  },
  { status: 431, reason: '', message: '(empty)', when: 'a header block past MAX_HEADER_BYTES', byNode: true },
  {
    status: 503,
    reason: 'idempotency_unavailable',
    message: 'Idempotency-Key is not available: run xmlrest db init',
    when: 'a POST with an Idempotency-Key on a database without xmlrest_idempotency',
    headers: 'Retry-After',
  },
  { status: 500, reason: '', message: 'Internal error', when: 'a fault of the server (the log has its details under requestId)' },
  {
    status: 503,
    reason: '',
    message: '(at /readyz) {"status": "unavailable", "reason": *}',
    when: '/readyz while the database cannot serve',
    headers: 'Retry-After',
  },
  {
    status: 503,
    reason: 'login_busy',
    message: 'Too many password checks at once: try again shortly',
    when: 'the password hashing queue is full',
    headers: 'Retry-After',
  },
  {
    status: 503,
    reason: 'idp_unavailable',
    message: "Service unavailable: the identity provider's keys cannot be fetched",
    when: "an outside issuer's keys cannot be fetched and the last good ones are older than IDP_STALE_SECONDS",
    headers: 'Retry-After',
  },
  { status: 503, reason: 'db_timeout', message: 'Service unavailable', when: `a statement past QUERY_TIMEOUT_MS: ${DB}`, headers: 'Retry-After' },
  {
    status: 503,
    reason: 'db_pool_exhausted',
    message: 'Service unavailable',
    when: 'no pooled connection within DB_ACQUIRE_TIMEOUT_MS, or DB_QUEUE_LIMIT waiting',
    headers: 'Retry-After',
  },
  {
    status: 503,
    reason: 'db_unreachable',
    message: 'Service unavailable',
    when: 'the database cannot be reached, or the connection was lost',
    headers: 'Retry-After',
  },
  {
    status: 503,
    reason: 'db_tls',
    message: 'Service unavailable',
    when: "the database's TLS cannot be set up (ssl-mode in DATABASE_URL)",
    headers: 'Retry-After',
  },
  { status: 503, reason: 'db_not_ready', message: 'Service unavailable', when: 'a Galera node not ready for queries', headers: 'Retry-After' },
  {
    status: 503,
    reason: 'db_full',
    message: 'Service unavailable',
    when: 'the database refused a write for want of space (1114 the table is full, 1021 the disk is full)',
    headers: 'Retry-After',
  },
  {
    status: 503,
    reason: 'db_conflict',
    message: 'Service unavailable',
    when: 'a deadlock or Galera conflict still there after the retries',
    headers: 'Retry-After',
  },
  {
    status: 503,
    reason: 'db_commit_unknown',
    message: 'Service unavailable',
    when: 'the connection was lost during COMMIT: whether it committed is unknown, so it is not run again',
    headers: 'Retry-After',
  },
  // The admin console's API (console/): its page's calls, answered with the same body.
  { status: 400, reason: '', message: '*', when: "a console request's fields are wrong: the message says which", console: true },
  {
    status: 403,
    reason: 'console_header',
    message: 'Console changes need the X-XMLRest-Console header',
    when: 'a console change without the header no form can send',
    console: true,
  },
  { status: 403, reason: 'console_scope', message: '*', when: "a change of a user or role outside what this backend's console may change", console: true },
  {
    status: 404,
    reason: '',
    message: 'No such backend, or it has no authentication / No such user / No such resource / *',
    when: 'the console names something that is not there',
    console: true,
  },
  {
    status: 405,
    reason: '',
    message: 'Method * not allowed',
    when: "the console's page asked with a method other than GET or HEAD",
    headers: 'Allow',
    console: true,
  },
  {
    status: 409,
    reason: '',
    message: '*',
    when: 'a console change that conflicts: the user or role exists, yourself, a revoked key, servers sharing the database, a file changed since read',
    console: true,
  },
  { status: 422, reason: '', message: '*', when: "a console change of auth the generator refuses (the message holds the generator's errors)", console: true },
  {
    status: 503,
    reason: '',
    message: 'The server is starting: try again in a moment',
    when: 'the console is asked before the routes are up',
    headers: 'Retry-After',
    console: true,
  },
];
