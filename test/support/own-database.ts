import mysql from 'mysql2/promise';
import { inject } from 'vitest';
import { socketUser } from '../../scripts/mariadb.js';
import { createDemoDatabase } from '../../scripts/schema.js';

/**
 * A database of the test file's own, on the run's MariaDB, with the default and demo tables and users, made
 * afresh. For tests that must know every server on their database: the console refuses to edit a resource
 * while another server serves the same database (runtime/peers.ts), and the shared database has the servers
 * of every other test file beside it. With DATABASE_URL, a database beside that one when its user may create
 * one, else that one itself.
 */
export async function ownDatabase(name: string): Promise<string> {
  const shared = new URL(inject('databaseUrl'));
  const socket = inject('databaseSocket');
  const database = `${shared.pathname.slice(1)}_${name.replace(/[^a-z0-9_]/g, '_')}`;
  const admin = socket ? await mysql.createConnection({ socketPath: socket, user: socketUser() }) : await mysql.createConnection({ uri: shared.toString() });
  try {
    await admin.query(`drop database if exists \`${database}\``);
    await admin.query(`create database \`${database}\` character set utf8mb4 collate utf8mb4_unicode_ci`);
    if (socket) await admin.query(`grant all privileges on \`${database}\`.* to ?@'127.0.0.1'`, [decodeURIComponent(shared.username)]);
  } catch (error) {
    if (socket) throw error;
    process.stdout.write(`own database ${database} not made (${(error as Error).message}): using the shared one\n`);
    return shared.toString();
  } finally {
    await admin.end();
  }
  const url = new URL(shared);
  url.pathname = `/${database}`;
  await createDemoDatabase(url.toString());
  return url.toString();
}
