import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensurePackages, XMLLINT } from '../../scripts/system-packages.js';

/** schema/resource-1.0.xsd, checked with xmllint (Debian libxml2-utils) as an editor would use it. */
const SCHEMA = 'schema/resource-1.0.xsd';

beforeAll(() => {
  ensurePackages([XMLLINT]);
}, 120_000);

const xmllint = (...files: string[]) => spawnSync('xmllint', ['--noout', '--schema', SCHEMA, ...files], { encoding: 'utf8' });

describe('the editor schema', () => {
  it('accepts every demo resource and backend.xml', () => {
    const files = readdirSync('resources', { recursive: true })
      .map(String)
      .filter((file) => file.endsWith('.xml'))
      .map((file) => `resources/${file}`);
    expect(files.length).toBeGreaterThanOrEqual(9);
    const result = xmllint(...files);
    expect(result.stderr.trim().split('\n')).toEqual(files.map((file) => `${file} validates`));
    expect(result.status).toBe(0);
  });

  it('accepts the golden cases of events, webhooks and audit (audit_params among them)', () => {
    const files = ['events/resources/shop', 'audit/resources/app', 'audit-secrets/resources/shop'].flatMap((folder) =>
      readdirSync(`test/golden/${folder}`)
        .filter((file) => file.endsWith('.xml'))
        .map((file) => `test/golden/${folder}/${file}`),
    );
    const result = xmllint(...files);
    expect(result.stderr.trim().split('\n')).toEqual(files.map((file) => `${file} validates`));
  });

  it('accepts lists: Filter, Sort and Page after the steps (the golden case lists)', () => {
    const files = readdirSync('test/golden/lists/resources/app').map((file) => `test/golden/lists/resources/app/${file}`);
    const result = xmllint(...files);
    expect(result.stderr.trim().split('\n')).toEqual(files.map((file) => `${file} validates`));
  });

  it('flags what the generator refuses: unknown elements and attributes, a bad method, a missing v, an owner other than shared', () => {
    mkdirSync('test/.tmp/schema', { recursive: true });
    const cases = {
      'element.xml': '<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0"><Request method="GET"><Query>select 1</Query></Request></Resource>',
      'attribute.xml': '<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0" colour="red"><Request method="GET"><Sql>select 1 as a</Sql></Request></Resource>',
      'method.xml': '<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0"><Request method="FETCH"><Sql>select 1 as a</Sql></Request></Resource>',
      'version.xml': '<Resource xmlns="urn:xmlrest:resource:1.0"><Request method="GET"><Sql>select 1 as a</Sql></Request></Resource>',
      'status.xml': '<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0"><Request method="GET" status="204"><Sql>select 1 as a</Sql></Request></Resource>',
      'owner.xml':
        '<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0" auth="a"><Request method="GET" owner="mine"><Sql>select 1 as a</Sql></Request></Resource>',
      'emit.xml':
        '<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0"><Request method="POST"><Sql id="a">delete from t</Sql><Emit event="a..b" step="a"/></Request></Resource>',
      'webhook.xml': '<Backend xmlns="urn:xmlrest:resource:1.0"><Webhook event="a.*" url="ftp://x" secret="whsec_abc+="/></Backend>',
      'pages.xml':
        '<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0"><Request method="GET"><Sql>select 1 as a</Sql><Page key="a"/><Page key="a"/></Request></Resource>',
      'page-size.xml':
        '<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0"><Request method="GET"><Sql>select 1 as a</Sql><Page key="a" size="0"/></Request></Resource>',
      'filter.xml': '<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0"><Request method="GET"><Sql>select 1 as a</Sql><Filter param="a"/></Request></Resource>',
    };
    for (const [name, text] of Object.entries(cases)) {
      writeFileSync(`test/.tmp/schema/${name}`, text);
      const result = xmllint(`test/.tmp/schema/${name}`);
      expect(result.status, name).not.toBe(0);
      expect(result.stderr, name).toContain('fails to validate');
    }
  });
});
