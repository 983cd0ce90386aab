import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Registry } from 'prom-client';
import { beforeAll, describe, expect, it } from 'vitest';
import { AUDIT_ATTRIBUTE_NAMES } from '../../generator/analyse/audit.js';
import { analyseBackend, BACKEND_ATTRIBUTES } from '../../generator/analyse/backend.js';
import { IDEMPOTENCY_ATTRIBUTE_NAMES } from '../../generator/analyse/idempotency.js';
import { ISSUER_ATTRIBUTE_NAMES } from '../../generator/analyse/issuer.js';
import { FILTER_ATTRIBUTE_NAMES, PAGE_ATTRIBUTE_NAMES, SORT_ATTRIBUTE_NAMES } from '../../generator/analyse/list-elements.js';
import { REQUEST_ATTRIBUTE_NAMES } from '../../generator/analyse/ownership.js';
import { STEP_TENANT_ATTRIBUTE_NAMES, TENANT_ATTRIBUTE_NAMES } from '../../generator/analyse/tenant.js';
import { WEBHOOK_ATTRIBUTE_NAMES } from '../../generator/analyse/webhook.js';
import { Diagnostics } from '../../generator/diagnostics.js';
import type { Backend } from '../../generator/ir.js';
import { AuditTrail } from '../../runtime/audit/trail.js';
import { DEFAULT_MAX_SESSIONS } from '../../runtime/contract.js';
import type { Database } from '../../runtime/db/index.js';
import { Events } from '../../runtime/events/index.js';
import { createLogger } from '../../runtime/log.js';
import { LOG_LINES } from '../../runtime/log-lines.js';
import { ERROR_STATUSES } from '../../runtime/statuses.js';
import { sampleMetrics } from '../../scripts/docs/metrics.js';
import { differences, referencePages } from '../../scripts/docs/reference.js';
import { scanLogMessages, scanMetrics, scanReasons, scanStatuses } from '../../scripts/docs/scans.js';
import { callArguments, calls, readSources, type Source } from '../../scripts/docs/source-scan.js';
import { readSchema } from '../../scripts/docs/xml.js';

/**
 * docs/reference/ (npm run docs) is made from the code's own tables, and held to them here as access.lock is:
 * a page that differs fails, naming its first differing line. The runtime's lists of what it answers and logs
 * (runtime/statuses.ts, runtime/log-lines.ts) are in turn held to its sources: a status, reason or message
 * sent without its entry fails, and so does an entry nothing sends.
 */
let runtime: Source[];
/** The sources that answer requests: the runtime and the console's API. */
let answering: Source[];
/** The sources npm start runs that write log lines: the runtime, the console's server and the entry. */
let server: Source[];
/** The lists themselves are left out: an entry must be found in the code it describes, not in its own line. */
const LISTS = new Set(['runtime/statuses.ts', 'runtime/log-lines.ts']);
beforeAll(() => {
  runtime = readSources(['runtime']).filter((source) => !LISTS.has(source.path));
  server = readSources(['runtime', 'console', 'scripts/serve.ts']).filter((source) => !LISTS.has(source.path));
  answering = readSources(['runtime', 'console']).filter((source) => !LISTS.has(source.path));
});

/** What one side has and the other lacks, each with where it was seen, for the failure to name. */
function compare(found: Map<string, string[]>, listed: Iterable<string>) {
  const names = new Set(listed);
  return {
    unlisted: [...found].filter(([key]) => !names.has(key)).map(([key, places]) => `${key} (${places.join(', ')})`),
    neverSent: [...names].filter((key) => !found.has(key)).sort(),
  };
}

describe('docs/reference/', () => {
  it('is what npm run docs makes from the code (run npm run docs when this fails)', async () => {
    const pages = await referencePages();
    expect([...pages.keys()].sort()).toEqual(['cli.md', 'errors.md', 'index.md', 'logs.md', 'metrics.md', 'parameters.md', 'settings.md', 'xml.md']);
    expect(differences(pages)).toEqual([]);
  });

  it('names a page that differs and its first differing line, a page missing and one no longer made', async () => {
    const pages = new Map(await referencePages());
    const dir = mkdtempSync(join(tmpdir(), 'reference-'));
    for (const [file, text] of pages) writeFileSync(join(dir, file), text);
    writeFileSync(join(dir, 'old.md'), 'x\n');
    pages.set('settings.md', pages.get('settings.md')!.replace('`PORT`', '`PORTS`'));
    pages.set('new.md', 'x\n');
    const problems = differences(pages, dir);
    rmSync(dir, { recursive: true });
    expect(problems).toEqual([
      `${dir}/old.md: no such page any more (remove it)`,
      `${dir}/new.md: missing`,
      expect.stringMatching(/settings\.md:\d+: differs from the code: is ".*`PORT` .*", should be ".*`PORTS`.*"$/),
    ]);
  });
});

