import { MAX_PASSWORD_BYTES } from '../../runtime/auth/bounds.js';
import { UsageError } from './command.js';

/**
 * A password given on stdin (`--password-stdin`, as `docker login` takes it), so that it never sits in shell
 * history or in the process list: one line, its line end stripped, at most MAX_PASSWORD_BYTES. `usage` is the
 * command line to show someone who ran it at a terminal, such as `xmlrest user add NAME --password-stdin`.
 */
export async function readPasswordFromStdin(usage: string): Promise<string> {
  // A terminal would echo the password as it is typed, and wait for an end of input nobody thinks of giving.
  if (process.stdin.isTTY) {
    throw new UsageError(`--password-stdin reads the password from a pipe, not a terminal: printf '%s' "$PASSWORD" | ${usage}`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
    size += chunk.length;
    // Room for the line end, which is not the password's.
    if (size > MAX_PASSWORD_BYTES + 2) throw new UsageError(`a password has at most ${MAX_PASSWORD_BYTES} bytes`);
    chunks.push(chunk);
  }
  const password = Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
  if (password === '') throw new UsageError('--password-stdin reads the password from stdin, and stdin was empty');
  // Two lines are a mistake (a file of several, a here-document with a blank line), never a password anyone types.
  if (/[\r\n]/.test(password)) throw new UsageError('--password-stdin reads one line, and stdin held more than one');
  return password;
}
