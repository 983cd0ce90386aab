import { readFileSync } from 'node:fs';
import type { Connection } from 'mysql2/promise';
import { AUDIT_TABLE } from '../console/audit.js';
import { ROLE_CATALOG, ROLE_CATALOG_BACKEND, UserStore } from '../console/store.js';
import { API_AUDIT_TABLE } from '../runtime/audit/index.js';
import { API_KEY_TABLE } from '../runtime/auth/api-key.js';
import { REHASH_VARIABLE } from '../runtime/auth/credentials.js';
import { LOGIN_FAILURE_TABLE } from '../runtime/auth/limiter.js';
import { hashPassword } from '../runtime/auth/passwords.js';
import { REVOCATION_TABLES } from '../runtime/auth/revocations.js';
import { SESSION_TABLES, SESSION_TOKENS_UNTIL } from '../runtime/auth/sessions.js';
import { DEFAULT_USER_TABLES } from '../runtime/auth/user-tables.js';
import { OUTBOX_TABLES } from '../runtime/events/index.js';
import type { Queryable } from '../runtime/index.js';
import { RATE_LIMIT_TABLE } from '../runtime/limits/index.js';
import { SERVER_TABLE } from '../runtime/peers.js';
import { connectTo } from './connection.js';

const { users: USERS, roles: ROLES, userId: ID, userName: NAME, password: PASSWORD, roleName: ROLE } = DEFAULT_USER_TABLES;

/**
 * The default user and role tables (docs/seed.md §2.2, named in
 * runtime/auth/user-tables.ts). Names and passwords compare byte for byte
 * (utf8mb4_nopad_bin): a case-insensitive or PAD SPACE collation would let
 * `Secret` or `secret ` match the password `secret`.
 */
export const DEFAULT_TABLES = [
  `create table if not exists ${USERS} (
    ${ID} int unsigned not null auto_increment primary key,
    ${NAME} varchar(190) character set utf8mb4 collate utf8mb4_nopad_bin not null,
    ${PASSWORD} varchar(255) character set utf8mb4 collate utf8mb4_nopad_bin not null,
    created_on timestamp not null default current_timestamp,
    unique key ${USERS}_${NAME} (${NAME})
  ) engine = InnoDB default charset = utf8mb4`,
  `create table if not exists ${ROLES} (
    id int unsigned not null auto_increment primary key,
    ${ROLE} varchar(64) character set utf8mb4 collate utf8mb4_nopad_bin not null,
    ${ID} int unsigned not null,
    created_on timestamp not null default current_timestamp,
    unique key ${ROLES}_user_role (${ID}, ${ROLE}),
    key ${ROLES}_role (${ROLE}),
    constraint ${ROLES}_user foreign key (${ID}) references ${USERS} (${ID}) on delete cascade
  ) engine = InnoDB default charset = utf8mb4`,
];

/**
 * Whoever changes the default user tables (the console of any backend, the
 * CLI, SQL by hand), every server hears of it within its revocation poll:
 * a role that is removed or renamed, a user that is deleted, and a password
 * that changes (a reset, or a lock: the console disables a user by
 * prefixing the stored value, console/store.ts) revoke every token that user
 * holds on every backend (`*`). What a login reads needs nothing of the
 * kind: every login runs the auth query, and a remembered password is
 * remembered for its stored value only (runtime/auth/credential-cache.ts).
 * Foreign-key cascades fire no triggers, so deleting a user has a trigger of
 * its own. The server replacing a plain-text password with its hash
 * (rehash_plaintext) changes no password: it says so in a session variable
 * naming the plain value it replaces (runtime/auth/credentials.ts), which the
 * trigger takes.
 */
const REVOKED = (user: string) => `insert into xmlrest_revoked_user (backend, sub, revoked_before) values ('*', cast(${user} as char), now())
      on duplicate key update revoked_before = now();`;
