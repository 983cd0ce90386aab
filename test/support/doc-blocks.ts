import { readFileSync } from 'node:fs';

/**
 * A documentation page's shell blocks, as test/integration/guide-blocks.test.ts runs them: each ```sh block's
 * commands and what each must print, and the blocks a marker keeps from running. The rules (also at the top of that
 * test, for the pages' authors):
 *
 * - A command is a line that is neither blank nor a `#` comment, with the lines it continues onto (a line ending in
 *   `\`).
 * - What it must print: the `# ` lines right under it (no blank line between), and its own trailing comment when
 *   that begins with a status or a JSON value (`curl ... # 403`); any other comment is prose.
 * - An expectation is an optional HTTP status (three digits: the status of the command's last curl), then an optional
 *   text, which must appear within one line of what the command printed (stdout and stderr): `...` stands for any run
 *   of characters, everything else is literal. A comma right after the status begins prose (`# 403, no credentials`).
 * - A ```sh block that is not to run as written has, on the line before its fence, `<!-- not run: REASON -->`, or
 *   `<!-- run by test/integration/NAME.test.ts -->` when another test runs it.
 */
export interface Expectation {
  /** The line as written, for the failure's message. */
  written: string;
  status: number | undefined;
  /** Matches the text within one line; undefined when the line gives a status only. */
  text: RegExp | undefined;
}

export interface Command {
  text: string;
  expect: Expectation[];
}

export interface Block {
  /** The line the fence opens on (1-based) and the block's first line, to name it in a failure. */
  line: number;
  first: string;
  commands: Command[];
  /** Why it is not run here: the marker's text after `not run:` or `run by`, undefined when it runs. */
  skipped: { kind: 'not run' | 'run by'; reason: string } | undefined;
}

const MARKER = /^<!-- (not run|run by):? (.+?) -->$/;
const STATUS = /^([1-5]\d\d)(?=$|[ ,])/;

/** The pattern of an expectation's text: `...` any run of characters on one line, the rest literal. */
function pattern(text: string): RegExp {
  const escaped = text.split('...').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(escaped.join('[^\\n]*?'));
}

export function expectation(written: string): Expectation {
  const status = STATUS.exec(written)?.[1];
  // After a status, a comma begins prose (`403, no credentials`); a space begins the text to find.
  const after = status ? written.slice(status.length) : written;
  const rest = after.startsWith(',') ? '' : after.trim();
  return { written, status: status ? Number(status) : undefined, text: rest === '' ? undefined : pattern(rest) };
}

/** A command's trailing comment, when it is an expectation (a status or a JSON value), else undefined. */
function trailing(line: string): string | undefined {
  // The last ` # ` outside quotes is good enough for the pages' commands: none has one inside a quoted word.
  const at = line.lastIndexOf(' # ');
  if (at < 0) return undefined;
  const comment = line.slice(at + 3).trim();
  return STATUS.test(comment) || /^[{[]/.test(comment) ? comment : undefined;
}

function commandsOf(lines: string[]): Command[] {
  const commands: Command[] = [];
  let current: Command | undefined;
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!;
    if (line.trim() === '') {
      current = undefined;
      continue;
    }
    if (line.startsWith('#')) {
      if (current) current.expect.push(expectation(line.replace(/^#\s?/, '')));
      continue;
    }
    let text = line;
    while (text.endsWith('\\') && index + 1 < lines.length) text += `\n${lines[++index]!}`;
    const own = trailing(text.split('\n').at(-1)!);
    current = { text, expect: own ? [expectation(own)] : [] };
    commands.push(current);
  }
  return commands;
}

/** Every ```sh block of the page, in order. */
export function shellBlocks(file: string): Block[] {
  const lines = readFileSync(file, 'utf8').split('\n');
  const blocks: Block[] = [];
  for (let index = 0; index < lines.length; index++) {
    if (lines[index] !== '```sh') continue;
    const start = index;
    const body: string[] = [];
    while (++index < lines.length && lines[index] !== '```') body.push(lines[index]!);
    const marker = MARKER.exec(lines[start - 1] ?? '');
    blocks.push({
      line: start + 1,
      first: body.find((line) => line.trim() !== '') ?? '',
      commands: commandsOf(body),
      skipped: marker ? { kind: marker[1] as 'not run' | 'run by', reason: marker[2]! } : undefined,
    });
  }
  return blocks;
}

/** Why the output does not meet the expectation, or undefined when it does. */
export function unmet(expected: Expectation, output: string, status: number | undefined): string | undefined {
  if (expected.status !== undefined && status !== expected.status) return `status ${status ?? 'none (no curl ran)'}, not ${expected.status}`;
  if (expected.text && !expected.text.test(output)) return `no line holds ${JSON.stringify(expected.written)}`;
  return undefined;
}
