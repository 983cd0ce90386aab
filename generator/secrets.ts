import { DEFAULT_USER_TABLES } from '../runtime/auth/users/user-tables.js';
import type { Diagnostics } from './diagnostics.js';
import type { Backend, Operation, Project, SqlStep } from './ir.js';
import { type ColumnMet, columnsMet, namedTokens } from './sql/meets.js';
import { sourceColumn } from './sql/tables.js';

/**
 * Which request parameters are secrets (docs/internals/contract.md §12), decided here, when generating, never per call:
 * the audit keeps no secret's value, and the module says which values it keeps (`AuditRule`). A parameter is
 * a secret when its name is a secret's (`pw`, `pin`, `otp`, `cvv`, `apiKey`, `cardNumber`: matched on the
 * parts of its snake, kebab or camel case, whole, so that `spin`, `pinned`, `opinion` and `keyword` are not),
 * when it meets a password column (compared with it or written to it, through `sha2(...)` and the like: the
 * backend's user table's password, or any column named like a password, secret, token or hash), or when it
 * reaches a password argument of a plug-in (plugins.ts). Wide on purpose: a secret kept 90 days in the audit is
 * a leak; a value left out is not, and `audit_params` says which values a resource's rows keep.
 */

/** Parts that make a name a secret's when one of its parts is one of them, whole (`user_pw`, `cardPIN`, `otpCode`, `cvv2`). */
const SECRET_PARTS = new Set([
  ...['password', 'passwords', 'passwd', 'pwd', 'pw', 'pass', 'passcode', 'passphrase', 'passkey'],
  ...['secret', 'secrets', 'token', 'credential', 'credentials', 'auth', 'authorization', 'signature', 'sig', 'hmac'],
  ...['cookie', 'jwt', 'bearer', 'apikey', 'pin', 'otp', 'totp', 'hotp', 'mfa', '2fa', 'cvv', 'cvc', 'cvn', 'csc', 'ssn', 'pan'],
  ...['cardnumber', 'cardno', 'ccnumber', 'ccnum', 'creditcard', 'sessionid'],
]);
/** Parts that are secrets' when run together with other words (`newpassword`, `accesstoken`, `clientsecret`, `xapikey`). */
const SECRET_ENDINGS = [
  ...['password', 'passwd', 'passphrase', 'passcode', 'secret', 'token', 'apikey', 'credential', 'credentials'],
  // Two words run together in one part, as `private_key` or `pin_code` are two: `privatekey`, `pincode`.
  ...['privatekey', 'accesskey', 'secretkey', 'signingkey', 'masterkey', 'sessionkey', 'pincode', 'authcode', 'otpcode'],
];
const SECRET_BEGINNINGS = ['password', 'passwd', 'passphrase', 'passcode', 'secret'];
/** Beginnings that are no secret's: a `secretary` is a person. */
const NOT_SECRET_BEGINNINGS = ['secretar'];
/** A part that is a secret's after one of these parts (`api_key`, `privateKey`, `session_id`, `card_number`, `security_code`). */
const KEY_WORDS = ['api', 'access', 'secret', 'private', 'priv', 'signing', 'encryption', 'master', 'license', 'licence', 'session'];
const SECRET_PAIRS: Readonly<Record<string, readonly string[]>> = {
  key: [...KEY_WORDS, 'auth', 'client', 'shared', 'ssh', 'pgp', 'gpg', 'app', 'consumer', 'root', 'recovery', 'activation', 'product'],
  keys: KEY_WORDS,
  id: ['session'],
  number: ['card', 'cc'],
  num: ['card', 'cc'],
  no: ['card', 'cc'],
  nr: ['card'],
  card: ['credit', 'debit'],
  code: ['security', 'verification', 'reset', 'recovery', 'backup', 'confirmation'],
};
/** What makes a column's name a password column's beyond a secret's name: a stored hash (`pin_hash`, `pwhash`). */
const COLUMN_PARTS = new Set(['hash', 'hashed']);

/** A name's parts in lower case: split at anything but letters and digits and at camel case, trailing digits dropped (`cvv2`). */
export function nameParts(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[^A-Za-z0-9]+/)
    .filter((part) => part !== '')
    .map((part) => part.toLowerCase().replace(/(?<=[a-z])[0-9]+$/, ''));
}