describe('runtime/statuses.ts', () => {
  it('lists every error status the runtime answers, and none it does not', () => {
    const { unlisted, neverSent } = compare(
      scanStatuses(answering),
      ERROR_STATUSES.filter((answer) => !answer.byNode).map((answer) => String(answer.status)),
    );
    expect(unlisted, 'statuses answered without a row in runtime/statuses.ts').toEqual([]);
    expect(neverSent, 'statuses in runtime/statuses.ts that nothing answers').toEqual([]);
  });

  it('lists every reason code the runtime gives a refusal or a fault, and none it does not', () => {
    const { unlisted, neverSent } = compare(
      scanReasons(answering),
      ERROR_STATUSES.map((answer) => answer.reason).filter((reason) => reason !== ''),
    );
    expect(unlisted, 'reasons given without a row in runtime/statuses.ts').toEqual([]);
    expect(neverSent, 'reasons in runtime/statuses.ts that nothing gives').toEqual([]);
  });

  it("quotes messages the runtime's sources hold", () => {
    // `*` is a value put in, on either side: a template's `${...}` is read as `*` too.
    const pattern = (text: string) => new RegExp(`^${text.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`);
    const texts = answering.flatMap((source) => source.tokens.filter((token) => token.kind === 'string').map((token) => token.text));
    const unknown = ERROR_STATUSES.filter((answer) => !answer.byNode && !answer.message.startsWith('('))
      .flatMap((answer) => answer.message.split(' / '))
      .filter((message) => !texts.some((text) => pattern(message).test(text) || pattern(text).test(message)));
    expect(unknown).toEqual([]);
  });
});

describe('runtime/log-lines.ts', () => {
  it('lists every message the server logs, and none it does not', () => {
    const { unlisted, neverSent } = compare(
      scanLogMessages(server),
      LOG_LINES.map((line) => `${line.level} ${line.msg}`),
    );
    expect(unlisted, 'messages logged without an entry in runtime/log-lines.ts').toEqual([]);
    expect(neverSent, 'entries of runtime/log-lines.ts that nothing logs').toEqual([]);
  });
});

describe('the metrics page', () => {
  it('is made from every metric a real server registers (Metrics, the audit trail, events), with its help', async () => {
    const scanned = scanMetrics(runtime);
    // The registrations as the server makes them: Metrics, the audit trail and events on one server's registry.
    const metrics = sampleMetrics();
    const registry: Registry = metrics.registry;
    const database = {} as Database;
    const logger = createLogger('silent');
    const trail = new AuditTrail(database, logger, registry);
    new Events({ database, logger, registry, secrets: {}, deliver: false, serverId: 'test' });
    await trail.stop();
    const registered = registry
      .getMetricsAsArray()
      .map((metric) => metric as unknown as { name: string; help: string })
      .filter((metric) => metric.name.startsWith('xmlrest_'));
    expect(scanned.map((metric) => `${metric.name}: ${metric.help}`).sort()).toEqual(registered.map((metric) => `${metric.name}: ${metric.help}`).sort());
    const page = (await referencePages()).get('metrics.md')!;
    for (const metric of registered) expect(page).toContain(`\`${metric.name}\``);
  });
});

