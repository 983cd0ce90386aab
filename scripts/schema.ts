import { readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import type { Connection } from 'mysql2/promise';
import { AUDIT_TABLE, AuditLog } from '../console/audit.js';
import { type GrantOutcome, ROLE_CATALOG, ROLE_CATALOG_BACKEND, UserStore } from '../console/store.js';
import { API_AUDIT_REPEATS, API_AUDIT_TABLE } from '../runtime/audit/index.js';
import { API_KEY_TABLE } from '../runtime/auth/keys/api-key.js';
import { SECRET_TABLE } from '../runtime/auth/keys/key-checksum.js';
import { LOGIN_FAILURE_TABLE } from '../runtime/auth/limits/failure-store.js';
import { REHASH_VARIABLE } from '../runtime/auth/passwords/credentials.js';
import { hashPassword } from '../runtime/auth/passwords/passwords.js';
import { SESSION_ROTATION_COLUMNS, SESSION_TABLES, SESSION_TOKENS_UNTIL } from '../runtime/auth/sessions/session-tables.js';
import { REVOCATION_TABLES } from '../runtime/auth/tokens/revocations.js';
import { GRANT_ENDS_COLUMN } from '../runtime/auth/users/grants.js';
import { DEFAULT_USER_TABLES } from '../runtime/auth/users/user-tables.js';
import { errnoOf, NO_TABLE } from '../runtime/db/index.js';
import { OUTBOX_ROUTINES, OUTBOX_TABLES } from '../runtime/events/index.js';
import type { Queryable } from '../runtime/index.js';
import { RATE_LIMIT_TABLE } from '../runtime/limits/index.js';
import { SERVER_TABLE } from '../runtime/peers.js';
import { connectTo } from './connection.js';

const { users: USERS, roles: ROLES, userId: ID, userName: NAME, password: PASSWORD, roleName: ROLE } = DEFAULT_USER_TABLES;

/**
 * The default user and role tables (docs/seed.md §2.2, named in
 * runtime/auth/users/user-tables.ts). Names and passwords compare byte for byte
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
    expires_on timestamp null default null,
    unique key ${ROLES}_user_role (${ID}, ${ROLE}),
    key ${ROLES}_role (${ROLE}),
    key ${ROLES}_expires (expires_on),
    constraint ${ROLES}_user foreign key (${ID}) references ${USERS} (${ID}) on delete cascade
  ) engine = InnoDB default charset = utf8mb4`,
];

/**
 * Whoever changes the default user tables (the console of any backend, the
 * CLI, SQL by hand), every server hears of it within its revocation poll:
 * a role that is removed or renamed, a user that is deleted, and a password
 * that changes (a reset, or a lock: the console disables a user by
 * prefixing the stored value, console/store.ts) revoke every token that user
 * holds on every backend (`*`); a deleted user's API keys are revoked. What a login reads needs nothing of the
 * kind: every login runs the auth query, and a remembered password is
 * remembered for its stored value only (runtime/auth/passwords/credential-cache.ts).
 * Foreign-key cascades fire no triggers, so deleting a user has a trigger of
 * its own. The server replacing a plain-text password with its hash
 * (rehash_plaintext) changes no password: it says so in a session variable
 * naming the plain value it replaces (runtime/auth/passwords/credentials.ts), which the
 * trigger takes. A grant that ends (`expires_on`, runtime/auth/users/grants.ts) is
 * deleted when it ends, so its end is a revoke too, recorded in the console's
 * history (`*`: every console of the default tables shows it); a change of a
 * grant that only keeps or extends its end revokes nothing, one that brings
 * the end nearer (or makes a grant temporary) revokes as removing it would,
 * since tokens issued before it may outlive the new end.
 */
const REVOKED = (user: string) => `insert into xmlrest_revoked_user (backend, sub, revoked_before) values ('*', cast(${user} as char), now())
      on duplicate key update revoked_before = now();`;
/**
 * A user's API keys end with the user (its row deleted, or its id changed), whoever does it: revoked, not
 * refused for as long as no user holds the id, so that none comes back to life when the id is used again.
 */
const KEYS_REVOKED = (user: string) => `update xmlrest_api_key set revoked_on = now() where user_id = cast(${user} as char) and revoked_on is null;`;
/** The history line of a grant's end: the end in UTC whatever the session's zone, by the user's name. */
const GRANT_ENDED = `insert into xmlrest_console_audit (backend, actor, action, target, detail, address) values ('*', 'xmlrest', 'grant ended',
        coalesce((select u.${NAME} from ${USERS} u where u.${ID} = old.${ID}), cast(old.${ID} as char)),
        concat(old.${ROLE}, ' until ', date_format(utc_timestamp() - interval (unix_timestamp() - unix_timestamp(old.expires_on)) second, '%Y-%m-%dT%H:%i:%sZ')), '');`;
const REHASHED = `${REHASH_VARIABLE} is not null and ${REHASH_VARIABLE} = sha2(old.${PASSWORD}, 256) and new.${PASSWORD} like '$argon2%'`;
export const DEFAULT_TABLE_TRIGGERS: Record<string, string> = {
  [`xmlrest_${ROLES}_update`]: `after update on ${ROLES} for each row begin
    if new.${ID} <> old.${ID} or new.${ROLE} <> old.${ROLE} or (new.expires_on is not null and (old.expires_on is null or new.expires_on < old.expires_on)) then
      ${REVOKED(`old.${ID}`)}
    end if;
  end`,
  [`xmlrest_${ROLES}_delete`]: `after delete on ${ROLES} for each row begin
    ${REVOKED(`old.${ID}`)}
    if old.expires_on is not null and old.expires_on <= now() then
      ${GRANT_ENDED}
    end if;
  end`,
  [`xmlrest_${USERS}_update`]: `after update on ${USERS} for each row begin
    if new.${ID} <> old.${ID} or (new.${PASSWORD} <> old.${PASSWORD} and not (${REHASHED})) then
      ${REVOKED(`old.${ID}`)}
    end if;
    if new.${ID} <> old.${ID} then
      ${KEYS_REVOKED(`old.${ID}`)}
    end if;
    set ${REHASH_VARIABLE} = null;
  end`,
  [`xmlrest_${USERS}_delete`]: `after delete on ${USERS} for each row begin
    ${REVOKED(`old.${ID}`)}
    ${KEYS_REVOKED(`old.${ID}`)}
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
        // A demo database from before a demo role was added (xmlrest-operator) gets it; a held one stays as it is
        // (a grant given an end since keeps its end).
        const held = await rolesOf(connection, user.id);
        for (const role of user.roles) if (!held.includes(role)) await grantRole(connection, user.id, role);
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
  // API keys, stored as their SHA-256 (runtime/auth/keys/api-key.ts), and the secret their tags are made with.
  await connection.query(API_KEY_TABLE);
  await connection.query(SECRET_TABLE);
  // Sessions and the refresh tokens they used up (runtime/auth/sessions/sessions.ts).
  for (const statement of SESSION_TABLES) await connection.query(statement);
  const [sessionColumns] = await connection.query(
    "select column_name as name from information_schema.columns where table_schema = database() and table_name = 'xmlrest_session' and column_name = 'tokens_until'",
  );
  if ((sessionColumns as unknown[]).length === 0) await connection.query(SESSION_TOKENS_UNTIL);
  const [rotationColumns] = await connection.query(
    "select column_name as name from information_schema.columns where table_schema = database() and table_name = 'xmlrest_session' and column_name = 'previous_hash'",
  );
  if ((rotationColumns as unknown[]).length === 0) await connection.query(SESSION_ROTATION_COLUMNS);
  // Grants that end (runtime/auth/users/grants.ts): a role table made before them gets the column.
  const [roleColumns] = await connection.query(
    `select column_name as name from information_schema.columns where table_schema = database() and table_name = '${ROLES}' and column_name = 'expires_on'`,
  );
  if ((roleColumns as unknown[]).length === 0) await connection.query(GRANT_ENDS_COLUMN);
  // Events and webhooks (runtime/events/outbox-schema.ts), and who called what through audited routes (runtime/audit/).
  for (const statement of OUTBOX_TABLES) await connection.query(statement);
  // Replaced on every run (MySQL has no CREATE OR REPLACE PROCEDURE): an event's row and its request's COMMIT in one call.
  for (const statement of OUTBOX_ROUTINES) await connection.query(statement);
  await connection.query(API_AUDIT_TABLE);
  const [auditColumns] = await connection.query(
    "select column_name as name from information_schema.columns where table_schema = database() and table_name = 'xmlrest_api_audit' and column_name = 'repeats'",
  );
  if ((auditColumns as unknown[]).length === 0) await connection.query(API_AUDIT_REPEATS);
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
    // Never plain text: an argon2id hash, which the server verifies (runtime/auth/passwords/passwords.ts).
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

/**
 * Grants a role, for good or until `until` (Unix seconds: runtime/auth/users/grants.ts). Granting a role the user holds
 * sets its end to the one given; granting it as it is changes nothing (the unique key keeps one row).
 */
export function grantRole(connection: Connection, userId: number, role: string, until: number | null = null): Promise<GrantOutcome> {
  return storeOn(connection).grant(userId, role, until);
}

/** The next login reads the roles without it; running servers end the user's tokens within their poll (the triggers above). */
export async function revokeRole(connection: Connection, userId: number, role: string): Promise<number> {
  return (await storeOn(connection).revoke(userId, role)) ? 1 : 0;
}

export async function rolesOf(connection: Connection, userId: number): Promise<string[]> {
  return (await storeOn(connection).user(userId))?.roles ?? [];
}

/** The roles a user holds now, with the end of each grant that ends (ISO). */
export async function grantsOf(connection: Connection, userId: number): Promise<{ roles: string[]; ends: Record<string, string> }> {
  const user = await storeOn(connection).user(userId);
  return { roles: user?.roles ?? [], ends: user?.ends ?? {} };
}

export function userIdOf(connection: Connection, name: string): Promise<number | undefined> {
  return storeOn(connection).idOf(name);
}

/**
 * A change made from the command line, in the console's history: under `*`, which every console of the default
 * tables shows (the command names no backend), by the account that ran it. A database whose history table is
 * missing (`xmlrest db init` made none) keeps the change and says so.
 */
export async function recordFromCli(connection: Connection, action: string, target: string, detail: string): Promise<void> {
  let account = 'unknown';
  try {
    account = userInfo().username;
  } catch {
    // No account name to be had (a container's uid without a passwd entry).
  }
  try {
    await new AuditLog(queryableOf(connection)).record({
      backend: '*',
      actor: `xmlrest command (${account})`,
      action,
      target,
      detail,
      address: 'command line',
    });
  } catch (error) {
    if (errnoOf(error) !== NO_TABLE) throw error;
    process.stderr.write('xmlrest: not recorded in the history: the table xmlrest_console_audit is missing (run npx xmlrest db init)\n');
  }
}
