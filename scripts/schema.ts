import { readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import type { Connection } from 'mysql2/promise';
import { AUDIT_TABLE, AuditLog } from '../console/audit.js';
import { type GrantOutcome, ROLE_CATALOG, ROLE_CATALOG_BACKEND, UserStore } from '../console/store.js';
import { setUserTenant } from '../console/user-tenant.js';
import { API_AUDIT_REPEATS, API_AUDIT_TABLE, API_AUDIT_TENANT } from '../runtime/audit/index.js';
import { API_KEY_TABLE } from '../runtime/auth/keys/api-key.js';
import { SECRET_TABLE } from '../runtime/auth/keys/key-checksum.js';
import { LOGIN_FAILURE_TABLE } from '../runtime/auth/limits/failure-store.js';
import { hashPassword } from '../runtime/auth/passwords/passwords.js';
import { SESSION_ROTATION_COLUMNS, SESSION_TABLES, SESSION_TOKENS_UNTIL } from '../runtime/auth/sessions/session-tables.js';
import { REVOCATION_TABLES } from '../runtime/auth/tokens/revocations.js';
import { GRANT_ENDS_COLUMN } from '../runtime/auth/users/grants.js';
import { DEFAULT_USER_TABLES } from '../runtime/auth/users/user-tables.js';
import { errnoOf, NO_TABLE } from '../runtime/db/index.js';
import { OUTBOX_ROUTINES, OUTBOX_TABLES } from '../runtime/events/index.js';
import { IDEMPOTENCY_TABLE } from '../runtime/idempotency/table.js';
import type { Queryable } from '../runtime/index.js';
import { RATE_LIMIT_TABLE } from '../runtime/limits/index.js';
import { SERVER_TABLE } from '../runtime/peers.js';
import { connectTo } from './connection.js';
import { DEFAULT_TABLE_TRIGGERS, DEFAULT_TABLES, RETIRED_TRIGGERS } from './default-tables.js';

const { users: USERS, roles: ROLES, userId: ID, userName: NAME, password: PASSWORD } = DEFAULT_USER_TABLES;

/**
 * The demo's users and roles (their passwords are `<name>-pass`, printed by `npm run demo`). bob operates
 * both consoles: shop's console role is admin (console_role in its backend.xml), staff's the default,
 * xmlrest-operator.
 */
export const DEMO_USERS: readonly { id: number; name: string; roles: readonly string[]; org?: number }[] = [
  { id: 1, name: 'alice', roles: ['customer'] },
  { id: 2, name: 'bob', roles: ['customer', 'admin', 'xmlrest-operator'] },
  { id: 3, name: 'carol', roles: ['staff'] },
  { id: 4, name: 'dave', roles: ['guest'] },
  // The crm backend's users (resources/crm): erin and frank of Acme (organisation 1), grace of Globex (2); erin
  // also runs the service (crm-operator: the report across organisations). heidi holds crm-user but belongs to no
  // organisation yet, as the other backends' users: crm refuses her (403, no_tenant).
  { id: 5, name: 'erin', roles: ['crm-user', 'crm-operator'], org: 1 },
  { id: 6, name: 'frank', roles: ['crm-user'], org: 1 },
  { id: 7, name: 'grace', roles: ['crm-user'], org: 2 },
  { id: 8, name: 'heidi', roles: ['crm-user'] },
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
      // usr.org_id is the demo's own column (scripts/demo.sql), crm's <Tenant user_column>.
      await connection.execute(`insert into ${USERS} (${ID}, ${NAME}, ${PASSWORD}, org_id) values (?, ?, ?, ?)`, [
        user.id,
        user.name,
        await hashPassword(`${user.name}-pass`),
        user.org ?? null,
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
  const [tenantColumns] = await connection.query(
    "select column_name as name from information_schema.columns where table_schema = database() and table_name = 'xmlrest_api_audit' and column_name = 'tenant'",
  );
  if ((tenantColumns as unknown[]).length === 0) await connection.query(API_AUDIT_TENANT);
  // Idempotency-Key records, claimed and completed in each request's own transaction (runtime/idempotency/).
  await connection.query(IDEMPOTENCY_TABLE);
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

/**
 * Creates a user with roles, and a tenant in the column of usr a tenant backend reads (console/user-tenant.ts), in
 * one transaction; returns the new user id.
 */
export async function addUser(
  connection: Connection,
  name: string,
  password: string,
  roles: readonly string[],
  tenant?: { column: string; tenant: string },
): Promise<number> {
  await connection.beginTransaction();
  try {
    const store = storeOn(connection);
    // Never plain text: an argon2id hash, which the server verifies (runtime/auth/passwords/passwords.ts).
    const userId = await store.addUser(name, password);
    // A new user has no credential to revoke yet: no backend to revoke on.
    if (tenant !== undefined) await setUserTenant(queryableOf(connection), tenant.column, [], userId, tenant.tenant);
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

/** The next login reads the roles without it; running servers end the user's tokens within their poll (the triggers of default-tables.ts). */
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
