import type { Queryable, SqlValue } from './db/index.js';

/**
 * The contract between the generator and the runtime, written once: the
 * shapes that generated modules export and the server mounts, and the
 * settings, parameter specs and error body both sides speak of. The
 * generator's IR (generator/ir.ts) builds on these types; nothing here
 * knows XML.
 *
 * Its parts live in runtime/contract/, one file for each thing it holds; this
 * module is the one entry, which generated modules and the generator import.
 */

export * from './contract/access.js';
export * from './contract/backend.js';
export * from './contract/environment.js';
export * from './contract/error-body.js';
export * from './contract/events.js';
export * from './contract/issuer.js';
export * from './contract/list.js';
export * from './contract/module.js';
export * from './contract/params.js';
export * from './contract/plugin.js';
export * from './contract/rate-limit.js';
export * from './contract/safe-writes.js';
export * from './contract/tenant.js';

export type { Queryable, SqlValue };
