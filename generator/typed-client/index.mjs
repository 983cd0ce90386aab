// Build time only (a dev dependency of xmlrest, never in a production install): openapi-typescript, with the
// TypeScript 5 it takes as a peer in node_modules/ beside it. The project's own compiler is TypeScript 7, whose
// package has no JavaScript API, so npm installs this folder's dependencies here, apart.
import openapiTS, { astToString } from 'openapi-typescript';

/** The TypeScript types of an OpenAPI document, as openapi-typescript prints them (its own header first). */
export async function openapiTypes(document) {
  return astToString(await openapiTS(document, { silent: true }));
}
