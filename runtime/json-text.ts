// The pieces of the answers' JSON text that generated modules write (docs/internals/contract.md §17): each gives
// exactly what JSON.stringify gives for its value, fast for the type the database described, and through
// JSON.stringify itself for any other (a column whose type moved on since generating, a JSON column's parsed value,
// a Buffer). A value JSON.stringify would leave out (undefined) cannot be written in place: it throws, and
// `answerJson` then makes the whole answer with JSON.stringify.
import type { Operation } from './contract.js';

/** Below this length a string is scanned by hand; past it a regular expression is faster (as fast-json-stringify finds). */
const SHORT = 42;
/** What JSON.stringify escapes: control characters, `"`, `\`, and surrogates (a lone one is written as \udXXX). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for.
const ESCAPED = /[\u0000-\u001f"\\\ud800-\udfff]/;

/** A text column (VARCHAR, DECIMAL and BIGINT as the driver's strings, TIME, ENUM): quoted as is when nothing needs escaping. */
export function jsonString(value: unknown): string {
  if (typeof value !== 'string') return jsonValue(value);
  const length = value.length;
  if (length < SHORT) {
    for (let at = 0; at < length; at++) {
      const code = value.charCodeAt(at);
      if (code < 0x20 || code === 0x22 || code === 0x5c || (code >= 0xd800 && code <= 0xdfff)) return JSON.stringify(value);
    }
    return `"${value}"`;
  }
  return ESCAPED.test(value) ? JSON.stringify(value) : `"${value}"`;
}

/** An integer or floating column: its shortest text, as JSON.stringify writes it (-0 as 0, NaN and infinities as null). */
export function jsonNumber(value: unknown): string {
  if (typeof value !== 'number') return jsonValue(value);
  return Number.isFinite(value) ? `${value}` : 'null';
}

/** A DATE, DATETIME or TIMESTAMP column, a Date: its ISO text, or null for an invalid one (a zero date), as Date's toJSON does. */
export function jsonDate(value: unknown): string {
  if (!(value instanceof Date)) return jsonValue(value);
  const year = value.getUTCFullYear();
  if (Number.isNaN(year)) return 'null';
  // toISOString is a call into the engine's C++; the same text put together here takes half as long (a page of 20
  // rows with a time in each: 5.5% of the server's busy CPU went to it). Years of other than four digits, as it writes them.
  if (year < 1000 || year > 9999) return `"${value.toISOString()}"`;
  const ms = value.getUTCMilliseconds();
  return `"${year}-${two(value.getUTCMonth() + 1)}-${two(value.getUTCDate())}T${two(value.getUTCHours())}:${two(value.getUTCMinutes())}:${two(value.getUTCSeconds())}.${ms < 10 ? '00' : ms < 100 ? '0' : ''}${ms}Z"`;
}

function two(value: number): string {
  return value < 10 ? `0${value}` : `${value}`;
}

/** Any value: JSON.stringify's text; throws for one it would leave out (undefined, a function, a symbol). */
export function jsonValue(value: unknown): string {
  if (value === null) return 'null';
  const text = JSON.stringify(value) as string | undefined;
  if (text === undefined) throw new TypeError('a value JSON leaves out');
  return text;
}

/** A step's rows, each written by the module's own function for its row. */
export function jsonRows<Row>(rows: readonly Row[], row: (value: Row) => string): string {
  if (!Array.isArray(rows)) return jsonValue(rows);
  const count = rows.length;
  if (count === 0) return '[]';
  let text = `[${row(rows[0] as Row)}`;
  for (let at = 1; at < count; at++) text += `,${row(rows[at] as Row)}`;
  return `${text}]`;
}

/**
 * The answer's text as a route sends it: the module's own `json` when it has one, else JSON.stringify. Where `json`
 * throws (a value it cannot write in place, or one JSON.stringify refuses, a BigInt), JSON.stringify makes the whole
 * answer, and says what it says of it: either way, the very bytes, or the very error, JSON.stringify gives.
 */
export function answerJson(json: Operation['json'], answer: object): string {
  if (json === undefined) return JSON.stringify(answer);
  try {
    return json(answer);
  } catch {
    return JSON.stringify(answer);
  }
}
