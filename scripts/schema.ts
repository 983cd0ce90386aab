import { readFileSync } from 'node:fs';
import mysql, { type Connection } from 'mysql2/promise';
import { ROLE_CATALOG } from '../console/store.js';
import { LOGIN_FAILURE_TABLE } from '../runtime/auth/limiter.js';
import { hashPassword } from '../runtime/passwords.js';
import { REVOCATION_TABLES } from '../runtime/revocations.js';

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

/**
 * Whoever changes the default user tables (the console of any backend, the
 * CLI, SQL by hand), every server hears of it within its revocation poll:
 * a role that is removed or renamed, or a user that is deleted, revokes
 * every token that user holds on every backend (`*`), and any change of a
 * user's roles or password makes every server forget its remembered logins
 * of that user. Foreign-key cascades fire no triggers, so deleting a user
 * has a trigger of its own.
 */
const CHANGED = (user: string) => `insert into xmlrest_user_change (user_id) values (cast(${user} as char));
    delete from xmlrest_user_change where changed_on < now() - interval 1 day;`;
const REVOKED = (user: string) => `insert into xmlrest_revoked_user (backend, sub, revoked_before) values ('*', cast(${user} as char), now())
      on duplicate key update revoked_before = now();`;
export const DEFAULT_TABLE_TRIGGERS: Record<string, string> = {
  xmlrest_usr_role_insert: `after insert on usr_role for each row begin
    ${CHANGED('new.user_id')}
  end`,
  xmlrest_usr_role_update: `after update on usr_role for each row begin
    ${REVOKED('old.user_id')}
    ${CHANGED('old.user_id')}
    if new.user_id <> old.user_id then
      ${CHANGED('new.user_id')}
    end if;
  end`,
  xmlrest_usr_role_delete: `after delete on usr_role for each row begin
    ${REVOKED('old.user_id')}
    ${CHANGED('old.user_id')}
  end`,
  xmlrest_usr_update: `after update on usr for each row begin
    if new.pass_word <> old.pass_word or new.user_name <> old.user_name or new.user_id <> old.user_id then
      ${CHANGED('old.user_id')}
    end if;
  end`,
  xmlrest_usr_delete: `after delete on usr for each row begin
    ${REVOKED('old.user_id')}
    ${CHANGED('old.user_id')}
  end`,
};

/** The demo's users and roles (their passwords are `<name>-pass`, printed by `npm run demo`). */
export const DEMO_USERS: readonly { id: number; name: string; roles: readonly string[] }[] = [
  { id: 1, name: 'alice', roles: ['customer'] },
  { id: 2, name: 'bob', roles: ['customer', 'admin'] },
  { id: 3, name: 'carol', roles: ['staff'] },
  { id: 4, name: 'dave', roles: ['guest'] },
];

/** The default tables, then the demo backends' tables and rows (scripts/demo.sql) and users; safe to run again. */
export async function createDemoDatabase(url: string): Promise<void> {
  const connection = await mysql.createConnection({ uri: url, multipleStatements: true });
  try {
    await createDefaultTables(connection);
    await connection.query(readFileSync(new URL('./demo.sql', import.meta.url), 'utf8'));
    for (const user of DEMO_USERS) {
      // Hashed like everyone else's (argon2id). A user already there keeps its row; a demo database made
      // before the demo hashed its passwords gets the hash in place of the plain text.
      const [found] = await connection.execute('select pass_word from usr where user_id = ?', [user.id]);
      const existing = (found as { pass_word: string }[])[0];
      if (existing !== undefined) {
        if (existing.pass_word === `${user.name}-pass`) {
          await connection.execute('update usr set pass_word = ? where user_id = ?', [await hashPassword(existing.pass_word), user.id]);
        }
        continue;
      }
      await connection.execute('insert into usr (user_id, user_name, pass_word) values (?, ?, ?)', [user.id, user.name, await hashPassword(`${user.name}-pass`)]);
      for (const role of user.roles) await grantRole(connection, user.id, role);
    }
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
  for (const [name, body] of Object.entries(DEFAULT_TABLE_TRIGGERS)) {
    // Replaced on every run, so that `xmlrest db init` upgrades them (MySQL has no CREATE OR REPLACE TRIGGER).
    await connection.query(`drop trigger if exists ${name}`);
    await connection.query(`create trigger ${name} ${body}`);
  }
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
}

/** Running servers end the user's tokens and remembered logins within their poll (the triggers above). */
export async function revokeRole(connection: Connection, userId: number, role: string): Promise<number> {
  const [result] = await connection.execute('delete from usr_role where user_id = ? and role_name = ?', [userId, role]);
  return (result as { affectedRows: number }).affectedRows;
}

export async function userIdOf(connection: Connection, name: string): Promise<number | undefined> {
  const [rows] = await connection.execute('select user_id from usr where user_name = ?', [name]);
  return (rows as { user_id: number }[])[0]?.user_id;
}
