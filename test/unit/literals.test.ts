import fc from 'fast-check';
import { ts } from 'ts-morph';
import { describe, expect, it } from 'vitest';
import { generate, newGeneratorCache } from '../../generator/index.js';

/**
 * Whatever characters a resource file holds (a carriage return, the line and
 * paragraph separators, controls, bidirectional overrides, quotes, backticks,
 * backslashes, `${`, `*\/`), the modules the generator writes parse, hold no
 * such character as it is, and their literals mean exactly what the file said:
 * the SQL constant is the statement, an Arg's text its value, the issuer the
 * issuer. A reference to a character XML does not allow is an error at its
 * place, never a crash, and error messages show no control character as it is.
 * Seeded and bounded; `FUZZ_RUNS` runs more.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 40);
const SEED = Number(process.env.FUZZ_SEED ?? 20261205);
const options = { numRuns: RUNS, seed: SEED };
const cache = newGeneratorCache();

/** The characters that broke or could break an emitted literal or comment, and some plain ones. */
const PIECES = [
  '\r',
  '\u2028',
  '\u2029',
  '\u0085',
  '\u009b',
  '\u007f',
  '\u202e',
  '\u2066',
  '\u200b',
  '\ufeff',
  '\u00a0',
  '\u{f0000}',
  '\t',
  '\\',
  '`',
  '${',
  "'",
  '"',
  '*/',
  '/*',
  '//',
  '<',
  '>',
  '&',
  // With & before them, text that reads like a reference: it must stay text (`&amp;#13;` is not a carriage return).
  '#13;',
  '#x110000;',
  'amp;',
  '$',
  'é',
  '😀',
  'a',
  ' ',
];
const text = fc.array(fc.constantFrom(...PIECES), { maxLength: 12 }).map((pieces) => pieces.join(''));

/** The XML that means `value` in element text: markup escaped, a carriage return as a reference (a raw one reads as a line end). */
const xmlText = (value: string) => value.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('\r', '&#13;');
/** In an attribute, white space other than the plain space is a reference too (XML normalises it to spaces). */
const xmlAttribute = (value: string) => xmlText(value).replaceAll('"', '&quot;').replaceAll('\t', '&#9;');
/** A MariaDB string literal holding `value`. */
const sqlString = (value: string) => `'${value.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;

/** Unprintable characters (generator/unprintable.ts) but the line feed and tab a statement keeps. */
const RAW_UNPRINTABLE = /(?! )(?![\n\t])[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Zl}\p{Zp}\p{Zs}]/u;

/** Syntax errors of a module, from TypeScript's own parser. */
function syntaxErrors(module: string): string[] {
  const { diagnostics } = ts.transpileModule(module, { reportDiagnostics: true, compilerOptions: { module: ts.ModuleKind.ESNext } });
  return (diagnostics ?? []).map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
}

/** What each constant and property of a module holds, where it is a plain string or template literal: its value, as TypeScript reads it. */
function literalValues(module: string): Map<string, string> {
  const values = new Map<string, string>();
  const visit = (node: ts.Node) => {
    const literal = (initializer: ts.Node | undefined) =>
      initializer && (ts.isStringLiteral(initializer) || ts.isNoSubstitutionTemplateLiteral(initializer)) ? initializer.text : undefined;
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name)) {
      const value = literal(node.initializer);
      if (value !== undefined) values.set(node.name.text, value);
    } else if (ts.isPropertyAssignment(node) && (ts.isIdentifier(node.name) || ts.isStringLiteral(node.name))) {
      const value = literal(node.initializer);
      if (value !== undefined) values.set(node.name.text, value);
    }
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile('module.ts', module, ts.ScriptTarget.Latest, true));
  return values;
}

describe('literals in emitted modules', () => {
  it('parse, hold no unprintable character as it is, and mean exactly what the resource file says', () => {
    fc.assert(
      fc.property(text, text, text, text, (inSql, inArg, inIssuer, inDesc) => {
        const sql = `select ${sqlString(inSql)} as x from t where k = $k`;
        // An Arg value starting with $ is a reference: this one is text.
        const aud = `v${inArg}`;
        const issuer = `i${inIssuer}`;
        const backend = { path: 'resources/f/backend.xml', text: `<Backend auth_scheme="Bearer" issuer="${xmlAttribute(issuer)}"/>` };
        const resource = {
          path: 'resources/f/r.xml',
          text: `<Resource v="1.0"><Desc>${xmlText(inDesc)}</Desc><Request method="POST"><Sql id="q">${xmlText(sql)}</Sql><Execute id="token" classname="xmlrest.auth.TokenGenerator"><Arg name="sub" value="$[q][0].x"/><Arg name="aud" value="${xmlAttribute(aud)}"/></Execute></Request></Resource>`,
        };
        const result = generate([backend, resource], { cache });
        expect(result.ok, result.ok ? '' : result.errors.join('\n')).toBe(true);
        if (!result.ok) return;
        const module = result.files.get('generated/f/r.ts')!;
        const index = result.files.get('generated/f/index.ts')!;
        for (const file of [module, index]) {
          expect(syntaxErrors(file)).toEqual([]);
          expect(RAW_UNPRINTABLE.exec(file)?.[0]).toBeUndefined();
        }
        const values = literalValues(module);
        expect(values.get('Q_SQL')).toBe(sql.replace('$k', '?'));
        expect(values.get('aud')).toBe(aud);
        expect(values.get('name')).toBe('r');
        expect(literalValues(index).get('issuer')).toBe(issuer);
      }),
      options,
    );
    // The first run starts the compiler that checks plug-in calls (seconds); each further one takes about 0.1 s.
  }, 180_000);

  it('refuses a reference to a character XML does not allow at its file:line:col, and escapes what a message quotes', () => {
    const resource = (sql: string, method = 'GET') =>
      generate([{ path: 'resources/f/r.xml', text: `<Resource v="1.0">\n  <Request method="${method}">\n    <Sql id="q">${sql}</Sql></Request></Resource>` }]);
    for (const reference of ['&#x110000;', '&#1114112;', '&#xFFFFFFFFFFFF;', '&#0;', '&#x1B;', '&#xD800;', '&#xDFFF;', '&#xFFFE;', '&#xFFFF;']) {
      const result = resource(`select '${reference}' as x`);
      expect(result.ok ? [] : result.errors, reference).toEqual([`resources/f/r.xml:3:25: malformed XML: ${reference} is not a character XML allows`]);
    }
    for (const entity of ['&constructor;', '&toString;', '&nbsp;']) {
      const result = resource(`select '${entity}' as x`);
      expect(result.ok ? [] : result.errors, entity).toEqual([
        `resources/f/r.xml:3:25: malformed XML: unknown entity ${entity} (XML has &lt; &gt; &amp; &quot; &apos; and character references; no DTD declares others)`,
      ]);
    }
    const echoed = resource('select 1 as x', 'GET&#13;&#x9B;&#x2028;&#x202E;&#10;');
    expect(echoed.ok ? [] : echoed.errors).toEqual([
      'resources/f/r.xml:2:12: method is one of GET, POST, PUT, PATCH, DELETE, not "GET\\r\\u009B\\u2028\\u202E\\n"',
    ]);
  });
});