/** The part or parts that make `name` a secret's (`pin`, `api key`), or undefined when it is none. */
export function secretWord(name: string): string | undefined {
  const parts = nameParts(name);
  if (parts.length === 1 && parts[0] === 'key') return 'key';
  for (const [i, part] of parts.entries()) {
    if (SECRET_PARTS.has(part)) return part;
    const ending = SECRET_ENDINGS.find((word) => part.endsWith(word));
    if (ending) return ending;
    if (!NOT_SECRET_BEGINNINGS.some((word) => part.startsWith(word))) {
      const beginning = SECRET_BEGINNINGS.find((word) => part.startsWith(word));
      if (beginning) return beginning;
    }
    if (i > 0 && SECRET_PAIRS[part]?.includes(parts[i - 1]!)) return `${parts[i - 1]} ${part}`;
  }
  return undefined;
}

/** Whether a column is named like one that holds a password, a secret, a token or a hash of one. */
export function passwordLikeColumn(column: string): boolean {
  return secretWord(column) !== undefined || nameParts(column).some((part) => COLUMN_PARTS.has(part) || part.endsWith('hash'));
}

/** The columns a backend checks passwords against: the default tables' `usr.pass_word`, or its own AuthQuery's. */
export function passwordColumns(backend: Backend): ColumnMet[] {
  const columns: ColumnMet[] = [];
  if (backend.defaultTables) columns.push({ table: DEFAULT_USER_TABLES.users, column: DEFAULT_USER_TABLES.password });
  const query = backend.authQuery;
  if (query === null) return columns;
  if (query.passwordColumn !== null) {
    const source = sourceColumn(query.sql, query.passwordColumn);
    if (source) columns.push(source);
  }
  const tokens = namedTokens(query.sql, query.binds);
  for (const column of (tokens && columnsMet(tokens).get('pass')) ?? []) columns.push(column);
  return columns;
}

/** Why a parameter is a secret, or undefined when it is none. */
function secretBecause(name: string, met: readonly ColumnMet[], passwords: readonly ColumnMet[]): string | undefined {
  const word = secretWord(name);
  if (word !== undefined) return `its name holds "${word}"`;
  const same = (a: string | null, b: string | null) => a === null || b === null || a.toLowerCase() === b.toLowerCase();
  const password = met.find(
    (column) => passwordLikeColumn(column.column) || passwords.some((known) => same(known.table, column.table) && same(known.column, column.column)),
  );
  if (password) return `it meets the password column ${password.table === null ? '' : `${password.table}.`}${password.column}`;
  return undefined;
}

/** The columns each parameter of an operation meets in its statements and its list's filters. */
function columnsOf(operation: Operation): Map<string, ColumnMet[]> {
  const all = new Map<string, ColumnMet[]>();
  const add = (found: Map<string, ColumnMet[]>) => {
    for (const [name, columns] of found) all.set(name, [...(all.get(name) ?? []), ...columns]);
  };
  for (const step of operation.steps) {
    if (step.kind !== 'sql') continue;
    const tokens = namedTokens(
      step.sql,
      step.binds.map((bind) => (bind.kind === 'param' ? bind.name : null)),
    );
    if (tokens) add(columnsMet(tokens));
    for (const [name, target] of Object.entries(step.paramTargets)) if (target.kind === 'column') add(new Map([[name, [target]]]));
    for (const filter of (step as SqlStep).list?.filters ?? []) {
      const filtered = namedTokens(
        filter.sql,
        Array.from({ length: filter.uses }, () => filter.param),
      );
      if (filtered) add(columnsMet(filtered));
    }
  }
  return all;
}

/**
 * Marks every secret parameter of the project (`secret` in its spec, and why), once the types are known, and
 * refuses an `audit_params` that names one: the audit never keeps a secret's value, whatever a file says.
 */
export function markSecrets(project: Project, diagnostics: Diagnostics): void {
  for (const backend of project.backends) {
    const passwords = passwordColumns(backend);
    for (const operation of backend.resources.flatMap((resource) => resource.operations)) {
      const met = columnsOf(operation);
      for (const name of operation.params) {
        const known = operation.paramTypes[name];
        const because = known?.secret ? 'it reaches a password argument' : secretBecause(name, met.get(name) ?? [], passwords);
        if (because === undefined) continue;
        operation.paramTypes[name] = { ...(known ?? { kind: 'any', nullable: true }), secret: true, secretBecause: because };
      }
      for (const name of operation.auditParams?.names ?? []) {
        const because = operation.paramTypes[name]?.secretBecause;
        if (because !== undefined) {
          diagnostics.error(
            operation.auditParams!.at,
            `audit_params may not keep the secret "${name}" (${because}): the audit never keeps a secret's value; take it out`,
          );
        }
      }
    }
  }
}

/** What an audited operation's rows keep: the values of its parameters that are no secrets, of those `audit_params` names when it does. */
export function auditKeeps(operation: Operation): string[] {
  const listed = operation.auditParams?.names;
  return operation.params.filter((name) => !operation.paramTypes[name]?.secret && (listed === undefined || listed.includes(name)));
}
