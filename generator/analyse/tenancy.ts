// STUB (dropped at merge): the real proof engine is written by another helper (sql/terms.ts, sql/blocks.ts and
// this file). This crude stand-in only lets the generator's side of tenants compile and its goldens run.
import { type Token, tokenize, unquote } from '../sql/tokens.js';

export interface TenantFacts {
  column: string;
  tables: Readonly<Record<string, { uniqueOk: boolean }>>;
  views: readonly string[];
}
export interface TenantProblem {
  offset: number;
  message: string;
}

function significant(text: string): Token[] {
  return tokenize(text, []).filter((token) => token.type !== 'space' && token.type !== 'comment');
}
const word = (token: Token | undefined) => (token && (token.type === 'word' || token.type === 'quoted') ? unquote(token) : undefined);
const isWord = (token: Token | undefined, ...words: string[]) => token?.type === 'word' && words.includes(token.text.toLowerCase());

interface Ref {
  table: string;
  alias: string;
  offset: number;
}

/** Every name after from/join/into/update (and a comma in a from list), with its alias: crude. */
function refsOf(tokens: Token[]): Ref[] {
  const refs: Ref[] = [];
  let inFrom = false;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (isWord(token, 'where', 'group', 'order', 'limit', 'having', 'set', 'values', 'on', 'union')) inFrom = false;
    const starts = isWord(token, 'from', 'join', 'into', 'update') || (inFrom && token.text === ',');
    if (!starts) continue;
    if (isWord(token, 'from')) inFrom = true;
    const name = word(tokens[i + 1]);
    if (name === undefined || tokens[i + 1]!.text === '(' || isWord(tokens[i + 1], 'select')) continue;
    let next = i + 2;
    if (isWord(tokens[next], 'as')) next++;
    const alias =
      tokens[next]?.type === 'word' && !isWord(tokens[next], 'where', 'join', 'on', 'set', 'values', 'left', 'inner', 'order', 'limit', 'group')
        ? word(tokens[next])!
        : name;
    refs.push({ table: name.toLowerCase(), alias, offset: tokens[i + 1]!.start });
  }
  return refs;
}

export function namedTables(text: string): string[] | { unread: string } {
  return [...new Set(refsOf(significant(text)).map((ref) => ref.table))].sort();
}

export function proveTenancy(text: string, facts: TenantFacts): TenantProblem[] {
  const tokens = significant(text);
  const flat = tokens.map((token) => token.text.toLowerCase()).join(' ');
  const problems: TenantProblem[] = [];
  const column = facts.column.toLowerCase();
  for (const ref of refsOf(tokens)) {
    if (!(ref.table in facts.tables)) continue;
    const filtered = [ref.alias, ref.table].some((name) => flat.includes(`${name.toLowerCase()} . ${column} = $tenant`)) || flat.includes(`( ${column}`);
    if (!filtered || / or /.test(flat)) {
      problems.push({
        offset: ref.offset,
        message: `${ref.table} ${ref.alias} is not kept to the caller's tenant: write ${ref.alias}.${facts.column} = $tenant in its block's where or its join's on`,
      });
    }
  }
  return problems;
}
