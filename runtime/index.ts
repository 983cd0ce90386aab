/** What generated modules and the server entry import. */
export type {
  BackendModule,
  Handler,
  HttpMethod,
  Operation,
  ParamSpec,
  ParamSpecs,
  ParamValue,
  Plugin,
  PluginContext,
  Queryable,
  RequestScope,
  ResourceModule,
  SqlValue,
} from './contract.js';
export type { WriteResult } from './db.js';
export { Database, openDatabase } from './db.js';
export { HttpError } from './errors.js';
export { cell } from './contract.js';
export { tokenGenerator, type TokenGeneratorArgs } from './auth/token-b.js';
export { createApp, createReloadableApp, listen, resourcePath, type ReloadableApp, type RunningServer, type ServerOptions } from './server.js';
export { createLogger, parseLogLevel, type Logger } from './log.js';
export { Revocations, revokeToken, revokeUserTokens } from './revocations.js';
