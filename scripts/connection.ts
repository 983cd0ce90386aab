import mysql from 'mysql2/promise';
import { connectionOptions } from '../runtime/db/index.js';

/**
 * One connection for a command (`xmlrest db init`, `user add`, `doctor`...),
 * from the same DATABASE_URL the servers use, TLS included: with a host
 * list, the first host that answers.
 */
export async function connectTo(url: string, options: { multipleStatements?: boolean } = {}): Promise<mysql.Connection> {
  let last: unknown;
  for (const host of connectionOptions(url)) {
    try {
      return await mysql.createConnection({ ...host, multipleStatements: options.multipleStatements ?? false, connectTimeout: 5000 });
    } catch (error) {
      last = error;
    }
  }
  throw last;
}
