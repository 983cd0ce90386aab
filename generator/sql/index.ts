/**
 * A SQL-aware scan of one statement, enough to find placeholders, the kind of
 * statement and the names of its result columns. It is not a SQL parser: the
 * database remains the judge of the statement itself.
 */
import { resultColumns } from './columns.js';
import { findParamTargets } from './targets.js';
import { type Placeholder, type ScannedSql, type SqlProblem, tokenize } from './tokens.js';

export type { ParamTarget, Placeholder, ScannedSql, SqlProblem, Token } from './tokens.js';
export { tokenize } from './tokens.js';

const READ_STARTS = new Set(['select', 'with', 'show', 'describe', 'desc', 'explain', 'values', 'table']);

export function scanSql(text: string): ScannedSql {
  const problems: SqlProblem[] = [];
  const tokens = tokenize(text, problems);
  const significant = tokens.filter((token) => token.type !== 'space' && token.type !== 'comment');

  // One statement per step: a `;` may only end the text.
  let end = significant.length;
  if (significant.at(-1)?.text === ';' && significant.at(-1)?.type === 'punct') end--;
  for (const token of significant.slice(0, end)) {
    if (token.type === 'punct' && token.text === ';') {
      problems.push({ offset: token.start, message: 'one statement per Sql step: split it into several steps' });
    }
    if (token.type === 'punct' && token.text === '?') {
      problems.push({ offset: token.start, message: "use $name parameters, not '?'" });
    }
  }
  const lastKept = significant[end - 1];
  const cut = lastKept ? lastKept.start + lastKept.text.length : 0;

  const placeholders: Placeholder[] = [];
  const placeholderOffsets: number[] = [];
  let sql = '';
  for (const token of tokens) {
    if (token.start >= cut) break;
    if (token.placeholder) {
      placeholders.push(token.placeholder);
      placeholderOffsets.push(token.start);
      sql += '?';
    } else {
      sql += token.text;
    }
  }
  const first = significant.find((token) => token.text !== '(');
  const statement = first && first.type === 'word' && READ_STARTS.has(first.text.toLowerCase()) ? 'read' : 'write';
  if (!first) problems.push({ offset: 0, message: 'the statement is empty' });
  const columns = statement === 'read' ? resultColumns(text, significant.slice(0, end), problems) : null;
  const paramTargets = findParamTargets(significant.slice(0, end));
  return { sql: dedent(sql), placeholders, placeholderOffsets, paramTargets, statement, columns, problems };
}

/**
 * Removes the indentation the XML file gave the statement, keeping its line
 * structure. Only spaces and tabs are layout: the parser has already made
 * every line end a line feed, so a carriage return or any other character
 * left is the statement's own (written as a reference, in a string), kept.
 */
function dedent(sql: string): string {
  const lines = sql.split('\n');
  const blank = (line: string) => /^[ \t]*$/.test(line);
  while (lines.length > 0 && blank(lines[0]!)) lines.shift();
  while (lines.length > 0 && blank(lines.at(-1)!)) lines.pop();
  const indents = lines
    .slice(1)
    .filter((line) => !blank(line))
    .map((line) => /^[ \t]*/.exec(line)![0].length);
  const indent = indents.length > 0 ? Math.min(...indents) : 0;
  return lines.map((line, i) => (i === 0 ? line.replace(/^[ \t]+/, '') : line.slice(indent)).replace(/[ \t]+$/, '')).join('\n');
}
