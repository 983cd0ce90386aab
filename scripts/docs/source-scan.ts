import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A small reader of TypeScript sources for the reference's scans (statuses, refusal reasons, log messages,
 * metrics): tokens without comments, so that a call's arguments and the literals in them can be found without
 * loading a compiler. It knows strings, template literals (each `${...}` read as `*`), regular expression
 * literals (so that a quote inside one is not taken for a string), and brackets; nothing of types or scopes.
 */
export interface Token {
  kind: 'string' | 'word' | 'punct' | 'number' | 'regex';
  /** A string's value (a template's with each `${expression}` as `*`), else the text. */
  text: string;
  /** 1-based line of the token's start. */
  line: number;
}

export interface Source {
  /** Project-relative POSIX path. */
  path: string;
  tokens: Token[];
}

/** Every `.ts` file under the given project-relative folders or files, sorted, declarations and the console's page left out. */
export function readSources(roots: readonly string[]): Source[] {
  const paths: string[] = [];
  for (const root of roots) {
    if (root.endsWith('.ts')) paths.push(root);
    else
      for (const entry of readdirSync(root, { recursive: true }).map(String))
        if (entry.endsWith('.ts') && !entry.endsWith('.d.ts') && !entry.startsWith('ui/')) paths.push(join(root, entry).split('\\').join('/'));
  }
  return [...new Set(paths)].sort().map((path) => ({ path, tokens: lex(readFileSync(path, 'utf8')) }));
}

const PUNCT_BEFORE_REGEX = new Set(['(', ',', '=', ':', '[', '!', '&', '|', '?', '{', '}', ';', '&&', '||', '??', 'return', '=>']);

export function lex(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  let line = 1;
  const push = (kind: Token['kind'], value: string, at: number) => tokens.push({ kind, text: value, line: at });
  while (i < text.length) {
    const c = text[i]!;
    if (c === '\n') {
      line++;
      i++;
    } else if (/\s/.test(c)) i++;
    else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      const stop = end < 0 ? text.length : end + 2;
      line += countLines(text.slice(i, stop));
      i = stop;
    } else if (c === "'" || c === '"') {
      const start = line;
      let value = '';
      i++;
      while (i < text.length && text[i] !== c) {
        if (text[i] === '\\') {
          value += escapedChar(text[i + 1]!);
          i += 2;
        } else value += text[i++];
      }
      i++;
      push('string', value, start);
    } else if (c === '`') {
      const start = line;
      const [value, end] = readTemplate(text, i + 1);
      line += countLines(text.slice(i, end));
      i = end;
      push('string', value, start);
    } else if (c === '/' && isRegexStart(tokens.at(-1))) {
      const start = i;
      let inClass = false;
      i++;
      while (i < text.length && (inClass || text[i] !== '/') && text[i] !== '\n') {
        if (text[i] === '\\') i++;
        else if (text[i] === '[') inClass = true;
        else if (text[i] === ']') inClass = false;
        i++;
      }
      i++;
      while (/[a-z]/.test(text[i] ?? '')) i++;
      push('regex', text.slice(start, i), line);
    } else if (/[A-Za-z_$]/.test(c)) {
      const start = i;
      while (/[A-Za-z0-9_$]/.test(text[i] ?? '')) i++;
      push('word', text.slice(start, i), line);
    } else if (/[0-9]/.test(c)) {
      const start = i;
      while (/[0-9_.a-zA-Z]/.test(text[i] ?? '')) i++;
      push('number', text.slice(start, i).replace(/_/g, ''), line);
    } else {
      const two = text.slice(i, i + 2);
      const op = ['=>', '&&', '||', '??', '?.'].includes(two) ? two : c;
      i += op.length;
      push('punct', op, line);
    }
  }
  return tokens;
}

function isRegexStart(previous: Token | undefined): boolean {
  if (previous === undefined) return true;
  if (previous.kind === 'punct') return PUNCT_BEFORE_REGEX.has(previous.text);
  return previous.kind === 'word' && PUNCT_BEFORE_REGEX.has(previous.text);
}

function countLines(text: string): number {
  return text.split('\n').length - 1;
}

function escapedChar(c: string): string {
  return c === 'n' ? '\n' : c === 't' ? '\t' : c;
}

/** A template literal from after its backtick: its value with each `${expression}` as `*`, and where it ends. */
function readTemplate(text: string, from: number): [string, number] {
  let value = '';
  let i = from;
  while (i < text.length && text[i] !== '`') {
    if (text[i] === '\\') {
      value += escapedChar(text[i + 1]!);
      i += 2;
    } else if (text[i] === '$' && text[i + 1] === '{') {
      let depth = 1;
      const start = i + 2;
      i += 2;
      while (i < text.length && depth > 0) {
        if (text[i] === '`') i = readTemplate(text, i + 1)[1] - 1;
        else if (text[i] === '{') depth++;
        else if (text[i] === '}') depth--;
        i++;
      }
      // A value put in: `*`, one for a run of them.
      if (!value.endsWith('*')) value += '*';
    } else value += text[i++];
  }
  return [value, i + 1];
}

/** The arguments of the call whose `(` is at `open`: each a list of tokens, split at the commas outside brackets. */
export function callArguments(tokens: readonly Token[], open: number): Token[][] {
  const args: Token[][] = [[]];
  let depth = 0;
  for (let i = open + 1; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token.kind === 'punct' && '([{'.includes(token.text)) depth++;
    if (token.kind === 'punct' && ')]}'.includes(token.text)) {
      if (depth === 0) break;
      depth--;
    }
    if (depth === 0 && token.kind === 'punct' && token.text === ',') args.push([]);
    else args.at(-1)!.push(token);
  }
  return args.at(-1)!.length === 0 ? args.slice(0, -1) : args;
}

/** The string literals among tokens (a condition's both answers, a default after `??`). */
export function literals(tokens: readonly Token[] | undefined): string[] {
  return (tokens ?? []).filter((token) => token.kind === 'string').map((token) => token.text);
}

/** Each place where `name(` is called (or constructed with new), as the index of its `(`; `this.name(` and `name<T>(` too. */
export function calls(tokens: readonly Token[], name: string): number[] {
  const found: number[] = [];
  for (let i = 1; i < tokens.length; i++) {
    if (tokens[i]!.kind !== 'word' || tokens[i]!.text !== name) continue;
    // Not its own declaration: `function name(`.
    if (tokens[i - 1]!.kind === 'word' && tokens[i - 1]!.text === 'function') continue;
    let open = i + 1;
    if (tokens[open]?.text === '<') {
      // Type arguments: `rule<Draft, 'key'>(`.
      let depth = 0;
      for (; open < tokens.length; open++) {
        if (tokens[open]!.text === '<') depth++;
        else if (tokens[open]!.text === '>' && --depth === 0) break;
        else if (tokens[open]!.text === ';' || tokens[open]!.text === '{') break;
      }
      open++;
    }
    if (tokens[open]?.kind === 'punct' && tokens[open]!.text === '(') found.push(open);
  }
  return found;
}
