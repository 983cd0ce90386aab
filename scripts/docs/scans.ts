import { callArguments, calls, literals, type Source, type Token } from './source-scan.js';

/**
 * What the server's sources say they answer, write and count, found by reading them (source-scan.ts): the
 * reference's tests hold the runtime's own lists (runtime/statuses.ts, runtime/log-lines.ts) to these, and the
 * metrics page is made from them. Each finding keeps where it was seen, for a failing test to name.
 */
export type Found = Map<string, string[]>;

function note(found: Found, key: string, source: Source, token: Token | undefined): void {
  const places = found.get(key) ?? [];
  places.push(`${source.path}:${token?.line ?? 0}`);
  found.set(key, places);
}

const is = (token: Token | undefined, kind: Token['kind'], text?: string) => token?.kind === kind && (text === undefined || token.text === text);

/** The error statuses (400 and up) the sources answer: HttpErrors, forbidden(), badRequest(), a status set or put in a body, a STATUS table's. */
export function scanStatuses(sources: readonly Source[]): Found {
  const found: Found = new Map();
  for (const source of sources) {
    const { tokens } = source;
    for (const open of calls(tokens, 'HttpError')) {
      const first = callArguments(tokens, open)[0];
      if (first?.length === 1 && is(first[0], 'number')) add(first[0]!);
    }
    for (const open of calls(tokens, 'forbidden')) note(found, '403', source, tokens[open]);
    for (const open of calls(tokens, 'badRequest')) note(found, '400', source, tokens[open]);
    for (let i = 0; i + 2 < tokens.length; i++) {
      // const STATUS = { invalid: 400, changed: 409 }: the statuses of outcomes, answered as HttpError(STATUS[outcome]).
      if (
        is(tokens[i], 'word') &&
        /STATUS$/.test(tokens[i]!.text) &&
        is(tokens[i - 1], 'word', 'const') &&
        is(tokens[i + 1], 'punct', '=') &&
        is(tokens[i + 2], 'punct', '{')
      ) {
        for (let j = i + 3; j < tokens.length && !is(tokens[j], 'punct', '}'); j++)
          if (is(tokens[j], 'number') && is(tokens[j - 1], 'punct', ':')) add(tokens[j]!);
      }
      // ctx.status = 404, or a choice of statuses; { message, status: 404 }.
      if (is(tokens[i], 'word', 'status') && is(tokens[i - 1], 'punct', '.') && is(tokens[i - 2], 'word', 'ctx') && is(tokens[i + 1], 'punct', '=')) {
        for (let j = i + 2; j < tokens.length && !is(tokens[j], 'punct', ';'); j++) if (is(tokens[j], 'number')) add(tokens[j]!);
      }
      if (
        is(tokens[i], 'word', 'status') &&
        !is(tokens[i - 1], 'punct', '.') &&
        is(tokens[i + 1], 'punct', ':') &&
        is(tokens[i + 2], 'number') &&
        inErrorBody(tokens, i)
      )
        add(tokens[i + 2]!);
    }
    function add(token: Token): void {
      if (/^[45][0-9][0-9]$/.test(token.text)) note(found, token.text, source, token);
    }
  }
  return found;
}

/** Whether the `status` field at `at` is in an object that has a `message` too (an error body, not a type's). */
function inErrorBody(tokens: readonly Token[], at: number): boolean {
  let depth = 0;
  for (let i = at - 1; i >= 0; i--) {
    const token = tokens[i]!;
    if (token.kind === 'punct' && ')]}'.includes(token.text)) depth++;
    if (token.kind === 'punct' && '([{'.includes(token.text)) {
      if (depth === 0) return false;
      depth--;
    }
    if (depth === 0 && is(token, 'word', 'message') && is(tokens[i + 1], 'punct', ':')) return true;
  }
  return false;
}

/** The callables everywhere that take a refusal's reason, and which argument it is. */
const REASON_TAKERS: Record<string, number> = { HttpError: 3, forbidden: 0, DatabaseFault: 1 };

