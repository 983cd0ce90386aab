import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The text of one section of a documentation page, from its heading to the next heading of the same or a higher
 * level, so that a test runs a page's blocks as a reader finds them. A heading that is not there is an error naming
 * the page: a moved or renamed section must take its test along.
 */
export function docsSection(file: string, heading: string, root = '.'): string {
  const text = readFileSync(path.join(root, file), 'utf8');
  const lines = text.split('\n');
  const level = /^#+/.exec(heading)?.[0].length ?? 0;
  const start = lines.findIndex((line) => line === heading);
  if (level === 0 || start < 0) throw new Error(`${file} has no heading "${heading}"`);
  let end = start + 1;
  let fence = false;
  for (; end < lines.length; end++) {
    if (lines[end]!.startsWith('```')) fence = !fence;
    const next = fence ? undefined : /^(#+) /.exec(lines[end]!);
    if (next && next[1]!.length <= level) break;
  }
  return lines.slice(start, end).join('\n');
}
