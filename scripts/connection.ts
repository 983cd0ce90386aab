import mysql from 'mysql2/promise';
import { parseDatabaseUrl } from '../runtime/db/index.js';

/**
 * One connection for a command (`xmlrest db init`, `user add`, ...), from
 * the same DATABASE_URL the servers use: with a host list, the first host
 * that answers.
 */
export async function connectTo(url: string, options: { multipleStatements?: boolean } = {}): Promise<mysql.Connection> {
  const { hosts, config } = parseDatabaseUrl(url);
  let last: unknown;
  for (const host of hosts) {
    try {
      return await mysql.createConnection({
        host: host.host,
        port: host.port,
        user: config.user,
        password: config.password,
        database: config.database,
        socketPath: config.socketPath,
        multipleStatements: options.multipleStatements ?? false,
        connectTimeout: 5000,
      });
    } catch (error) {
      last = error;
    }
  }
  throw last;
}