const REHASHED = `${REHASH_VARIABLE} is not null and ${REHASH_VARIABLE} = sha2(old.${PASSWORD}, 256) and new.${PASSWORD} like '$argon2%'`;
export const DEFAULT_TABLE_TRIGGERS: Record<string, string> = {
  [`xmlrest_${ROLES}_update`]: `after update on ${ROLES} for each row begin
    ${REVOKED(`old.${ID}`)}
  end`,
  [`xmlrest_${ROLES}_delete`]: `after delete on ${ROLES} for each row begin
    ${REVOKED(`old.${ID}`)}
  end`,
  [`xmlrest_${USERS}_update`]: `after update on ${USERS} for each row begin
    if new.${ID} <> old.${ID} or (new.${PASSWORD} <> old.${PASSWORD} and not (${REHASHED})) then
      ${REVOKED(`old.${ID}`)}
    end if;
    set ${REHASH_VARIABLE} = null;
  end`,
  [`xmlrest_${USERS}_delete`]: `after delete on ${USERS} for each row begin
    ${REVOKED(`old.${ID}`)}
  end`,
};

/** Triggers of earlier versions, dropped by `xmlrest db init` (granting a role told servers to forget remembered logins). */
const RETIRED_TRIGGERS = [`xmlrest_${ROLES}_insert`];

/**
 * The demo's users and roles (their passwords are `<name>-pass`, printed by `npm run demo`). bob operates
 * both consoles: shop's console role is admin (console_role in its backend.xml), staff's the default,
 * xmlrest-operator.
 */
export const DEMO_USERS: readonly { id: number; name: string; roles: readonly string[] }[] = [
  { id: 1, name: 'alice', roles: ['customer'] },
  { id: 2, name: 'bob', roles: ['customer', 'admin', 'xmlrest-operator'] },
  { id: 3, name: 'carol', roles: ['staff'] },
  { id: 4, name: 'dave', roles: ['guest'] },
];

/** The default tables, then the demo backends' tables and rows (scripts/demo.sql) and users; safe to run again. */
export async function createDemoDatabase(url: string): Promise<void> {
  const connection = await connectTo(url, { multipleStatements: true });
  try {
    await createDefaultTables(connection);
    await connection.query(readFileSync(new URL('./demo.sql', import.meta.url), 'utf8'));
    for (const user of DEMO_USERS) {
      // Hashed like everyone else's (argon2id). A user already there keeps its row; a demo database made
      // before the demo hashed its passwords gets the hash in place of the plain text.
      const [found] = await connection.execute(`select ${PASSWORD} as stored from ${USERS} where ${ID} = ?`, [user.id]);
      const existing = (found as { stored: string }[])[0];
      if (existing !== undefined) {
        if (existing.stored === `${user.name}-pass`) {
          await connection.execute(`update ${USERS} set ${PASSWORD} = ? where ${ID} = ?`, [await hashPassword(existing.stored), user.id]);
        }
        // A demo database from before a demo role was added (xmlrest-operator) gets it; a held one stays as it is.
        for (const role of user.roles) await grantRole(connection, user.id, role);
        continue;
      }
      await connection.execute(`insert into ${USERS} (${ID}, ${NAME}, ${PASSWORD}) values (?, ?, ?)`, [
        user.id,
        user.name,
        await hashPassword(`${user.name}-pass`),
      ]);
      for (const role of user.roles) await grantRole(connection, user.id, role);
    }
  } finally {
    await connection.end();
  }
}

