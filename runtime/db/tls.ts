import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect, isIP, type Socket } from 'node:net';
import { createSecureContext } from 'node:tls';
import type mysql from 'mysql2';

/** How the link to the database is protected: MySQL's own `--ssl-mode` values. */
export const SSL_MODES = ['DISABLED', 'PREFERRED', 'REQUIRED', 'VERIFY_CA', 'VERIFY_IDENTITY'] as const;
export type SslMode = (typeof SSL_MODES)[number];

/** The link's TLS: the mode, and mysql2's `ssl` option for it (undefined: plain text). */
export interface DatabaseTls {
  mode: SslMode;
  ssl: mysql.SslOptions | undefined;
  /** mysql2's `stream` option: where the server's name must be checked, its TCP socket is made here (identitySocket). */
  stream: typeof identitySocket | undefined;
}

/** The keys of mysql2's `ssl` JSON that DATABASE_URL may carry. */
const SSL_JSON_KEYS = ['ca', 'cert', 'key', 'rejectUnauthorized', 'verifyIdentity'];

/** What the URL asked for, either spelling, before any file is read. */
interface Asked {
  mode: SslMode | undefined;
  ca: string | undefined;
  cert: string | undefined;
  key: string | undefined;
  /** `ssl` JSON may hold PEM text in place of a file path; `ssl-ca` and friends name files, as MySQL's clients do. */
  pemAllowed: boolean;
}

/**
 * The link's TLS from DATABASE_URL's options: `ssl-mode`, `ssl-ca`,
 * `ssl-cert`, `ssl-key` as MySQL's clients name them, or mysql2's `ssl`
 * JSON (a subset: `ca`, `cert`, `key`, `rejectUnauthorized`,
 * `verifyIdentity`). REQUIRED encrypts without verifying the server;
 * VERIFY_CA checks its certificate against `ssl-ca` (or the system's CAs
 * when none is given) but not its name; VERIFY_IDENTITY checks both.
 * PREFERRED is read as REQUIRED: mysql2 never falls back to plain text once
 * TLS is asked for, and a link that falls back without a word is what this
 * setting is there to prevent. Every problem is pushed to `problems`, each
 * naming its option; no value that may be a key is ever repeated.
 */
