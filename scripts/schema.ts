import { readFileSync } from 'node:fs';
import mysql, { type Connection } from 'mysql2/promise';
import { ROLE_CATALOG } from '../console/store.js';
import { LOGIN_FAILURE_TABLE } from '../runtime/limiter.js';
import { hashPassword } from '../runtime/passwords.js';
import { recordCredentialChange, REVOCATION_TABLES, revokeUserTokens } from '../runtime/revocations.js';

/**
 * The default user and role tables (seed §2.2). Names and passwords compare
 * byte for byte (utf8mb4_nopad_bin): a case-insensitive or PAD SPACE collation
 * would let `Secret` or `secret ` match the password `secret`.
 */
export const DEFAULT_TABLES = [
  `create table if not exists usr (
    user_id int unsigned not null auto_increment primary key,
    user_name varchar(190) character set utf8mb4 collate utf8mb4_nopad_bin not null,
    pass_word varchar(255) character set utf8mb4 collate utf8mb4_nopad_bin not null,
    created_on timestamp not null default current_timestamp,
    unique key usr_user_name (user_name)
  ) engine = InnoDB default charset = utf8mb4`,
  `create table if not exists usr_role (
    id int unsigned not null auto_increment primary key,
    role_name varchar(64) character set utf8mb4 collate utf8mb4_nopad_bin not null,
    user_id int unsigned not null,
    created_on timestamp not null default current_timestamp,
    unique key usr_role_user_role (user_id, role_name),
    key usr_role_role (role_name),
    constraint usr_role_user foreign key (user_id) references usr (user_id) on delete cascade
  ) engine = InnoDB default charset = utf8mb4`,
];

/** The default tables, then the demo backends' tables and rows (scripts/demo.sql); safe to run again. */
export async function createDemoDatabase(url: string): Promise<void> {
  const connection = await mysql.createConnection({ uri: url, multipleStatements: true });
  try {
    await createDefaultTables(connection);
    await connection.query(readFileSync(new URL('./demo.sql', import.meta.url), 'utf8'));
  } finally {
    await connection.end();
  }
}

export async function createDefaultTables(connection: Connection): Promise<void> {
  for (const statement of DEFAULT_TABLES) await connection.query(statement);
  // Roles created on the console before anyone holds them (console/store.ts).
  await connection.query(ROLE_CATALOG);
  for (const statement of REVOCATION_TABLES) await connection.query(statement);
  await connection.query(LOGIN_FAILURE_TABLE);
}

/** Creates a user with roles; returns the new user id. */
export async function addUser(connection: Connection, name: string, password: string, roles: readonly string[]): Promise<number> {
  await connection.beginTransaction();
  try {
    // Never plain text: an argon2id hash, which the server verifies (runtime/passwords.ts).
    const [result] = await connection.execute('insert into usr (user_name, pass_word) values (?, ?)', [name, await hashPassword(password)]);
    const userId = (result as { insertId: number }).insertId;
    for (const role of roles) await grantRole(connection, userId, role);
    await connection.commit();
    return userId;
  } catch (error) {
    await connection.rollback();
    throw error;
  }
}

/**
 * A user row as systems before xmlrest left them: the password in plain
 * text. For tests of the legacy path and of queries that compare $pass in
 * SQL; xmlrest itself never writes one.
 */
export async function addPlainTextUser(connection: Connection, name: string, password: string, roles: readonly string[]): Promise<number> {
  const [result] = await connection.execute('insert into usr (user_name, pass_word) values (?, ?)', [name, password]);
  const userId = (result as { insertId: number }).insertId;
  for (const role of roles) await grantRole(connection, userId, role);
  return userId;
}

/** Granting a role the user holds already changes nothing (the unique key keeps one row). */
export async function grantRole(connection: Connection, userId: number, role: string): Promise<void> {
  await connection.execute('insert ignore into usr_role (role_name, user_id) values (?, ?)', [role, userId]);
  await noteChange(connection, userId);
}

export async function revokeRole(connection: Connection, userId: number, role: string): Promise<number> {
  const [result] = await connection.execute('delete from usr_role where user_id = ? and role_name = ?', [userId, role]);
  await noteChange(connection, userId);
  // Tokens carry the role in aud until they expire: revoke the user's tokens on every backend.
  try {
    await revokeUserTokens({ write: (sql, values) => connection.execute(sql, values as never[]) }, '*', String(userId));
  } catch (error) {
    if ((error as { errno?: number }).errno !== 1146) throw error;
  }
  return (result as { affectedRows: number }).affectedRows;
}

/** Running servers forget remembered logins of a user whose roles changed (runtime/revocations.ts). */
async function noteChange(connection: Connection, userId: number): Promise<void> {
  const [rows] = await connection.execute('select user_name from usr where user_id = ?', [userId]);
  const name = (rows as { user_name: string }[])[0]?.user_name;
  if (name === undefined) return;
  try {
    await recordCredentialChange({ write: (sql, values) => connection.execute(sql, values as never[]) }, name);
  } catch (error) {
    // A database set up before this table existed: servers see the change when their cache expires.
    if ((error as { errno?: number }).errno !== 1146) throw error;
  }
}

export async function userIdOf(connection: Connection, name: string): Promise<number | undefined> {
  const [rows] = await connection.execute('select user_id from usr where user_name = ?', [name]);
  return (rows as { user_id: number }[])[0]?.user_id;
}
