import { analyseSources, describedSql, generate, type SourceFile, sqlSteps, type TypeSnapshot } from '../generator/index.js';

/**
 * Generation with the tenant proof against without it (issue 43: at most 1.1x): the same N resources, once in a
 * tenant backend (`<Tenant column="org_id"/>`, every statement filtered by `$tenant` and proven) and once in a
 * backend without one (`$org`, a parameter, in its place), each with the facts a database would have given
 * (column-types.json in memory), so that only the analysis, the proof and the emit differ. In process, the core
 * generator only (no files written), the median of `runs` interleaved runs of each. A third variant writes the
 * organisation as the literal 1, no parameter: `$org` costs the generator a parameter's typing and check in every
 * statement, which the tenant backend has not, so against the literal the ratio is the proof's own cost.
 */
type Variant = 'org' | 'tenant' | 'literal';

function sources(count: number, variant: Variant): SourceFile[] {
  const tenant = variant === 'tenant';
  const org = { org: '$org', tenant: '$tenant', literal: '1' }[variant];
  const files: SourceFile[] = [
    {
      path: 'resources/bench/backend.xml',
      text: `<Backend xmlns="urn:xmlrest:resource:1.0" auth_scheme="Bearer">${tenant ? '<Tenant column="org_id"/>' : ''}</Backend>`,
    },
  ];
  for (let i = 0; i < count; i++) {
    files.push({
      path: `resources/bench/r${i}.xml`,
      text: `<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0" auth="member">
  <Request method="GET">
    <Sql id="rows">select i.id, i.label from items i join kinds k on k.kind_id = i.kind_id and k.org_id = ${org} where i.org_id = ${org} and i.owner = $uid and i.kind_id = $kind limit $n</Sql>
  </Request>
  <Request method="POST" status="201">
    <Sql id="added">insert into items (org_id, owner, label) values (${org}, $uid, $label)</Sql>
    <Sql id="row">select i.id, i.label from items i where i.org_id = ${org} and i.id = $[added][0].insertId</Sql>
  </Request>
</Resource>
`,
    });
  }
  return files;
}

function factsOf(files: SourceFile[]): TypeSnapshot {
  const { project } = analyseSources(files);
  const types: TypeSnapshot = {};
  for (const { key, step } of sqlSteps(project)) {
    types[key] = {
      sql: describedSql(step),
      columns: (step.columns ?? []).map((name) => ({ name, sqlType: 'int', tsType: 'number', nullable: false })),
      tenants: { column: 'org_id', tables: { items: { uniqueOk: true }, kinds: { uniqueOk: true } }, views: [], routines: [] },
    };
  }
  return types;
}

export interface TenantGenerationTiming {
  resources: number;
  withoutMs: number;
  withMs: number;
  /** The same statements with the organisation as the literal 1, no tenant, no parameter. */
  literalMs: number;
  /** Each run's own ratios (its three generations adjacent in time): with the proof / without, and / the literal. */
  runRatios: { without: number[]; literal: number[] };
}

export function measureTenantGeneration(count: number, runs = 5): TenantGenerationTiming {
  const variants = (['org', 'tenant', 'literal'] as const).map((variant) => {
    const files = sources(count, variant);
    return { files, types: factsOf(files), times: [] as number[] };
  });
  for (let run = 0; run < runs; run++) {
    for (const variant of variants) {
      const started = performance.now();
      const result = generate(variant.files, { types: variant.types });
      if (!result.ok) throw new Error(result.errors.slice(0, 3).join('\n'));
      variant.times.push(performance.now() - started);
    }
  }
  const median = (times: number[]) => [...times].sort((a, b) => a - b)[Math.floor(times.length / 2)]!;
  const [without, tenant, literal] = variants.map((variant) => variant.times);
  return {
    resources: count,
    withoutMs: median(without!),
    withMs: median(tenant!),
    literalMs: median(literal!),
    runRatios: { without: tenant!.map((ms, run) => ms / without![run]!), literal: tenant!.map((ms, run) => ms / literal![run]!) },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const timing = measureTenantGeneration(Number(process.argv[2] ?? 1000));
  process.stdout.write(
    `| resources | without a tenant ($org) | with the proof | ratio | organisation as a literal | ratio |\n|---|---|---|---|---|---|\n| ${timing.resources} | ${Math.round(timing.withoutMs)} ms | ${Math.round(timing.withMs)} ms | ${(timing.withMs / timing.withoutMs).toFixed(2)}x | ${Math.round(timing.literalMs)} ms | ${(timing.withMs / timing.literalMs).toFixed(2)}x |\n`,
  );
}
