import mysql from 'mysql2';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type ConnectionSource, Database, DatabaseFault } from '../../runtime/db/index.js';

/**
 * Statements run as each connection's prepared statements, held by the
 * runtime (runtime/db.ts `heldStatements`), against the real MariaDB: a held
 * statement must never be one mysql2 has closed, whatever number of texts a
 * connection sees, and a refused value or a failing statement reads as it did
 * through `connection.execute`.
 */

/** One connection, so that every statement meets the same one; mysql2 keeps `keep` prepared statements on it. */
function oneConnection(keep: number): { database: Database; pool: mysql.Pool } {
  const pool = mysql.createPool({ uri: inject('databaseUrl'), connectionLimit: 1, maxPreparedStatements: keep });
  const source: ConnectionSource = {
    getConnection: () => new Promise((resolve, reject) => pool.getConnection((error, connection) => (error ? reject(error) : resolve(connection)))),
    failed: () => {},
    stats: () => ({ inUse: 0, idle: 1, queued: 0 }),
    hasIdle: () => false,
    end: () => new Promise((resolve) => pool.end(() => resolve())),
  };
  return { database: new Database(source), pool };
}

let small: Database;
let usual: Database;

beforeAll(() => {
  small = oneConnection(4).database;
  usual = oneConnection(16_000).database;
});
afterAll(async () => {
  await small.end();
  await usual.end();
});

/** `count` statements of distinct texts, each asked twice in turn: every answer must be its own. */
async function rotate(database: Database, count: number): Promise<void> {
  for (let round = 0; round < 2; round++) {
    for (let i = 0; i < count; i++) {
      const rows = await database.select<{ n: number; i: number }>(`select ? + 1 as n, ${i} as i`, [i]);
      expect(rows).toEqual([{ n: i + 1, i }]);
    }
  }
}

describe('prepared statements held per connection', () => {
  it('never runs a statement mysql2 closed when its own cache is smaller than what the runtime would hold', async () => {
    // mysql2 keeps 4 and closes the oldest: a held statement past them would be "Unknown prepared statement handler".
    await rotate(small, 12);
  });

  it('still answers after more texts than it holds (256) went through one connection', async () => {
    await rotate(usual, 300);
  });

  it('refuses an undefined value as mysql2 does, and names the statement of a failing one', async () => {
    await expect(usual.select('select ? as x', [undefined])).rejects.toThrow(/Bind parameters must not contain undefined/);
    const unprepared = await usual.select('select no_such_column from dual where 1 = ?', [1]).catch((error: unknown) => error);
    expect(unprepared).not.toBeInstanceOf(DatabaseFault);
    expect(unprepared).toMatchObject({ errno: 1054, sql: 'select no_such_column from dual where 1 = ?' });
    // A held statement that fails when it runs (mysql2 names no statement then; the log of a 500 needs it).
    await usual.write('create temporary table held_keys (id int primary key)', []);
    const insert = 'insert into held_keys (id) values (?)';
    await usual.write(insert, [1]);
    const duplicate = await usual.write(insert, [1]).catch((error: unknown) => error);
    expect(duplicate).toMatchObject({ errno: 1062, sql: insert });
    // The connection is fine afterwards, and its held statements too.
    expect(await usual.select('select ? + 1 as n, 0 as i', [0])).toEqual([{ n: 1, i: 0 }]);
  });
});
