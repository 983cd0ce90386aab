import { readStatement } from './blocks.js';
import { type SqlProblem, type Token, tokenize } from './tokens.js';

/**
 * A versioned write's three statements (docs/internals/contract.md §15), written from the step's text as written
 * (its `$` placeholders kept, so that the caller scans them as it scans any step, and the tenant proof reads them):
 * - `unconditional`: the update with `, <q>.<column> = <q>.<column> + 1` after its set list (a delete as written);
 * - `conditional`: the same with its where wrapped, `where (<where>) and <q>.<column> = cast($<EXPECTED> as unsigned)` (compared as an integer: a string against a bigint column would be compared as a double, exact only to 2^53);
 * - `probe`: `select <q>.<column> from <table> where <the where as written> lock in share mode`.
 * `<q>` is the table's alias, else its name. The where is the statement's last clause (an `order by` or `limit` is
 * refused), so the conditional's extra placeholder is its last, and the probe's are the step's last `whereBinds`.
 */

/** The placeholder the conditional statement compares the expected version with: the last `?` of its text. */
export const EXPECTED = 'xmlrest_expected_version';

export interface VersionedTexts {
  unconditional: string;
  conditional: string;
  probe: string;
  /** How many of the step's placeholders stand in its where: its last ones, the probe's binds. */
  whereBinds: number;
}

/** A problem at an offset of the step's text. */
export type VersionedProblem = SqlProblem;

const SIMPLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A name as SQL text: bare when it is a plain name, else quoted in backticks. */
function sqlName(name: string): string {
  return SIMPLE_NAME.test(name) ? name : `\`${name.replaceAll('`', '``')}\``;
}

export function versionedTexts(text: string, column: string): VersionedTexts | VersionedProblem {
  const problems: SqlProblem[] = [];
  const all = tokenize(text, problems);
  if (problems.length > 0) return problems[0]!;
  const tokens = all.filter((token) => token.type !== 'space' && token.type !== 'comment');
  const end = (token: Token) => token.start + token.text.length;
  const statement = readStatement(tokens);
  if ('unread' in statement)
    return { offset: statement.offset, message: `a versioned write is one update or delete the reader knows, not ${statement.unread}` };
  const block = statement.blocks[0];
  if (block === undefined || (block.kind !== 'update' && block.kind !== 'delete')) {
    return { offset: tokens[0]?.start ?? 0, message: 'a versioned write is an update or a delete' };
  }
  const target = block.kind === 'update' ? block.refs : block.deletes;
  if (block.refs.length !== 1 || target.length !== 1) {
    return { offset: block.offset, message: 'a versioned write changes one table: no join, no second table' };
  }
  const ref = block.refs[0]!;
  // `order by` and `limit` at the statement's own depth: they would follow the where, and change which row it is.
  let depth = 0;
  for (const [k, token] of tokens.entries()) {
    if (token.type === 'punct' && token.text === '(') depth++;
    else if (token.type === 'punct' && token.text === ')') depth--;
    else if (depth === 0 && token.type === 'word' && tokens[k - 1]?.text !== '.') {
      const word = token.text.toLowerCase();
      if (word === 'limit' || (word === 'order' && tokens[k + 1]?.text.toLowerCase() === 'by')) {
        return { offset: token.start, message: `a versioned write names its row by its where alone, without ${word === 'limit' ? 'limit' : 'order by'}` };
      }
    }
  }
  if (block.where === null || block.where.tokens.length === 0) {
    return { offset: block.offset, message: 'a versioned write names its row: give the statement a where' };
  }
  if (block.sets.some((set) => set.column.toLowerCase() === column.toLowerCase())) {
    const set = block.sets.find((item) => item.column.toLowerCase() === column.toLowerCase())!;
    return { offset: set.offset, message: `the statement sets the version column ${column} itself: the generator moves it on` };
  }
  const whereTokens = block.where.tokens;
  const whereStart = whereTokens[0]!.start;
  const whereEnd = end(whereTokens.at(-1)!);
  const where = text.slice(whereStart, whereEnd);
  const qualified = `${sqlName(ref.alias ?? ref.name)}.${sqlName(column)}`;

  // The table factor as written (`orders o`, `shop.orders as o`): from its name to the keyword after it.
  const first = tokens.findIndex((token) => token.start === ref.offset);
  const after = block.kind === 'update' ? 'set' : 'where';
  let last = first;
  while (tokens[last + 1] !== undefined && tokens[last + 1]!.text.toLowerCase() !== after) last++;
  const factor = text.slice(ref.offset, end(tokens[last]!));

  // The set list's end: after its last assignment's value.
  const lastSet = block.sets.at(-1);
  const setEnd = lastSet === undefined ? -1 : end(lastSet.value.at(-1)!);
  const moved = setEnd === -1 ? text : `${text.slice(0, setEnd)}, ${qualified} = ${qualified} + 1${text.slice(setEnd)}`;
  const shift = setEnd === -1 ? 0 : moved.length - text.length;
  const conditional = `${moved.slice(0, whereStart + shift)}(${where}) and ${qualified} = cast($${EXPECTED} as unsigned)${moved.slice(whereEnd + shift)}`;

  // The probe keeps the text from its where on, so that its lines keep their layout.
  const whereKeyword = tokens[tokens.findIndex((token) => token.start === whereStart) - 1]!;
  const beforeWhere = tokens.filter((token) => token.start < whereKeyword.start).at(-1)!;
  const statementStart = tokens[0]!.start;
  // A locking read: the row's version as committed now, not as an earlier read of the transaction saw it.
  const probe = `${text.slice(0, statementStart)}select ${qualified} from ${factor}${text.slice(end(beforeWhere), whereEnd)} lock in share mode`;
  const whereBinds = tokens.filter((token) => token.type === 'placeholder' && token.start >= whereStart && token.start < whereEnd).length;
  return { unconditional: moved, conditional, probe, whereBinds };
}
