import type { AuthSchemeName } from '../contract.js';
import { basicScheme } from './basic.js';
import { bearerScheme } from './bearer.js';
import type { SchemeFactory } from './scheme.js';

/** Every authentication scheme, by the name `auth_scheme` gives it in backend.xml. */
export const SCHEMES: Readonly<Record<AuthSchemeName, SchemeFactory>> = {
  Basic: basicScheme,
  Bearer: bearerScheme,
};
