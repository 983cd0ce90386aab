import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BuiltServer, startBuiltServer } from '../support/built-server.js';
import { DEMO_WEBHOOK_ENV } from '../support/demo-webhook.js';
import { type Block, shellBlocks, unmet } from '../support/doc-blocks.js';
import { ownDatabase } from '../support/own-database.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * Every shell block of README.md, docs/getting-started.md and docs/guides/*.md, run as written (issue 42), against the demo:
 * the built server on a database of this file's own with the demo's tables and users, its desk Webhook sending to
 * a receiver here that checks each signature.
 *
 * How a page is run, and what its blocks must say (test/support/doc-blocks.ts has the parser):
 * - Pages in order: README, getting started, then the guides by file name; each page's ```sh blocks in order, in one bash
 *   session of its own (TOKEN and other variables carry from block to block of a page, never to another page), in
 *   this folder, with DATABASE_URL set to that database (so `npx xmlrest ...` reaches it), and every
 *   `http://127.0.0.1:3000` replaced by the server's URL, in the commands and in what they must print.
 * - A command is a line neither blank nor a `#` comment (with its `\` continuations). What it must print: the `# `
 *   lines right under it, and its own trailing comment when that begins with a status or a JSON value; other
 *   comments are prose. An expectation is an optional status (three digits: the HTTP status of the command's last
 *   curl), then an optional text that must appear within one line of the command's output, `...` standing for any
 *   run of characters and everything else literal (a comma right after the status begins prose: `# 403, no credentials`). Every command's output must also be free of curl's own errors
 *   and of `command not found`.
 * - A ```sh block not run as written has `<!-- not run: REASON -->` on the line before its fence, or
 *   `<!-- run by test/integration/NAME.test.ts -->` when another test runs it. They are listed below, so that
 *   skipping shows; blocks that are not commands (XML, TypeScript, YAML, transcripts) are fenced as such, not sh.
 */
const PAGES = [
  'README.md',
  'docs/getting-started.md',
  ...readdirSync('docs/guides')
    .sort()
    .map((name) => `docs/guides/${name}`),
];
const DEMO_URL = 'http://127.0.0.1:3000';

let databaseUrl: string;
let server: BuiltServer;
const receiver = new WebhookReceiver([DEMO_WEBHOOK_ENV.DESK_WEBHOOK_SECRET]);

beforeAll(async () => {
  databaseUrl = await ownDatabase('guide_blocks');
  await receiver.up();
  server = await startBuiltServer({ env: { DATABASE_URL: databaseUrl, DESK_WEBHOOK_URL: receiver.url } });
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await receiver.down();
});

/** Each command's output, and the status of its last curl: the page's blocks run in one bash session. */
async function runPage(blocks: Block[]): Promise<{ output: string; status: number | undefined }[]> {
  const commands = blocks.flatMap((block) => block.commands);
  const script = [
    // Both streams in one, in order; every curl also writes its status to stderr (its stdout stays the body, for
    // the pages' `$(curl ...)`), and says its own errors.
    'exec 2>&1',
    `curl() { command curl -sS -w '%{stderr}\\n@@status %{http_code}\\n' "$@"; }`,
    ...commands.map((command, index) => `printf '\\n@@command ${index}\\n'\n${command.text.replaceAll(DEMO_URL, server.url)}`),
    "printf '\\n@@end\\n'",
  ].join('\n');
  const run = promisify(execFile);
  const { stdout } = await run('bash', ['-c', script], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATABASE_URL: databaseUrl },
    maxBuffer: 16 * 1024 * 1024,
    timeout: 240_000,
  }).catch((error: { stdout?: string; message: string }) => ({ stdout: error.stdout ?? error.message }));
  const parts = stdout.split(/^@@command \d+$/m).slice(1);
  return commands.map((_, index) => {
    const part = (parts[index] ?? '').split(/^@@end$/m)[0]!;
    const statuses = [...part.matchAll(/^@@status (\d{3})$/gm)].map((match) => Number(match[1]));
    return { output: part.replace(/^@@status \d{3}\n?/gm, ''), status: statuses.at(-1) };
  });
}

describe('the shell blocks of getting started and the guides, run as written against the demo', () => {
  for (const page of PAGES) {
    const blocks = shellBlocks(page);
    const run = blocks.filter((block) => block.skipped === undefined);
    if (run.length === 0) continue;
    it(`${page}: ${run.length} block(s), ${run.flatMap((block) => block.commands).length} commands`, async () => {
      const results = await runPage(run);
      const problems: string[] = [];
      let index = 0;
      for (const block of run) {
        for (const command of block.commands) {
          const { output, status } = results[index++]!;
          const found = [
            ...command.expect.map((expected) =>
              unmet(
                { ...expected, text: expected.text && new RegExp(expected.text.source.replaceAll(literal(DEMO_URL), literal(server.url))) },
                output,
                status,
              ),
            ),
            /curl: \(\d+\)|command not found/.test(output) ? 'curl or bash failed' : undefined,
          ].filter((problem) => problem !== undefined);
          for (const problem of found)
            problems.push(
              `${page}:${block.line} (block "${block.first}")\n  command: ${command.text}\n  ${problem}\n  printed: ${output.trim().slice(0, 1500)}`,
            );
        }
      }
      expect(problems.join('\n\n')).toBe('');
    }, 300_000);
  }

  it('lists the blocks it does not run and why; each run elsewhere names a test that exists', () => {
    const skipped = PAGES.flatMap((page) =>
      shellBlocks(page)
        .filter((block) => block.skipped !== undefined)
        .map((block) => ({ where: `${page}:${block.line}`, first: block.first, ...block.skipped! })),
    );
    process.stdout.write(
      `shell blocks not run here:\n${skipped.map((block) => `  ${block.where} "${block.first}": ${block.kind} ${block.reason}\n`).join('')}`,
    );
    for (const block of skipped) {
      expect(block.reason.length, block.where).toBeGreaterThan(10);
      if (block.kind === 'run by') expect(existsSync(block.reason.split(' ')[0]!), `${block.where} names ${block.reason}`).toBe(true);
    }
    // Few, and each on purpose: a new one should make whoever adds it look for a way to run it. (A block another
    // test runs as written is run, only not twice.)
    expect(skipped.filter((block) => block.kind !== 'run by').length).toBeLessThanOrEqual(4);
    // Commands fenced as anything but sh would escape this test: bash, shell, or no language at all.
    for (const page of PAGES)
      expect(
        openingFences(page).filter((language) => ['', 'bash', 'shell', 'zsh'].includes(language)),
        page,
      ).toEqual([]);
  });

  it("delivered the guides' ticket events to the desk Webhook, signed as Standard Webhooks has it", async () => {
    for (let i = 0; i < 300 && !receiver.deliveries.some((delivery) => delivery.payload?.type === 'ticket.opened'); i++)
      await new Promise((resolve) => setTimeout(resolve, 100));
    const opened = receiver.deliveries.filter((delivery) => delivery.payload?.type === 'ticket.opened');
    expect(opened.length).toBeGreaterThan(0);
    expect(receiver.deliveries.filter((delivery) => delivery.payload === undefined)).toEqual([]);
  }, 60_000);
});

/** The language of each code block the page opens, in order ('' for none). */
function openingFences(page: string): string[] {
  const fences = readFileSync(page, 'utf8').match(/^```.*$/gm) ?? [];
  return fences.filter((_, index) => index % 2 === 0).map((fence) => fence.slice(3).trim());
}

/** A text as a regular expression's literal, as doc-blocks.ts writes expectations. */
function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