/**
 * The reason codes the sources give a refusal or a database fault: the reason argument of HttpError, forbidden(),
 * DatabaseFault and of each local function (or function type) with a parameter named `reason`; a `reason:` or
 * `refused:` field; a REASONS table's values; the middle of a `[description, reason, lasting]` answer.
 */
export function scanReasons(sources: readonly Source[]): Found {
  const found: Found = new Map();
  for (const source of sources) {
    const { tokens } = source;
    const takers = { ...REASON_TAKERS, ...localReasonTakers(tokens) };
    for (const [name, index] of Object.entries(takers)) {
      for (const open of calls(tokens, name)) {
        // A declaration's parameters, not a call: `(description: string, reason: string) =>`.
        const args = callArguments(tokens, open);
        if (args.some((arg) => is(arg[1], 'punct', ':') && is(arg[0], 'word'))) continue;
        for (const value of literals(args[index])) add(value, tokens[open]);
      }
    }
    for (let i = 1; i + 1 < tokens.length; i++) {
      const token = tokens[i]!;
      if ((is(token, 'word', 'reason') || is(token, 'word', 'refused')) && !is(tokens[i - 1], 'punct', '.')) {
        let j = i + 1;
        if (is(tokens[j], 'punct', '?')) j++;
        if (!is(tokens[j], 'punct', ':')) continue;
        for (const value of literals(expression(tokens, j + 1))) add(value, token);
      }
      // const REASONS: Record<..., string> = { expired: 'expired', ... }
      if (is(token, 'word') && /REASONS$/.test(token.text) && is(tokens[i - 1], 'word', 'const')) {
        let j = i;
        while (j < tokens.length && !is(tokens[j], 'punct', '{')) j++;
        for (let k = j + 1; k < tokens.length && !is(tokens[k], 'punct', '}'); k++)
          if (is(tokens[k - 1], 'punct', ':') && is(tokens[k], 'string')) add(tokens[k]!.text, tokens[k]);
      }
      // return ['token expired', 'expired', true]
      if (
        is(token, 'punct', '[') &&
        is(tokens[i + 1], 'string') &&
        is(tokens[i + 2], 'punct', ',') &&
        is(tokens[i + 3], 'string') &&
        is(tokens[i + 4], 'punct', ',') &&
        (is(tokens[i + 5], 'word', 'true') || is(tokens[i + 5], 'word', 'false')) &&
        is(tokens[i + 6], 'punct', ']')
      )
        add(tokens[i + 3]!.text, tokens[i + 3]);
    }
    function add(value: string, token: Token | undefined): void {
      if (/^[a-z]+(_[a-z]+)*$/.test(value)) note(found, value, source, token);
    }
  }
  return found;
}

/** `const name = (a, reason) =>`, `function name(a, reason)`, `type Name = (a: string, reason: string) =>` in one file. */
function localReasonTakers(tokens: readonly Token[]): Record<string, number> {
  const takers: Record<string, number> = {};
  for (let i = 0; i + 2 < tokens.length; i++) {
    let name: string | undefined;
    let open: number | undefined;
    if (is(tokens[i], 'word', 'function') && is(tokens[i + 1], 'word') && is(tokens[i + 2], 'punct', '(')) [name, open] = [tokens[i + 1]!.text, i + 2];
    if (
      (is(tokens[i], 'word', 'const') || is(tokens[i], 'word', 'type')) &&
      is(tokens[i + 1], 'word') &&
      is(tokens[i + 2], 'punct', '=') &&
      is(tokens[i + 3], 'punct', '(')
    )
      [name, open] = [tokens[i + 1]!.text, i + 3];
    if (name === undefined || open === undefined) continue;
    const index = callArguments(tokens, open).findIndex((param) => is(param[0], 'word', 'reason'));
    if (index < 0) continue;
    takers[name] = index;
    // A function type is held by a field of the lower-case name: `private readonly refuse: Refuse`.
    takers[name[0]!.toLowerCase() + name.slice(1)] = index;
  }
  return takers;
}

