// The types themselves, run on a worker thread of their own (index.mjs): openapi-typescript takes a second and
// more to load and run, which the generator's thread (a dev server's) does not wait through.
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';

/**
 * The TypeScript types of an OpenAPI document, printed as the generator prints its modules (TypeScript's
 * printer, through ts-morph there): two spaces a level and single quotes, rather than the printer's four and
 * double.
 */
export async function openapiTypes(document) {
  const nodes = await openapiTS(document, { silent: true });
  const { transformed } = ts.transform(nodes, [singleQuotes]);
  return astToString(transformed).replace(/^((?: {4})+)/gm, (indent) => ' '.repeat(indent.length / 2));
}

/**
 * Every string made again with single quotes: string literals, which openapi-typescript makes with the printer's
 * default, and the identifiers holding a JSON string it uses for string literal types (`tsLiteral`).
 */
function singleQuotes(context) {
  const visit = (node) => {
    if (ts.isStringLiteral(node)) return ts.factory.createStringLiteral(node.text, true);
    if (ts.isIdentifier(node) && node.text.startsWith('"')) return ts.factory.createIdentifier(singleQuoted(node.text));
    return ts.visitEachChild(node, visit, context);
  };
  return (node) => ts.visitNode(node, visit);
}

/** A JSON string's text in single quotes, escaped as JSON escaped it, less the double quotes and plus the single ones. */
function singleQuoted(json) {
  return `'${json.slice(1, -1).replaceAll('\\"', '"').replaceAll("'", "\\'")}'`;
}
