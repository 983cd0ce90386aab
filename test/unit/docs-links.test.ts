import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * A reader follows every link of README.md and docs/ to where it says (issue 42): each relative link names a file
 * that exists, and each #anchor a heading of that page, as GitHub makes heading anchors. Every page of docs/ links
 * back to its table of contents, docs/index.md.
 */

/** Pages other work adds (issue 42's reference and operations runbooks): links into them wait for that merge. */
const EXPECTED_AFTER_MERGE: string[] = [];

/** Pages of docs/ written before this table of contents, or by that other work: not held to link back to it. */
const NOT_HELD_TO_LINK_BACK = ['docs/index.md', ...EXPECTED_AFTER_MERGE];

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) return markdownFiles(file);
    return entry.name.endsWith('.md') ? [file] : [];
  });
}

const pages = ['README.md', ...markdownFiles('docs')];

/** The page's prose: fenced blocks and inline code spans left out, since neither holds links. */
function prose(text: string): string {
  let fence = false;
  return text
    .split('\n')
    .filter((line) => {
      if (line.startsWith('```')) fence = !fence;
      return !fence && !line.startsWith('```');
    })
    .join('\n')
    .replace(/`[^`\n]*`/g, '');
}

/** The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  let fence = false;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.startsWith('```')) fence = !fence;
    const heading = fence ? undefined : /^#{1,6} (.*)$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const slug = heading
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    result.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return result;
}

interface Link {
  page: string;
  href: string;
  /** The file it names, from the repository's root; the page itself for a bare #anchor. */
  target: string;
  anchor: string | undefined;
}

function links(page: string): Link[] {
  return [...prose(readFileSync(page, 'utf8')).matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1]!)
    .filter((href) => !/^[a-z][a-z0-9+.-]*:/i.test(href))
    .map((href) => {
      const [file, anchor] = href.split('#') as [string, string | undefined];
      const target = file === '' ? page : path.posix.normalize(path.posix.join(path.posix.dirname(page), file));
      return { page, href, target, anchor };
    });
}

const all = pages.flatMap(links);
const afterMerge = (link: Link) =>
  EXPECTED_AFTER_MERGE.some((expected) => link.target === expected || (expected.endsWith('/') && link.target.startsWith(expected)));

describe('the links of README.md and docs/', () => {
  it('finds pages and links to check', () => {
    expect(pages.length).toBeGreaterThan(15);
    expect(all.length).toBeGreaterThan(100);
  });

  it('names files that exist', () => {
    const broken = all.filter((link) => !afterMerge(link) && !existsSync(link.target)).map((link) => `${link.page}: ${link.href}`);
    expect(broken).toEqual([]);
  });

  it('names headings that exist', () => {
    const broken = all
      .filter((link) => link.anchor !== undefined && !afterMerge(link) && link.target.endsWith('.md') && existsSync(link.target))
      .filter((link) => !anchors(link.target).has(link.anchor!))
      .map((link) => `${link.page}: ${link.href}`);
    expect(broken).toEqual([]);
  });

  it('lead back to the table of contents from every page of docs/', () => {
    const held = pages.filter(
      (page) => page.startsWith('docs/') && !NOT_HELD_TO_LINK_BACK.some((other) => page === other || (other.endsWith('/') && page.startsWith(other))),
    );
    const lost = held.filter((page) => !links(page).some((link) => link.target === 'docs/index.md'));
    expect(lost).toEqual([]);
  });

  it('waits only for the pages other work adds', () => {
    // A link into a page expected after the merge is allowed to dangle; once that page exists, it is checked above.
    const waiting = [...new Set(all.filter((link) => afterMerge(link) && !existsSync(link.target)).map((link) => link.target))];
    for (const target of waiting) expect(EXPECTED_AFTER_MERGE.some((expected) => target === expected || target.startsWith(expected))).toBe(true);
  });
});