export async function createDefaultTables(connection: Connection): Promise<void> {
  // First, so that no trigger of an earlier version writes to a table that is dropped below.
  for (const name of [...RETIRED_TRIGGERS, ...Object.keys(DEFAULT_TABLE_TRIGGERS)]) await connection.query(`drop trigger if exists ${name}`);
  for (const statement of DEFAULT_TABLES) await connection.query(statement);
  // Roles created on the console, by the backend whose console created them (console/store.ts, console/scope.ts).
  await connection.query(ROLE_CATALOG);
  const [catalogColumns] = await connection.query(
    "select column_name as name from information_schema.columns where table_schema = database() and table_name = 'xmlrest_role' and column_name = 'backend'",
  );
  if ((catalogColumns as unknown[]).length === 0) await connection.query(ROLE_CATALOG_BACKEND);
  // The servers on this database, each announcing itself every few seconds (runtime/peers.ts).
  await connection.query(SERVER_TABLE);
  // What operators did on the console (console/audit.ts).
  await connection.query(AUDIT_TABLE);
  for (const statement of REVOCATION_TABLES) await connection.query(statement);
  await connection.query(LOGIN_FAILURE_TABLE);
  // Calls of rate-limited routes, leased by every server (runtime/limits/store.ts).
  await connection.query(RATE_LIMIT_TABLE);
  // API keys, stored as their SHA-256 (runtime/auth/api-key.ts).
  await connection.query(API_KEY_TABLE);
  // Sessions and the refresh tokens they used up (runtime/auth/sessions.ts).
  for (const statement of SESSION_TABLES) await connection.query(statement);
  const [sessionColumns] = await connection.query(
    "select column_name as name from information_schema.columns where table_schema = database() and table_name = 'xmlrest_session' and column_name = 'tokens_until'",
  );
  if ((sessionColumns as unknown[]).length === 0) await connection.query(SESSION_TOKENS_UNTIL);
  // Events and webhooks (runtime/events/outbox.ts), and who called what through audited routes (runtime/audit/).
  for (const statement of OUTBOX_TABLES) await connection.query(statement);
  await connection.query(API_AUDIT_TABLE);
  // Replaced on every run (dropped above), so that `xmlrest db init` upgrades them (MySQL has no CREATE OR REPLACE TRIGGER).
  for (const [name, body] of Object.entries(DEFAULT_TABLE_TRIGGERS)) await connection.query(`create trigger ${name} ${body}`);
}

/** A mysql2 connection as the runtime's statements: what the console's stores run on. */
export function queryableOf(connection: Connection): Queryable {
  return {
    select: async <Row>(sql: string, values: readonly unknown[]) => (await connection.execute(sql, values as never[]))[0] as Row[],
    write: async (sql: string, values: readonly unknown[]) => {
      const [header] = await connection.execute(sql, values as never[]);
      const { affectedRows, insertId } = header as { affectedRows: number; insertId: number };
      return { affectedRows, insertId: insertId === 0 ? null : insertId };
    },
  };
}

/** The default user tables through a mysql2 connection: the same store the console uses. */
function storeOn(connection: Connection): UserStore {
  return new UserStore(queryableOf(connection));
}

/** Creates a user with roles, in one transaction; returns the new user id. */
export async function addUser(connection: Connection, name: string, password: string, roles: readonly string[]): Promise<number> {
  await connection.beginTransaction();
  try {
    const store = storeOn(connection);
    // Never plain text: an argon2id hash, which the server verifies (runtime/auth/passwords.ts).
    const userId = await store.addUser(name, password);
    for (const role of roles) await store.grant(userId, role);
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
  const [result] = await connection.execute(`insert into ${USERS} (${NAME}, ${PASSWORD}) values (?, ?)`, [name, password]);
  const userId = (result as { insertId: number }).insertId;
  for (const role of roles) await grantRole(connection, userId, role);
  return userId;
}

/** Granting a role the user holds already changes nothing (the unique key keeps one row). */
export function grantRole(connection: Connection, userId: number, role: string): Promise<void> {
  return storeOn(connection).grant(userId, role);
}

/** The next login reads the roles without it; running servers end the user's tokens within their poll (the triggers above). */
export async function revokeRole(connection: Connection, userId: number, role: string): Promise<number> {
  return (await storeOn(connection).revoke(userId, role)) ? 1 : 0;
}

export async function rolesOf(connection: Connection, userId: number): Promise<string[]> {
  return (await storeOn(connection).user(userId))?.roles ?? [];
}

export function userIdOf(connection: Connection, name: string): Promise<number | undefined> {
  return storeOn(connection).idOf(name);
}
