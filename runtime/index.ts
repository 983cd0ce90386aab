/** The runtime's public entry: what generated modules, plug-ins and the server entry import. */

export { createApp, createReloadableApp, type ReloadableApp, type ServerOptions } from './app.js';
export type { Guard } from './auth/guard.js';
export { Revocations, revokeToken, revokeUserTokens } from './auth/tokens/revocations.js';
export { type TokenGeneratorArgs, tokenGenerator } from './auth/tokens/token-b.js';
export type {
  Access,
  AuditRule,
  BackendModule,
  ErrorBody,
  EventPayload,
  ExpectedVersion,
  GeneratedIndex,
  GeneratorStamp,
  Handler,
  HttpMethod,
  IssuerAlgorithm,
  IssuerSettings,
  ListOrderTerm,
  ListQuery,
  ListSpec,
  Operation,
  ParamSpec,
  ParamSpecs,
  ParamValue,
  Plugin,
  PluginContext,
  Queryable,
  RequestScope,
  ResourceModule,
  Roles,
  SqlValue,
  ValidatorKind,
  WebhookSettings,
} from './contract.js';
export { cell, MODULE_FORMAT, OLDEST_MODULE_FORMAT } from './contract.js';
export { Database, DatabaseFault, openDatabase, parseDatabaseUrl, type WriteResult } from './db/index.js';
export { HttpError } from './errors.js';
export { adminApp, Readiness } from './health.js';
export { jsonDate, jsonNumber, jsonRows, jsonString, jsonValue } from './json-text.js';
export { type ListenOptions, listen, type RunningServer } from './listen.js';
export { pagedBackends } from './lists/index.js';
export { createLogger, type Logger, parseLogLevel } from './log.js';
export { Metrics } from './metrics.js';
export { checkModuleFormat, ModuleFormatError, REGENERATE } from './module-format.js';
export type { Peer, Peers } from './peers.js';
export { resourcePath } from './routes.js';
export { shutDown } from './shutdown.js';
export { type RequestTrace, startTracing, type Tracing } from './tracing/index.js';
export { XMLREST_VERSION } from './version.js';
