import {
  type ClaimPath,
  ISSUER_ALGORITHMS,
  type IssuerAlgorithm,
  type IssuerSettings,
  keyUrlProblem,
  ROLE_NAME,
  type RoleFormat,
} from '../../runtime/contract.js';
import type { Diagnostics, SourceLocation } from '../diagnostics.js';
import { scanSql } from '../sql/index.js';
import {
  AttributeReader,
  type AttributeRule,
  rule as attributeRule,
  describePlaceholder,
  orReference,
  orReferenceError,
  type RawElement,
  readAttributes,
} from './elements.js';

/**
 * `Issuer` in backend.xml (docs/internals/contract.md §9): an identity provider whose
 * access tokens a Bearer backend accepts beside its own. Every attribute is a
 * row of ISSUER_ATTRIBUTES, as Backend's are; `Role` and `UserQuery` are its
 * children.
 */

/** An issuer being read: the settings, and which of the required ones were given. */
type Draft = IssuerSettings & { jwksUri?: string; discovery?: string };

const rule = <K extends keyof Draft>(name: string, field: K, parse: (value: string) => Draft[K] | undefined, error: (value: string) => string) =>
  attributeRule<Draft, K>(name, field, parse, error);

const words = (value: string) => value.split(/\s+/).filter((word) => word !== '');

/**
 * A claim path: names separated by dots, a name with dots (a URI-named
 * claim) in double quotes: `realm_access.roles`,
 * `"https://example.com/claims".roles`.
 */
export function parseClaimPath(text: string): ClaimPath | undefined {
  const segments: string[] = [];
  let rest = text;
  for (;;) {
    let segment: RegExpExecArray | null;
    if (rest.startsWith('"')) segment = /^"([^"]+)"/.exec(rest);
    else segment = /^([^."\s]+)/.exec(rest);
    if (!segment) return undefined;
    segments.push(segment[1]!);
    rest = rest.slice(segment[0].length);
    if (rest === '') return segments;
    if (!rest.startsWith('.')) return undefined;
    rest = rest.slice(1);
  }
}

const claimPath = (attribute: string) => (value: string) =>
  `${attribute} is a claim path (names separated by dots, a name holding dots in double quotes), not "${value}"`;

const ISSUER_ATTRIBUTES: readonly AttributeRule<Draft>[] = [
  rule(
    'iss',
    'iss',
    orReference((value) => (value.trim() === value && value !== '' ? value : undefined)),
    orReferenceError('iss', (value) => `iss is the issuer's identifier exactly as its tokens carry it, without spaces at either end: "${value}"`),
  ),
  rule(
    'audience',
    'audience',
    (value) => (words(value).length > 0 ? [...new Set(words(value))] : undefined),
    () => 'audience names at least one audience (the tokens meant for this API)',
  ),
  rule(
    'jwks_uri',
    'jwksUri',
    orReference((value) => (keyUrlProblem(value) === undefined ? value : undefined)),
    orReferenceError('jwks_uri', (value) => `jwks_uri ${keyUrlProblem(value)}: "${value}"`),
  ),
  rule(
    'discovery',
    'discovery',
    orReference((value) => (keyUrlProblem(value) === undefined ? value : undefined)),
    orReferenceError('discovery', (value) => `discovery ${keyUrlProblem(value)}: "${value}"`),
  ),
  rule(
    'algorithms',
    'algorithms',
    (value) => {
      const given = words(value);
      if (given.length === 0 || !given.every((name) => (ISSUER_ALGORITHMS as readonly string[]).includes(name))) return undefined;
      return [...new Set(given)] as IssuerAlgorithm[];
    },
    (value) => {
      const secret = words(value).find((name) => /^HS/i.test(name) || name.toLowerCase() === 'none');
      if (secret)
        return `algorithms may not hold ${secret}: an outside issuer's tokens are verified with its public keys only (${ISSUER_ALGORITHMS.join(' ')})`;
      return `algorithms are some of ${ISSUER_ALGORITHMS.join(' ')}, not "${value}"`;
    },
  ),
  rule(
    'clock_skew',
    'clockSkew',
    (value) => (/^[0-9]{1,3}$/.test(value) && Number(value) <= 300 ? Number(value) : undefined),
    (value) => `clock_skew is 0 to 300 seconds, not "${value}"`,
  ),
  {
    name: 'roles',
    apply: (value, issuer) => {
      const path = parseClaimPath(value);
      if (path) issuer.roles = { ...issuer.roles, path };
      return path !== undefined;
    },
    error: claimPath('roles'),
  },
  {
    name: 'role_format',
    apply: (value, issuer) => {
      const format = (['array', 'space', 'comma', 'json'] as const).find((candidate) => candidate === value);
      if (format) issuer.roles = { ...issuer.roles, format };
      return format !== undefined;
    },
    error: (value) => `role_format is array, space, comma or json, not "${value}"`,
  },
  rule(
    'map_only',
    'mapOnly',
    (value) => (value === 'true' ? true : value === 'false' ? false : undefined),
    (value) => `map_only is true or false, not "${value}"`,
  ),
  rule('user', 'user', parseClaimPath, claimPath('user')),
  // On a tenant backend (docs/internals/contract.md §14): the claim whose value is its user's $tenant.
  rule('tenant', 'tenant', parseClaimPath, claimPath('tenant')),
];
/** The names this table reads, which the schema must give the element too (test/unit/reference.test.ts). */
export const ISSUER_ATTRIBUTE_NAMES: readonly string[] = ISSUER_ATTRIBUTES.map((attribute) => attribute.name);