/** The tokens of one expression from `from`, up to the `,`, `;` or closing bracket that ends it. */
function expression(tokens: readonly Token[], from: number): Token[] {
  const taken: Token[] = [];
  let depth = 0;
  for (let i = from; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token.kind === 'punct' && '([{'.includes(token.text)) depth++;
    if (token.kind === 'punct' && ')]}'.includes(token.text)) {
      if (depth === 0) break;
      depth--;
    }
    if (depth === 0 && token.kind === 'punct' && (token.text === ',' || token.text === ';')) break;
    taken.push(token);
  }
  return taken;
}

export interface LogCall {
  level: string;
  message: string;
}

const LEVELS = new Set(['trace', 'debug', 'info', 'warn', 'error', 'fatal']);

/** Every message written through a logger (or a helper of the same name): `x.warn({...}, 'message')`, keyed `level message`. */
export function scanLogMessages(sources: readonly Source[]): Found {
  const found: Found = new Map();
  for (const source of sources) {
    const { tokens } = source;
    for (let i = 2; i < tokens.length; i++) {
      const name = tokens[i - 1]!;
      if (
        !is(tokens[i], 'punct', '(') ||
        name.kind !== 'word' ||
        !LEVELS.has(name.text) ||
        !(is(tokens[i - 2], 'punct', '.') || is(tokens[i - 2], 'punct', '?.'))
      )
        continue;
      const args = callArguments(tokens, i);
      // The message is the last argument (pino's); a helper's extra fields may follow it: the last with a text.
      const withText = [...args].reverse().find((arg) => literals(arg).length > 0 && !is(arg[0], 'punct', '{'));
      for (const message of literals(withText)) note(found, `${name.text} ${message}`, source, name);
    }
  }
  return found;
}

export interface MetricRegistration {
  name: string;
  type: 'counter' | 'gauge' | 'histogram';
  help: string;
  labels: string[];
  /** Where it is registered, `path:line`. */
  at: string;
}

/** prom-client registrations: `new Counter|Gauge|Histogram({ name, help, labelNames })`, `registerCustom(registry, name, help, type)`, a `gauge(name, help)` helper. */
export function scanMetrics(sources: readonly Source[]): MetricRegistration[] {
  const metrics: MetricRegistration[] = [];
  for (const source of sources) {
    const { tokens } = source;
    const at = (token: Token | undefined) => `${source.path}:${token?.line ?? 0}`;
    for (const [ctor, type] of [
      ['Counter', 'counter'],
      ['Gauge', 'gauge'],
      ['Histogram', 'histogram'],
    ] as const) {
      for (const open of calls(tokens, ctor)) {
        if (!is(tokens[open - 2], 'word', 'new')) continue;
        const object = callArguments(tokens, open)[0] ?? [];
        const field = (key: string) => {
          const index = object.findIndex((token, i) => is(token, 'word', key) && is(object[i + 1], 'punct', ':'));
          return index < 0 ? undefined : expression(object, index + 2);
        };
        const name = literals(field('name'))[0];
        // `name,` (a helper's parameter): the helper's calls are its registrations.
        if (name === undefined) continue;
        metrics.push({ name, type, help: literals(field('help')).join(''), labels: literals(field('labelNames')), at: at(tokens[open]) });
      }
    }
    for (const open of calls(tokens, 'registerCustom')) {
      const args = callArguments(tokens, open);
      const [name, help, type] = [literals(args[1])[0], literals(args[2]).join(''), literals(args[3])[0]];
      if (name === undefined || (type !== 'counter' && type !== 'histogram')) continue;
      metrics.push({ name, type, help, labels: [], at: at(tokens[open]) });
    }
    for (const open of calls(tokens, 'gauge')) {
      const args = callArguments(tokens, open);
      const name = literals(args[0])[0];
      if (name === undefined || !name.startsWith('xmlrest_')) continue;
      metrics.push({ name, type: 'gauge', help: literals(args[1]).join(''), labels: [], at: at(tokens[open]) });
    }
  }
  return metrics;
}
