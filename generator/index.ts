/**
 * The generator's public entry: what the CLI, `npm run dev`, the console and
 * the tests use. Data flows one way through it: parse, analyse, (types),
 * emit, write (ARCHITECTURE.md).
 */

export { type AuthChange, type AuthChangeResult, changeAuth, etagOf, findResourceFile, type Regeneration, regenerateProject } from './auth-change.js';
export {
  analyseSources,
  emitProject,
  type GenerateOptions,
  type GenerateResult,
  type GeneratorCache,
  generate,
  newGeneratorCache,
  type SourceFile,
  type TypeSnapshot,
} from './core.js';
export { NO_ANSWER, openDescriber } from './database.js';
export { DEMO_DATABASE_URL_FILE, databaseUrlFromEnvironment } from './environment.js';
export type { ParamType } from './ir.js';
export { generateProject, type RunOptions, readSources } from './project.js';
export {
  describedSql,
  describeStep,
  driftText,
  rejection,
  type SnapshotEntry,
  sqlSteps,
  type TableColumn,
  type TypeDrift,
  tableColumns,
  tenantFactsAsker,
  typeDrift,
} from './types.js';
export { authAttributes, setAuthAttribute } from './xml-edit.js';
