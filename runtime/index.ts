/** The runtime's public entry: what generated modules, plug-ins and the server entry import. */
export type {
  BackendModule,
  ErrorBody,
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
export { cell } from './contract.js';
export type { WriteResult } from './db.js';
export { Database, openDatabase } from './db.js';
export { HttpError } from './errors.js';
export { createApp, createReloadableApp, type ReloadableApp, type ServerOptions } from './app.js';
export { listen, type ListenOptions, type RunningServer } from './listen.js';
export { resourcePath } from './routes.js';
export { createLogger, parseLogLevel, type Logger } from './log.js';
export { Revocations, revokeToken, revokeUserTokens } from './auth/revocations.js';
export type { Guard } from './auth/guard.js';
export { tokenGenerator, type TokenGeneratorArgs } from './auth/token-b.js';
