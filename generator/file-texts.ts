import { readFileSync, statSync, writeFileSync } from 'node:fs';

/**
 * The texts of the files a run reads and writes (resources in, modules out),
 * remembered by a long-running process (`npm run dev`) with each file's size
 * and modification time: a file whose stat is unchanged is not read again.
 * With 1,000 resources a one-file change read every resource and every
 * module again, a quarter of its time. A file changed by anyone else (an
 * editor, a hand edit of a generated module) has another stat, and is read
 * (a save within the same tick of a coarse file-system clock, at the same
 * size, would not be: no person saves that fast after a run).
 */
export class FileTexts {
  private readonly known = new Map<string, { text: string; mtimeMs: number; size: number }>();

  /** The file's text, or undefined when there is no such file. */
  read(file: string): string | undefined {
    const stat = statSync(file, { throwIfNoEntry: false });
    if (stat === undefined || !stat.isFile()) {
      this.known.delete(file);
      return undefined;
    }
    const seen = this.known.get(file);
    if (seen !== undefined && seen.mtimeMs === stat.mtimeMs && seen.size === stat.size) return seen.text;
    // Read after the stat: a change in between leaves a newer text under an older stat, which the next run reads again.
    const text = readFileSync(file, 'utf8');
    this.known.set(file, { text, mtimeMs: stat.mtimeMs, size: stat.size });
    return text;
  }

  write(file: string, text: string): void {
    writeFileSync(file, text);
    const stat = statSync(file);
    this.known.set(file, { text, mtimeMs: stat.mtimeMs, size: stat.size });
  }
}
