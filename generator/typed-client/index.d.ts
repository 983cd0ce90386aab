/** The TypeScript types of an OpenAPI document, as openapi-typescript prints them (its own header first). */
export function openapiTypes(document: object): Promise<string>;
