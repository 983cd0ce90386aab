import type mysql from 'mysql2';

/** One host of DATABASE_URL. */
export interface DatabaseHost {
  host: string;
  port: number;
}

/** The URL's parts; the password never appears in an error. */
export function parseDatabaseUrl(url: string): { hosts: DatabaseHost[]; config: mysql.PoolOptions } {
  const match = /^(mysql|mariadb):\/\/(?:([^@/]*)@)?([^/?#]*)(\/[^?#]*)?(\?[^#]*)?$/.exec(url);
  if (!match) {
    if (!/^(mysql|mariadb):\/\//.test(url)) throw new Error('DATABASE_URL must start with mysql://');
    // Node's own error would print the input, password included.
    throw new Error('DATABASE_URL is not a valid URL: percent-encode special characters in the user and password');
  }
  const [, , credentials = '', hostList = '', pathname = '', search = ''] = match;
  const [user = '', password = ''] = credentials.split(/:(.*)/s);
  const hosts = (hostList || 'localhost').split(',').map((entry): DatabaseHost => {
    const parsed = /^(\[[^\]]+\]|[^:]+)(?::([0-9]{1,5}))?$/.exec(entry.trim());
    if (!parsed) throw new Error('DATABASE_URL lists a host that is not host or host:port');
    return { host: parsed[1]!.replace(/^\[|\]$/g, ''), port: parsed[2] ? Number(parsed[2]) : 3306 };
  });
  const extra = Object.fromEntries(new URLSearchParams(search));
  let decoded: { user: string; password: string; database: string };
  try {
    decoded = { user: decodeURIComponent(user), password: decodeURIComponent(password), database: decodeURIComponent(pathname.replace(/^\//, '')) };
  } catch {
    throw new Error('DATABASE_URL is not a valid URL: percent-encode special characters in the user and password');
  }
  return {
    hosts,
    config: {
      user: decoded.user,
      password: decoded.password,
      database: decoded.database || undefined,
      socketPath: extra.socketPath,
      connectionLimit: extra.connectionLimit ? Number(extra.connectionLimit) : 10,
    },
  };
}
