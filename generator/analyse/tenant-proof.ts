import type { Diagnostics, SourceLocation } from '../diagnostics.js';
import type { Backend, Operation, Project, SqlStep } from '../ir.js';
import { tokenize } from '../sql/tokens.js';
import { versionedTexts } from '../sql/versioned.js';
import type { TypeSnapshot } from '../types/snapshot.js';
import { widestStatement } from './list-spec.js';
import { STEP_SOURCES, VALIDATOR_STEPS } from './step-sources.js';
import { proveTenancy, type TenantFacts } from './tenancy.js';

/**
 * The tenant proof wired into generate (docs/internals/contract.md §14): every Sql step of a tenant backend, but one
 * that says `tenant="all"`, is proven by analyse/tenancy.ts to keep to the caller's tenant, with the database's
 * facts of the tables it names (which have the tenant column, which are views: `tenants` of the step's entry in
 * generated/column-types.json); a list's widest statement (every filter, the page's condition) too. Each problem is
 * an error at its place in the Sql element. No facts, or facts for another column: an error too, never a pass.
 */

/** The step's facts when they are current: made for this very statement and this tenant column. */
export function tenantFacts(entry: TypeSnapshot[string] | undefined, column: string, described: string): TenantFacts | undefined {
  if (entry === undefined || entry.sql !== described || entry.tenants === undefined) return undefined;
  // Facts made before the database's stored routines were asked know nothing of them: stale, never a pass.
  return entry.tenants.column === column && entry.tenants.routines !== undefined ? entry.tenants : undefined;
}

/** Proves every step of every tenant backend; problems are errors at their `file:line:col`. */
export function proveTenants(
  project: Project,
  snapshot: TypeSnapshot,
  keyOf: (file: string, method: string, step: string) => string,
  describedSql: (step: SqlStep) => string,
  diagnostics: Diagnostics,
): void {
  for (const backend of project.backends) {
    const tenant = backend.tenant;
    if (tenant === undefined) continue;
    for (const resource of backend.resources) {
      for (const operation of resource.operations) {
        // A GET's Validator is proven as a step is: it is no way around the proof (analyse/validator.ts).
        const validator = operation.validator && VALIDATOR_STEPS.get(operation.validator);
        for (const step of validator === undefined ? operation.steps : [...operation.steps, validator]) {
          // A token request (a login plug-in) is the door itself: its read of the user tables is for no caller yet.
          if (step.tenant === 'all' && (operation.access === null || operation.access === '*') && operation.paramsFromBody !== true) {
            // Every tenant's rows to anyone at all, or to any user of any tenant: a warning, an error with --strict.
            diagnostics.warn(
              step.at,
              `step "${step.id}" says tenant="all" on ${operation.access === null ? 'public' : 'any user\'s (auth="*")'} ${operation.method}: every tenant's rows reach ${operation.access === null ? 'anyone' : 'every user of every tenant'}. Give the request roles that only operators hold`,
            );
          }
          if (step.kind !== 'sql' || step.tenant === 'all') continue;
          const source = STEP_SOURCES.get(step) ?? { text: step.sql, locate: () => step.at };
          const facts = tenantFacts(snapshot[keyOf(resource.source, operation.method, step.id)], tenant.column, describedSql(step));
          if (facts === undefined) {
            diagnostics.error(
              step.at,
              `step "${step.id}": the tenant proof has no facts of the tables it names (which have ${tenant.column}): run generate with DATABASE_URL`,
            );
            continue;
          }
          const problems = proveTenancy(source.text, facts);
          if (tenant.type === 'text') problems.push(...inexactCollations(facts, tenant.column));
          for (const problem of problems) diagnostics.error(source.locate(problem.offset), `step "${step.id}": ${problem.message}`);
          // A versioned write's forms (docs/internals/contract.md §15) are proven as they run: adding an AND term to
          // a where and a set item of a column that is not the tenant's (analyse/version.ts) cannot break a proof,
          // and the probe keeps the where's terms on the same reference, but each is proven rather than argued.
          if (problems.length === 0 && operation.version?.step === step.id) {
            const forms = versionedTexts(source.text, operation.version.column);
            for (const text of 'message' in forms ? [] : [forms.unconditional, forms.conditional, forms.probe]) {
              for (const problem of proveTenancy(text, facts)) diagnostics.error(step.at, `step "${step.id}", as its versioned forms run: ${problem.message}`);
            }
          }
          // What a list serves: its own statement with every filter and the page's condition added.
          if (problems.length === 0 && step.list) {
            for (const problem of proveTenancy(widestText(step), facts))
              diagnostics.error(step.at, `step "${step.id}", as its list serves it (every filter, the page's condition): ${problem.message}`);
          }
        }
      }
    }
  }
}

/**
 * Text tenants compare exactly only under a binary collation: under a `_ci` one `'acme' = 'ACME'`, two tenants to
 * xmlrest and one to the database. (Trailing spaces, which PAD SPACE collations ignore, are no tenant's: the runtime
 * refuses a text tenant that ends in one, runtime/tenants/canonical.ts.)
 */
function inexactCollations(facts: TenantFacts, column: string): { offset: number; message: string }[] {
  return Object.entries(facts.tables)
    .filter(([, table]) => table.collation !== undefined && !/_bin$/i.test(table.collation))
    .map(([name, table]) => ({
      offset: 0,
      message: `${name}.${column} has the collation ${table.collation}, under which tenants that differ in letter case or accents are one: give the column a binary collation (such as utf8mb4_bin)`,
    }));
}

/**
 * A list's widest statement with its placeholders written back where the step's own binds stand (the head, the
 * tail): `$tenant` for the tenant, and a `$list_value` no proof counts for the filters', the page's and any other.
 */
export function widestText(step: SqlStep): string {
  const list = step.list!;
  const sql = widestStatement(list);
  const tailAt = list.tail === '' ? -1 : sql.indexOf(`\n${list.tail}`, list.head.length);
  const ownBind = (offset: number) => offset < list.head.length || (tailAt >= 0 && offset > tailAt && offset <= tailAt + list.tail.length);
  let bind = 0;
  let text = '';
  let from = 0;
  for (const token of tokenize(sql, [])) {
    if (token.type !== 'punct' || token.text !== '?') continue;
    const own = ownBind(token.start) ? step.binds[bind++] : undefined;
    text += sql.slice(from, token.start) + (own?.kind === 'tenant' ? '$tenant' : '$list_value');
    from = token.start + 1;
  }
  return text + sql.slice(from);
}

/** The steps of a method that say `tenant="all"`, in order: what access.lock lists after the method. */
export function crossingSteps(operation: Operation): string[] {
  return operation.steps.filter((step) => step.tenant === 'all').map((step) => step.id);
}

/** `tenant=all:<step>[,<step>]`, the suffix of a method's line in access.lock; '' for none. */
export function lockSuffix(backend: Backend, operation: Operation): string {
  if (backend.tenant === undefined) return '';
  const steps = crossingSteps(operation);
  return steps.length === 0 ? '' : ` tenant=all:${steps.join(',')}`;
}