/** Reads one `Issuer`; undefined when it is too broken to serve (its errors are reported). */
export function analyseIssuer(element: RawElement, diagnostics: Diagnostics): { issuer: IssuerSettings; issAt: SourceLocation } | undefined {
  const draft: Draft = {
    iss: '',
    audience: [],
    keys: { jwksUri: '' },
    algorithms: ['RS256', 'ES256', 'EdDSA'],
    clockSkew: 30,
    roles: { path: ['roles'], format: 'array' as RoleFormat },
    roleMap: [],
    mapOnly: false,
    user: ['sub'],
    userQuery: null,
  };
  const before = diagnostics.count;
  const given = readAttributes(element, ISSUER_ATTRIBUTES, draft, diagnostics);
  if (!given.has('iss')) diagnostics.error(element.at, 'Issuer needs the attribute iss (the issuer its tokens name)');
  if (!given.has('audience')) diagnostics.error(element.at, 'Issuer needs the attribute audience: a token meant for another API must not get in');
  if (!given.has('jwks_uri') && !given.has('discovery')) {
    diagnostics.error(element.at, "Issuer needs jwks_uri (the provider's key set) or discovery (its /.well-known/openid-configuration)");
  } else if (given.has('jwks_uri') && given.has('discovery')) {
    diagnostics.error(given.get('discovery')!.at, 'Issuer has jwks_uri and discovery: give one (discovery names the key set itself)');
  }
  if (element.hasMixedText) diagnostics.error(element.at, 'Issuer holds only elements, not text');
  const roleMap: { from: string; to: string }[] = [];
  let userQuery: RawElement | undefined;
  for (const child of element.children) {
    if (child.name === 'Role') {
      const role = new AttributeReader(child, diagnostics);
      const from = role.required('from');
      const to = role.required('to');
      role.rejectOthers();
      if (from && from.value === '') diagnostics.error(from.at, "from names the provider's role, and is not empty");
      if (to && !ROLE_NAME.test(to.value)) diagnostics.error(to.at, `to is a role name (letters, digits, _ . : -), not "${to.value}"`);
      if (from && to && from.value !== '' && ROLE_NAME.test(to.value)) {
        if (roleMap.some((mapping) => mapping.from === from.value && mapping.to === to.value)) {
          diagnostics.error(child.at, `the role "${from.value}" is mapped to "${to.value}" twice`);
        } else roleMap.push({ from: from.value, to: to.value });
      }
    } else if (child.name === 'UserQuery') {
      if (userQuery) diagnostics.error(child.at, 'only one UserQuery per Issuer');
      userQuery = child;
      new AttributeReader(child, diagnostics).rejectOthers();
    } else if (child.name === 'Desc') {
      new AttributeReader(child, diagnostics).rejectOthers();
    } else {
      diagnostics.error(child.at, `unknown element in Issuer: ${child.name} (expected Role, UserQuery or Desc)`);
    }
  }
  draft.roleMap = roleMap;
  if (userQuery) draft.userQuery = analyseUserQuery(userQuery, diagnostics);
  else if (given.has('user') && draft.user.length === 1 && USER_CHANGEABLE.includes(draft.user[0]!)) {
    diagnostics.warn(given.get('user')!.at, changeableWarning(draft.user[0]!));
  }
  if (diagnostics.count !== before) return undefined;
  const { jwksUri, discovery, ...settings } = draft;
  return {
    issuer: { ...settings, keys: discovery !== undefined ? { discovery } : { jwksUri: jwksUri! } },
    issAt: given.get('iss')!.at,
  };
}

/**
 * Claims a user sets for themselves at the provider (OpenID Connect Core §5.1): a user id read from one is
 * whoever renames themselves to it. `email` and `phone_number` count only when the token says they are verified
 * (the server checks `email_verified`, `phone_number_verified`: runtime/auth/issuer/claims.ts).
 */
const USER_CHANGEABLE = ['preferred_username', 'nickname', 'name', 'given_name', 'family_name', 'middle_name'];

const changeableWarning = (claim: string) =>
  `the user id is taken from the claim ${claim}, which its user can change at the provider: whoever renames themselves takes that user's id. Use sub, the provider's own id of the user (or a UserQuery on it)`;

/** `select user_id from usr where email = $claim.email`: the local id of the token's user, from its claims. */
function analyseUserQuery(element: RawElement, diagnostics: Diagnostics): IssuerSettings['userQuery'] {
  const scanned = scanSql(element.text);
  for (const problem of scanned.problems) diagnostics.error(element.locate(problem.offset), `UserQuery: ${problem.message}`);
  const binds: string[] = [];
  scanned.placeholders.forEach((placeholder, index) => {
    if (placeholder.kind === 'claim') {
      binds.push(placeholder.name);
      if (USER_CHANGEABLE.includes(placeholder.name)) diagnostics.warn(element.locate(scanned.placeholderOffsets[index]!), changeableWarning(placeholder.name));
    } else {
      diagnostics.error(
        element.locate(scanned.placeholderOffsets[index]!),
        `UserQuery may use only $claim.<name> (a claim of the token), not ${describePlaceholder(placeholder)}`,
      );
    }
  });
  if (scanned.statement !== 'read') diagnostics.error(element.at, 'UserQuery must be a SELECT');
  else if (scanned.columns !== null && !scanned.columns.includes('user_id')) {
    diagnostics.error(element.at, 'UserQuery returns the local user id as a column named user_id (give the column an alias)');
  }
  return { sql: scanned.sql, binds };
}
