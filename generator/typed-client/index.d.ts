/** The TypeScript types of an OpenAPI document, made by openapi-typescript on a worker thread (index.mjs). */
export function openapiTypes(document: object): Promise<string>;
