import type { Queryable } from '../contract.js';
import { HttpError } from '../errors.js';

/**
 * The second line of a tenant backend (docs/internals/contract.md §14, `<Tenant … triggers="on"/>`): the database
 * itself refuses a write whose row names another tenant than the one the writing transaction set in
 * `@xmlrest_tenant`. The proof at generate keeps xmlrest's own statements to the caller's tenant; these triggers
 * catch what the proof never sees (a statement run by hand or by another program on a connection that set the
 * variable, a bug of a later version). A connection that never set it (a migration, an operator's client, the
 * console) writes as before: the variable is NULL there, and NULL refuses nothing.
 *
 * `xmlrest db init` makes them (scripts/schema.ts `createTenantTriggers`); the scope sets the variable at the start
 * of each of a tenant backend's transactions and sets it back to NULL at their end (`withTenant`), so that a
 * pooled connection never carries one request's tenant into the next one's work.
 */

/** The message the triggers signal, and how the server tells their refusal from any other SIGNAL. */
export const TENANT_REFUSAL = 'xmlrest_tenant: the row belongs to another tenant';

/** MariaDB's and MySQL's number for an error raised by SIGNAL (ER_SIGNAL_EXCEPTION). */
const SIGNAL_ERRNO = 1644;

/** The triggers' names have room for this much of a table's name (a trigger's name has at most 64 characters). */
const MAX_TABLE_IN_NAME = 64 - 'xmlrest_tenant__ins'.length;

/** An unquoted MariaDB identifier, as the backend's tenant column and the tables information_schema lists are checked. */
const PLAIN_NAME = /^[A-Za-z_][A-Za-z0-9_$]*$/;

/** A name for a trigger's DDL, in backticks (a backtick inside doubled). */
function quoted(name: string): string {
  const tick = '`';
  return tick + name.replaceAll(tick, tick + tick) + tick;
}

/** The triggers' names on a table: `xmlrest_tenant_<table>_ins`, `_upd` and `_del`; undefined when the table's name is too long for them. */
export function triggerNames(table: string): { insert: string; update: string; delete: string } | undefined {
  if (table.length > MAX_TABLE_IN_NAME) return undefined;
  return { insert: `xmlrest_tenant_${table}_ins`, update: `xmlrest_tenant_${table}_upd`, delete: `xmlrest_tenant_${table}_del` };
}

/**
 * The statements that make a tenant table's three triggers, each dropped first (MySQL has no CREATE OR REPLACE
 * TRIGGER), so that running `db init` again replaces them. An UPDATE is refused when the row it changes, or the
 * row it leaves, names another tenant: a row can neither be taken from another tenant nor handed to one; a DELETE
 * when the row deleted does (a cascade of a foreign key fires no trigger: the proof at generate refuses those).
 * A NULL tenant column is another tenant's row too: `not (x <=> t)`, where `x <> t` would let NULL through.
 */
export function tenantTriggerStatements(table: string, column: string): string[] {
  if (!PLAIN_NAME.test(column)) throw new Error(`the tenant column is not a plain name: ${column}`);
  const names = triggerNames(table);
  if (names === undefined) throw new Error(`the table's name is too long for its tenant triggers' names: ${table}`);
  const t = quoted(table);
  const c = quoted(column);
  const refuse = `signal sqlstate '45000' set message_text = '${TENANT_REFUSAL}'`;
  const crosses = (row: 'new' | 'old') => `not (${row}.${c} <=> @xmlrest_tenant)`;
  return [
    `drop trigger if exists ${quoted(names.insert)}`,
    `create trigger ${quoted(names.insert)} before insert on ${t} for each row
      if @xmlrest_tenant is not null and ${crosses('new')} then ${refuse}; end if`,
    `drop trigger if exists ${quoted(names.update)}`,
    `create trigger ${quoted(names.update)} before update on ${t} for each row
      if @xmlrest_tenant is not null and (${crosses('new')} or ${crosses('old')}) then ${refuse}; end if`,
    `drop trigger if exists ${quoted(names.delete)}`,
    `create trigger ${quoted(names.delete)} before delete on ${t} for each row
      if @xmlrest_tenant is not null and ${crosses('old')} then ${refuse}; end if`,
  ];
}

/**
 * The tenant tables of the connection's database: base tables with the column, found as the generator finds them
 * (docs/internals/contract.md §14: "found, not listed"), xmlrest's own tables (`xmlrest_…`) left out: the server
 * writes them for every tenant.
 */
export const TENANT_TABLES_SQL = `select c.table_name as name from information_schema.columns c
  inner join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
  where c.table_schema = database() and c.column_name = ? and t.table_type = 'BASE TABLE' and c.table_name not like 'xmlrest\\_%'
  order by c.table_name`;

/**
 * Runs a tenant backend's transaction with `@xmlrest_tenant` set to the caller's tenant before its first write (a
 * transaction that only reads pays nothing), and NULL again after its work, also when the work failed, before the
 * COMMIT or the ROLLBACK. The reset costs a round trip, but keeps the pool clean without the pool knowing of
 * tenants: every other transaction, write and console statement on that connection afterwards runs with the
 * variable NULL, as on a connection that never set it. A connection whose reset failed is a broken one, which the
 * database layer destroys rather than pools.
 */
export async function withTenant<T>(db: Queryable, tenant: string, work: (db: Queryable) => Promise<T>): Promise<T> {
  let set = false;
  const scoped: Queryable = {
    select: (sql, values) => db.select(sql, values),
    write: async (sql, values) => {
      if (!set) {
        await db.write('set @xmlrest_tenant = ?', [tenant]);
        set = true;
      }
      return db.write(sql, values);
    },
  };
  let result: T;
  try {
    result = await work(scoped);
  } catch (error) {
    if (set) await db.write('set @xmlrest_tenant = null', []).catch(() => undefined);
    throw tenantRefusal(error);
  }
  if (set) await db.write('set @xmlrest_tenant = null', []);
  return result;
}

/** The triggers' refusal as the client sees it: 403, reason `tenant_crossed`; any other error as it was. */
export function tenantRefusal(error: unknown): unknown {
  const { errno, sqlMessage } = (error ?? {}) as { errno?: unknown; sqlMessage?: unknown };
  if (errno !== SIGNAL_ERRNO || sqlMessage !== TENANT_REFUSAL) return error;
  return new HttpError(403, 'Forbidden: the row belongs to another tenant', {}, 'tenant_crossed');
}