describe('the schema and the analyser', () => {
  const schema = readSchema();
  const attributes = (element: string) => [...(schema.get(element)?.attributes.keys() ?? [])].sort();

  it('give the elements read by a whole table the same attributes', () => {
    const tables: Record<string, readonly string[]> = {
      Backend: BACKEND_ATTRIBUTES.map((attribute) => attribute.name),
      Issuer: ISSUER_ATTRIBUTE_NAMES,
      Tenant: TENANT_ATTRIBUTE_NAMES,
      Webhook: WEBHOOK_ATTRIBUTE_NAMES,
      Page: PAGE_ATTRIBUTE_NAMES,
      Filter: FILTER_ATTRIBUTE_NAMES,
      Sort: SORT_ATTRIBUTE_NAMES,
    };
    for (const [element, names] of Object.entries(tables)) expect(attributes(element), element).toEqual([...names].sort());
  });

  it('give Request and Resource the attributes of the tables they share (owner, audit_params)', () => {
    for (const name of [...REQUEST_ATTRIBUTE_NAMES, ...AUDIT_ATTRIBUTE_NAMES, ...IDEMPOTENCY_ATTRIBUTE_NAMES]) expect(attributes('Request')).toContain(name);
    for (const name of AUDIT_ATTRIBUTE_NAMES) expect(attributes('Resource')).toContain(name);
    for (const name of STEP_TENANT_ATTRIBUTE_NAMES) for (const step of ['Sql', 'Execute']) expect(attributes(step), step).toContain(name);
  });

  it("say Backend's defaults as the analyser has them", () => {
    // max_sessions is left out of the module when not given, and the runtime's default applies.
    const defaults = {
      ...analyseBackend('shop', undefined, new Diagnostics(), { exists: () => false, leavesProject: () => false }).backend,
      maxSessions: DEFAULT_MAX_SESSIONS,
    };
    const backend = schema.get('Backend')!;
    const withDefault = [...backend.attributes.values()].filter((attribute) => attribute.default !== '');
    expect(withDefault.length).toBeGreaterThanOrEqual(10);
    for (const attribute of withDefault) {
      const rule = BACKEND_ATTRIBUTES.find((candidate) => candidate.name === attribute.name)!;
      const read = { ...defaults } as Backend;
      const before = JSON.stringify(defaults);
      expect(rule.apply(attribute.default, read), attribute.name).toBe(true);
      // The schema's default, read as the attribute, changes nothing of the backend the analyser makes without it.
      expect(JSON.stringify(read), attribute.name).toBe(before);
    }
  });

  it('name the same elements and attributes: every one the analyser reads is in the schema, and the other way round', () => {
    const analyser = readSources(['generator/analyse']);
    const read = { elements: new Set<string>(), attributes: new Set<string>() };
    for (const { tokens } of analyser) {
      for (let i = 4; i < tokens.length; i++) {
        const [name, first, second, third, value] = tokens.slice(i - 4, i + 1);
        // child.name === 'Request', root.name !== 'Backend' (elements are capitalised: a resource's or a placeholder's name is not)
        if (
          name?.text === 'name' &&
          first?.text.match(/^[=!]$/) &&
          second?.text === '=' &&
          third?.text === '=' &&
          value?.kind === 'string' &&
          /^[A-Z]/.test(value.text)
        )
          read.elements.add(value.text);
      }
      // attrs.optional('auth'), attrs.required('method'), a table's rule('token_lifetime', ...), { name: 'roles', apply }
      for (const callee of ['optional', 'required', 'rule', 'attributeRule']) {
        for (const open of calls(tokens, callee)) {
          const first = callArguments(tokens, open)[0];
          if (first?.length === 1 && first[0]!.kind === 'string') read.attributes.add(first[0]!.text);
        }
      }
      for (let i = 0; i + 3 < tokens.length; i++)
        if (tokens[i]!.text === 'name' && tokens[i + 1]!.text === ':' && tokens[i + 2]!.kind === 'string' && tokens[i + 4]?.text === 'apply')
          read.attributes.add(tokens[i + 2]!.text);
    }
    read.attributes.delete('xmlns');
    const inSchema = { elements: new Set(schema.keys()), attributes: new Set([...schema.values()].flatMap((element) => [...element.attributes.keys()])) };
    expect([...read.elements].filter((name) => !inSchema.elements.has(name)).sort(), 'elements the analyser reads that the schema lacks').toEqual([]);
    expect([...inSchema.elements].filter((name) => !read.elements.has(name)).sort(), 'elements of the schema the analyser never reads').toEqual([]);
    expect([...read.attributes].filter((name) => !inSchema.attributes.has(name)).sort(), 'attributes the analyser reads that the schema lacks').toEqual([]);
    expect([...inSchema.attributes].filter((name) => !read.attributes.has(name)).sort(), 'attributes of the schema the analyser never reads').toEqual([]);
  });

  it('documents every element and attribute', () => {
    const undocumented = [...schema.values()].flatMap((element) => [
      ...(element.meaning === '' ? [element.name] : []),
      ...[...element.attributes.values()].filter((attribute) => attribute.meaning === '').map((attribute) => `${element.name}@${attribute.name}`),
    ]);
    expect(undocumented).toEqual([]);
  });
});
