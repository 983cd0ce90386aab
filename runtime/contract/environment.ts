/**
 * Settings per environment (docs/internals/contract.md §7): an attribute whose value differs between staging and production
 * (an Issuer's `iss`, `jwks_uri`, `discovery`, a Webhook's `url`) may be `${NAME}`, the whole value, naming an
 * environment variable the server reads at start. The generated module and OpenAPI keep the reference as written;
 * the server resolves it (runtime/config/environment.ts).
 *
 * Whole values only: a reference inside a longer text (`https://${HOST}/jwks`) would have its URL checked only
 * at start, on parts put together there, and a value could smuggle in a path or a user name the file never showed.
 */
export const ENVIRONMENT_REFERENCE = /^\$\{([A-Z_][A-Z0-9_]{0,127})\}$/;

/** The variable a value names, `OIDC_ISSUER` for `${OIDC_ISSUER}`; undefined for a value written out. */
export function environmentReference(value: string): string | undefined {
  return ENVIRONMENT_REFERENCE.exec(value)?.[1];
}

/** Why a value that holds `${` is not a reference, or undefined when it holds none or is one. */
export function referenceProblem(value: string): string | undefined {
  if (!value.includes('${') || environmentReference(value) !== undefined) return undefined;
  const inner = /^\$\{([^}]*)\}$/.exec(value);
  if (!inner) {
    return value.startsWith('${') && !value.includes('}')
      ? `"${value}" is not closed: a reference to an environment variable is \${NAME}, the whole value`
      : `"${value}" holds \${ inside a longer text: a reference to an environment variable is the whole value, \${NAME}`;
  }
  if (inner[1] === '') return '"${}" names no environment variable: write ${NAME}';
  return `"${value}" names no environment variable: a name is capital letters, digits and _, not starting with a digit, such as \${OIDC_ISSUER}`;
}
