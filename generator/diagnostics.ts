import { escapeUnprintable } from './unprintable.js';

/** A place in a source file; lines and columns count from 1. */
export interface SourceLocation {
  file: string;
  line: number;
  col: number;
}

/**
 * Every problem of a run, collected rather than thrown, so that one run
 * reports them all (sqlc's printFileErr). Each reads
 * `resources/shop/orders.xml:12:5: step "load" uses unknown parameter "id"`.
 */
export class Diagnostics {
  private readonly problems: { at: SourceLocation; message: string }[] = [];
  /** What may be meant but is likely a mistake (a lint): reported, and an error only with `--strict`. */
  private readonly cautions: { at: SourceLocation; message: string }[] = [];

  error(at: SourceLocation, message: string): void {
    this.problems.push({ at, message });
  }

  warn(at: SourceLocation, message: string): void {
    this.cautions.push({ at, message });
  }

  get count(): number {
    return this.problems.length;
  }

  /**
   * Sorted by file, line and column, so that output is stable. A message quotes what the file holds: a control
   * character in it must not reach the terminal as it is, nor a line feed split the line.
   */
  lines(): string[] {
    return sorted(this.problems);
  }

  /** The warnings, as `lines()` gives the errors: `file:line:col: warning: ...`. */
  warnings(): string[] {
    return sorted(this.cautions.map(({ at, message }) => ({ at, message: `warning: ${message}` })));
  }
}

function sorted(problems: { at: SourceLocation; message: string }[]): string[] {
  return [...problems]
    .sort((a, b) => (a.at.file < b.at.file ? -1 : a.at.file > b.at.file ? 1 : a.at.line - b.at.line || a.at.col - b.at.col))
    .map(({ at, message }) => escapeUnprintable(`${at.file}:${at.line}:${at.col}: ${message}`));
}

/** Maps character offsets in one file's text to line and column. */
export class LineMap {
  private readonly starts: number[] = [0];

  constructor(
    readonly file: string,
    text: string,
  ) {
    for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) this.starts.push(i + 1);
  }

  at(offset: number): SourceLocation {
    let low = 0;
    let high = this.starts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (this.starts[mid]! <= offset) low = mid;
      else high = mid - 1;
    }
    return { file: this.file, line: low + 1, col: offset - this.starts[low]! + 1 };
  }
}