export function tlsOf(options: ReadonlyMap<string, string>, problems: string[]): DatabaseTls {
  const asked = options.has('ssl') ? askedAsJson(options, problems) : askedAsOptions(options, problems);
  if (asked === undefined) return { mode: 'DISABLED', ssl: undefined, stream: undefined };
  const given = (['ca', 'cert', 'key'] as const).filter((name) => asked[name] !== undefined);
  const spelled = (name: string) => (asked.pemAllowed ? `ssl ${name}` : `ssl-${name}`);
  // Without a mode, a CA means verify against it (MySQL's connectors read ssl-ca so); anything else, encrypt.
  const mode = asked.mode ?? (asked.ca !== undefined ? 'VERIFY_CA' : given.length > 0 ? 'REQUIRED' : 'DISABLED');
  if (mode === 'DISABLED') {
    if (given.length > 0) problems.push(`DATABASE_URL ssl-mode=DISABLED turns TLS off: ${given.map(spelled).join(', ')} would not be used`);
    return { mode, ssl: undefined, stream: undefined };
  }
  const verify = mode === 'VERIFY_CA' || mode === 'VERIFY_IDENTITY';
  if (!verify && asked.ca !== undefined) {
    problems.push(
      `DATABASE_URL ${spelled('ca')} is not used when the server is not verified (${asked.pemAllowed ? 'rejectUnauthorized false' : `ssl-mode=${mode}`}): ${asked.pemAllowed ? 'drop rejectUnauthorized' : 'use ssl-mode=VERIFY_CA or VERIFY_IDENTITY'} to check the server against it`,
    );
  }
  if ((asked.cert === undefined) !== (asked.key === undefined)) {
    problems.push(
      `DATABASE_URL ${spelled(asked.cert === undefined ? 'key' : 'cert')} needs ${spelled(asked.cert === undefined ? 'cert' : 'key')}: a client certificate is the pair`,
    );
  }
  const ca = pem(asked.ca, spelled('ca'), asked.pemAllowed, problems);
  const cert = pem(asked.cert, spelled('cert'), asked.pemAllowed, problems);
  const key = pem(asked.key, spelled('key'), asked.pemAllowed, problems);
  if (ca !== undefined && !certificates(ca)) problems.push(`DATABASE_URL ${spelled('ca')} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  if (cert !== undefined && key !== undefined) {
    try {
      createSecureContext({ cert, key });
    } catch (error) {
      // OpenSSL's words only: never the key.
      problems.push(`DATABASE_URL ${spelled('cert')} and ${spelled('key')} are not a certificate and its key (${(error as Error).message})`);
    }
  }
  return {
    mode,
    ssl: {
      ...(ca !== undefined ? { ca } : {}),
      ...(cert !== undefined && key !== undefined ? { cert, key } : {}),
      // REQUIRED (and PREFERRED, which MySQL's clients let fall back to plain text and this never does):
      // encrypted, not verified. VERIFY_CA: the chain, not the name (mysql2 then skips checkServerIdentity).
      rejectUnauthorized: verify,
      verifyIdentity: mode === 'VERIFY_IDENTITY',
    },
    stream: mode === 'VERIFY_IDENTITY' ? identitySocket : undefined,
  };
}

/** What mysql2 hands a `stream` factory: the connection's own options. */
interface StreamRequest {
  config: { host?: string; port?: number; socketPath?: string; enableKeepAlive?: boolean; keepAliveInitialDelay?: number };
}

/**
 * The TCP socket of a connection whose server name is checked, made as
 * mysql2 makes it (no delay, keep-alive), but knowing its host.
 *
 * FOOTGUN: Node checks the server's certificate against the TLS socket's
 * `servername`, else the TCP socket's `_host`, else `localhost`
 * (lib/_tls_wrap.js, onConnectSecure). mysql2 gives no servername for an IP
 * address (SNI takes names only), and Node records `_host` only for a name
 * it looked up, so VERIFY_IDENTITY against 10.0.0.5 would check the name
 * `localhost`: refusing a certificate made for that address, and accepting
 * one made for localhost. The address is recorded here, as Node records a
 * name. test/integration/database-tls.test.ts connects by address and by name.
 */
export function identitySocket({ config }: StreamRequest): Socket {
  if (config.socketPath) return connect(config.socketPath);
  const socket = connect(config.port ?? 3306, config.host ?? 'localhost');
  if (config.host && isIP(config.host)) (socket as Socket & { _host?: string })._host = config.host;
  socket.setNoDelay(true);
  if (config.enableKeepAlive) socket.on('connect', () => socket.setKeepAlive(true, config.keepAliveInitialDelay));
  return socket;
}

function askedAsOptions(options: ReadonlyMap<string, string>, problems: string[]): Asked | undefined {
  const [mode, ca, cert, key] = ['ssl-mode', 'ssl-ca', 'ssl-cert', 'ssl-key'].map((name) => options.get(name));
  if ([mode, ca, cert, key].every((value) => value === undefined)) return undefined;
  let sslMode: SslMode | undefined;
  if (mode !== undefined) {
    sslMode = SSL_MODES.find((known) => known === mode.toUpperCase());
    if (sslMode === undefined) problems.push(`DATABASE_URL ssl-mode is ${SSL_MODES.join(', ')}, not ${JSON.stringify(mode.slice(0, 40))}`);
  }
  return { mode: sslMode, ca, cert, key, pemAllowed: false };
}

function askedAsJson(options: ReadonlyMap<string, string>, problems: string[]): Asked | undefined {
  const others = ['ssl-mode', 'ssl-ca', 'ssl-cert', 'ssl-key'].filter((name) => options.has(name));
  if (others.length > 0) problems.push(`DATABASE_URL carries both ssl and ${others.join(', ')}: use one or the other`);
  const shape = `a JSON object of TLS options (${SSL_JSON_KEYS.join(', ')}), percent-encoded`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(options.get('ssl')!);
  } catch {
    parsed = undefined;
  }
  // Never the value in a message: it may hold a private key.
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    problems.push(`DATABASE_URL ssl is ${shape}`);
    return undefined;
  }
  const fields = parsed as Record<string, unknown>;
  for (const name of Object.keys(fields)) {
    if (!SSL_JSON_KEYS.includes(name))
      problems.push(`DATABASE_URL ssl has an unknown key ${JSON.stringify(name.slice(0, 40))}: it takes ${SSL_JSON_KEYS.join(', ')}`);
  }
  const text = (name: string) => {
    const value = fields[name];
    if (value === undefined || typeof value === 'string') return value;
    problems.push(`DATABASE_URL ssl ${name} is a file path or PEM text`);
    return undefined;
  };
  const flag = (name: string, fallback: boolean) => {
    const value = fields[name];
    if (value === undefined || typeof value === 'boolean') return value ?? fallback;
    problems.push(`DATABASE_URL ssl ${name} is true or false`);
    return fallback;
  };
  // mysql2's defaults: the chain is verified, the name is not.
  const verify = flag('rejectUnauthorized', true);
  const identity = flag('verifyIdentity', false);
  if (identity && !verify) problems.push('DATABASE_URL ssl verifyIdentity needs rejectUnauthorized: a name is only worth checking on a verified certificate');
  return { mode: identity ? 'VERIFY_IDENTITY' : verify ? 'VERIFY_CA' : 'REQUIRED', ca: text('ca'), cert: text('cert'), key: text('key'), pemAllowed: true };
}

/** PEM text from a file, or (where allowed) as given. */
function pem(source: string | undefined, name: string, pemAllowed: boolean, problems: string[]): string | undefined {
  if (source === undefined) return undefined;
  if (pemAllowed && source.trimStart().startsWith('-----BEGIN ')) return source;
  if (source === '') {
    problems.push(`DATABASE_URL ${name} is empty: give the path of a PEM file`);
    return undefined;
  }
  try {
    return readFileSync(source, 'utf8');
  } catch (error) {
    problems.push(`DATABASE_URL ${name} names a file that cannot be read: ${source} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    return undefined;
  }
}

/** Whether the text holds at least one certificate, and every one it holds parses. Node's TLS skips bad ones without a word. */
function certificates(text: string): boolean {
  const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  try {
    for (const block of blocks) new X509Certificate(block);
  } catch {
    return false;
  }
  return blocks.length > 0;
}
