import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { generate, newGeneratorCache } from '../../generator/index.js';
import { scanSql } from '../../generator/sql/index.js';
import { parseAuthorization } from '../../runtime/auth/header.js';

/**
 * Property-based hostile input for the three front ends that read what
 * others write: the Authorization header parser, the SQL placeholder scanner
 * and the XML front end. Never a crash, always a clean answer. Seeded and
 * bounded here; `npm run fuzz` runs many more cases (FUZZ_RUNS).
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 300);
const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
const options = { numRuns: RUNS, seed: SEED };

const VALID_RESOURCE = `<?xml version="1.0"?>
<Resource xmlns="urn:xmlrest:resource:1.0" v="1.0" auth="member">
  <Desc>d</Desc>
  <Request method="GET"><Sql id="a">select x as y from t where u = $uid and k = $k</Sql></Request>
  <Request method="POST" status="201">
    <Sql id="b">insert into t (k) values ($k)</Sql>
    <Execute id="c" classname="xmlrest.auth.TokenGenerator"><Arg name="sub" value="$[b][0].insertId"/><Arg name="aud" value="x"/></Execute>
  </Request>
</Resource>`;
const BACKEND = { path: 'resources/f/backend.xml', text: '<Backend auth_scheme="Bearer"/>' };
/** One compiler for the plug-in check across all cases, as `npm run dev` keeps it. */
const cache = newGeneratorCache();

/** Random edits of a valid document: the inputs a fuzzer finds most. */
const mutated = fc
  .array(
    fc.tuple(
      fc.nat(VALID_RESOURCE.length),
      fc.nat(8),
      fc.string({ maxLength: 8, unit: fc.constantFrom('<', '>', '"', "'", '&', ';', '$', '[', ']', '/', '!', '-', '?', 'a', ' ', '\n', '\u0000', 'é') }),
    ),
    { maxLength: 6 },
  )
  .map((edits) => edits.reduce((text, [at, remove, insert]) => text.slice(0, at) + insert + text.slice(at + remove), VALID_RESOURCE));

describe('hostile input (property-based, seeded)', () => {
  it('the Authorization parser never throws and never invents a scheme', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.string({ unit: 'binary' }),
          fc.string().map((s) => `Basic ${s}`),
          fc.string().map((s) => `Bearer ${s}`),
          fc.uint8Array().map((b) => `Basic ${Buffer.from(b).toString('base64')}`),
        ),
        (header) => {
          const result = parseAuthorization(header);
          expect(result === undefined || result.scheme === 'basic' || result.scheme === 'bearer').toBe(true);
        },
      ),
      options,
    );
  });

  it('the SQL scanner never throws, and its ? count always equals its placeholder count', () => {
    fc.assert(
      fc.property(
        fc.string({
          unit: fc.constantFrom('s', 'e', 'l', ' ', "'", '"', '`', '$', 'a', '[', ']', '0', '.', '-', '#', '/', '*', '\\', '\n', ';', '?', '(', ')', ','),
          maxLength: 80,
        }),
        (sql) => {
          const scanned = scanSql(sql);
          // Every ? in the output is one of ours unless the scanner reported a stray one.
          if (scanned.problems.length === 0) {
            const questionMarks = scanSql(scanned.sql.replaceAll('?', '$p')).placeholders.length;
            expect(questionMarks).toBe(scanned.placeholders.length);
          }
        },
      ),
      options,
    );
  });

  it('the XML front end answers random bytes and mutated documents with errors or modules, never a crash', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary', maxLength: 400 }), mutated), (text) => {
        const result = generate([BACKEND, { path: 'resources/f/r.xml', text }], { cache });
        if (!result.ok) {
          expect(result.errors.length).toBeGreaterThan(0);
          for (const line of result.errors) expect(line).toMatch(/^resources\/f\/(r|backend)\.xml:\d+:\d+: \S/);
        }
      }),
      options,
    );
  });

  it('refuses entity expansion and external entities before anything is expanded or read', () => {
    const attacks = [
      '<!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]><Resource v="1.0"><Request method="GET"><Sql>select \'&c;\' as x</Sql></Request></Resource>',
      '<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><Resource v="1.0"><Request method="GET"><Sql>select \'&x;\' as x</Sql></Request></Resource>',
      '<!DOCTYPE r SYSTEM "http://example.invalid/r.dtd"><Resource v="1.0"/>',
      '<?xml version="1.0"?>\n<!-- fine -->\n<!DOCTYPE Resource><Resource v="1.0"/>',
    ];
    for (const text of attacks) {
      const started = performance.now();
      const result = generate([BACKEND, { path: 'resources/f/r.xml', text }]);
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.errors[0]).toMatch(/^resources\/f\/r\.xml:\d+:\d+: document type declarations are not allowed/);
      expect(performance.now() - started).toBeLessThan(1000);
    }
  });
});
