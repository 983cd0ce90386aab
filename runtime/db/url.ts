import type mysql from 'mysql2';
import { type SslMode, tlsOf } from './tls.js';

/** One host of DATABASE_URL. */
export interface DatabaseHost {
  host: string;
  port: number;
}

/** What DATABASE_URL says: its hosts, the pool's options, and how the link is protected. */
export interface DatabaseUrl {
  hosts: DatabaseHost[];
  config: mysql.PoolOptions;
  /** `DISABLED` (plain text) unless the URL asks for TLS. */
  sslMode: SslMode;
}

/** Every problem of a DATABASE_URL, each a sentence naming what to fix; never the password or a key. */
export class DatabaseUrlError extends Error {
  constructor(
    readonly problems: readonly string[],
    /** Whether the URL's shape is wrong (then the form is worth showing), rather than one of its options. */
    readonly shape: boolean,
  ) {
    super(problems.join('; '));
    this.name = 'DatabaseUrlError';
  }
}

/** The query options DATABASE_URL may carry, by their names; MySQL's clients' underscore spellings are accepted too. */
const OPTIONS = ['connectionLimit', 'socketPath', 'ssl-mode', 'ssl-ca', 'ssl-cert', 'ssl-key', 'ssl'];
const UNDERSCORED: Record<string, string> = { ssl_mode: 'ssl-mode', ssl_ca: 'ssl-ca', ssl_cert: 'ssl-cert', ssl_key: 'ssl-key' };

/** The URL's parts; the password never appears in an error. */
export function parseDatabaseUrl(url: string): DatabaseUrl {
  const match = /^(mysql|mariadb):\/\/(?:([^@/]*)@)?([^/?#]*)(\/[^?#]*)?(\?[^#]*)?$/.exec(url);
  const malformed = 'DATABASE_URL is not a valid URL: percent-encode special characters in the user and password';
  if (!match) {
    if (!/^(mysql|mariadb):\/\//.test(url)) throw new DatabaseUrlError(['DATABASE_URL must start with mysql://'], true);
    // Node's own error would print the input, password included.
    throw new DatabaseUrlError([malformed], true);
  }
  const [, , credentials = '', hostList = '', pathname = '', search = ''] = match;
  const [user = '', password = ''] = credentials.split(/:(.*)/s);
  const hosts = (hostList || 'localhost').split(',').map((entry): DatabaseHost => {
    const parsed = /^(\[[^\]]+\]|[^:]+)(?::([0-9]{1,5}))?$/.exec(entry.trim());
    if (!parsed) throw new DatabaseUrlError(['DATABASE_URL lists a host that is not host or host:port'], true);
    return { host: parsed[1]!.replace(/^\[|\]$/g, ''), port: parsed[2] ? Number(parsed[2]) : 3306 };
  });
  let decoded: { user: string; password: string; database: string };
  try {
    decoded = { user: decodeURIComponent(user), password: decodeURIComponent(password), database: decodeURIComponent(pathname.replace(/^\//, '')) };
  } catch {
    throw new DatabaseUrlError([malformed], true);
  }
  const problems: string[] = [];
  const options = queryOptions(search, problems);
  const limit = options.get('connectionLimit');
  if (limit !== undefined && !/^[1-9][0-9]{0,4}$/.test(limit)) {
    problems.push(`DATABASE_URL connectionLimit is a whole number from 1, not ${JSON.stringify(limit.slice(0, 40))}`);
  }
  const tls = tlsOf(options, problems);
  if (problems.length > 0) throw new DatabaseUrlError(problems, false);
  return {
    hosts,
    config: {
      user: decoded.user,
      password: decoded.password,
      database: decoded.database || undefined,
      socketPath: options.get('socketPath'),
      connectionLimit: limit ? Number(limit) : 10,
      ...(tls.ssl ? { ssl: tls.ssl } : {}),
      ...(tls.stream ? { stream: tls.stream } : {}),
    },
    sslMode: tls.mode,
  };
}

/**
 * What one connection outside the pool needs (a command, the generator's
 * describer), one entry per host in the URL's order: the same user,
 * database and TLS as the server's pool.
 */
export function connectionOptions(url: string): mysql.ConnectionOptions[] {
  const { hosts, config } = parseDatabaseUrl(url);
  return hosts.map((host) => ({
    ...host,
    user: config.user,
    password: config.password,
    database: config.database,
    socketPath: config.socketPath,
    ...(config.ssl ? { ssl: config.ssl, stream: config.stream } : {}),
  }));
}

/**
 * The query string, option by option. Values are decoded as URI components
 * (a `+` stays a `+`, as PEM text needs); an option the URL may not carry,
 * or one given twice, is a problem: nothing is dropped without a word.
 */
function queryOptions(search: string, problems: string[]): Map<string, string> {
  const options = new Map<string, string>();
  for (const pair of search.replace(/^\?/, '').split('&')) {
    if (pair === '') continue;
    const equals = pair.indexOf('=');
    let name: string;
    let value: string;
    try {
      name = decodeURIComponent(equals < 0 ? pair : pair.slice(0, equals));
      value = decodeURIComponent(equals < 0 ? '' : pair.slice(equals + 1));
    } catch {
      problems.push('DATABASE_URL has a query option that is not percent-encoded properly');
      continue;
    }
    const known = UNDERSCORED[name] ?? name;
    if (!OPTIONS.includes(known)) {
      problems.push(`DATABASE_URL carries an unknown option ${JSON.stringify(name.slice(0, 40))}: it takes ${OPTIONS.join(', ')}`);
    } else if (options.has(known)) {
      problems.push(`DATABASE_URL gives ${known} twice`);
    } else {
      options.set(known, value);
    }
  }
  return options;
}
