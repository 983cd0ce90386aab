import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { writesJson } from '../../generator/emit/json.js';
import type { Operation, ResultColumn, SqlStep } from '../../generator/ir.js';
import { columnOf } from '../../generator/types/columns.js';
import { answerJson, jsonDate, jsonNumber, jsonString, jsonValue } from '../../runtime/json-text.js';
import { compiled, operationOf, outcome, PAGED, step } from '../support/answer-json.js';

/**
 * The answers' JSON text the generator writes (docs/internals/contract.md §17) against JSON.stringify, byte for byte:
 * rows of every type the column mapper knows (generator/types/columns.ts), made as mysql2 makes them (each column
 * assigned in order to `{}`, so a repeated name keeps its first place and its last value), holding the driver's values
 * and the traps (zero dates, -0, NaN, lone surrogates, U+2028, escapes, Buffers, JSON columns' parsed values) and
 * values of other types than the column's (a column changed since generating). Where JSON.stringify throws (a BigInt),
 * the answer throws the same. Seeded and bounded; `FUZZ_RUNS` runs more.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 200);
const SEED = Number(process.env.FUZZ_SEED ?? 20261128);
const options = { numRuns: RUNS, seed: SEED };

/** Every MySQL protocol type code the mapper knows, text and binary where the character set decides, signed and unsigned. */
const CODES = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 245, 246, 247, 248, 249, 250, 251, 252, 253, 254, 255];
const EVERY_TYPE: ResultColumn[] = CODES.flatMap((code) =>
  [0, 32].flatMap((unsigned) =>
    [45, 63].flatMap((characterSet) => [0, 1].map((notNull) => columnOf({ name: '', columnType: code, flags: unsigned | notNull, characterSet }))),
  ),
);
const TS_TYPES = [...new Set(EVERY_TYPE.map((column) => column.tsType))].sort();

/** Strings that need JSON.stringify's escapes, or look as if they might. */
const TRAPS = ['"', '\\', '\n', '\u0000', '\u001f', '\u007f', '\u2028', '\u2029', '\ud800', '\udfff', '\ud83d\ude00', '`', '${', "'", 'é', '</script>'];
const text = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 60 }),
  fc.string({ unit: 'binary', maxLength: 60 }),
  fc.array(fc.constantFrom(...TRAPS, 'a', 'plain text '), { maxLength: 30 }).map((parts) => parts.join('')),
);
const date = fc.oneof(
  fc.date({ noInvalidDate: false }),
  fc.constant(new Date(Number.NaN)),
  fc.integer({ min: -1e15, max: 1e15 }).map((ms) => new Date(ms)),
);
const number = fc.oneof(fc.integer(), fc.double(), fc.constantFrom(-0, 0, Number.NaN, Infinity, -Infinity, 2 ** 53, 1e21, 5e-324));
/** A JSON column's parsed value, or a GEOMETRY's object. */
const parsed = fc.jsonValue();
const buffer = fc.uint8Array({ maxLength: 12 }).map((bytes) => Buffer.from(bytes));

/** What the driver gives for a column of each type (with NULL), and now and then any other value. */
function driverValue(tsType: string): fc.Arbitrary<unknown> {
  const own: Record<string, fc.Arbitrary<unknown>> = {
    number,
    string: fc.oneof(text, fc.bigInt().map(String), fc.double({ noNaN: true, noDefaultInfinity: true }).map(String)),
    Date: date,
    Buffer: buffer,
    unknown: fc.oneof(parsed, text, number),
  };
  return fc.oneof(
    { weight: 8, arbitrary: own[tsType] ?? parsed },
    { weight: 2, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: fc.oneof(text, number, date, buffer, parsed, fc.boolean(), fc.constant(undefined)) },
  );
}

const NAMES = ['id', 'title', 'a"b', 'back\\slash', 'tick`', '${x}', 'line\u2028sep', 'é', 'constructor', 'toString', 'valueOf', 'next', 'x y', '\u0001'];
/** A statement's columns: names (now and then one repeated) and types. */
const columns = fc
  .array(fc.record({ name: fc.constantFrom(...NAMES), type: fc.constantFrom(...EVERY_TYPE) }), { minLength: 0, maxLength: 8 })
  .map((picked) => picked.map(({ name, type }) => ({ ...type, name })));

/** A row as mysql2 makes it: each column assigned in the statement's order. */
function rowOf(typed: ResultColumn[], values: unknown[]): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  typed.forEach((column, index) => {
    row[column.name] = values[index];
  });
  return row;
}

describe('the answers JSON text the generator writes', () => {
  it('knows every type the column mapper gives', () => {
    expect(TS_TYPES).toEqual(['Buffer', 'Date', 'number', 'string', 'unknown']);
  });

  it('writes each piece exactly as JSON.stringify does', () => {
    // Each trap alone, in a short string (scanned by hand) and in a long one (by the regular expression).
    for (const trap of TRAPS) for (const value of [trap, `ab${trap}cd`, `${'x'.repeat(50)}${trap}`]) expect(jsonString(value)).toBe(JSON.stringify(value));
    fc.assert(
      fc.property(fc.oneof(text, number, date, buffer, parsed, fc.constant(null)), (value) => {
        const expected = JSON.stringify(value);
        expect(jsonString(value)).toBe(expected);
        expect(jsonNumber(value)).toBe(expected);
        expect(jsonDate(value)).toBe(expected);
        expect(jsonValue(value)).toBe(expected);
      }),
      options,
    );
  });

  it('writes a date of any time as JSON.stringify does', () => {
    const edges = [0, -1, 1, -62135596800000, -30610224000001, -30610224000000, 253402300799999, 253402300800000, 8.64e15, -8.64e15, Number.NaN];
    for (const time of edges) expect(jsonDate(new Date(time))).toBe(JSON.stringify(new Date(time)));
    fc.assert(
      fc.property(fc.integer({ min: -8.64e15, max: 8.64e15 }), fc.integer({ min: -30610224000000, max: 253402300799999 }), (any, fourDigits) => {
        expect(jsonDate(new Date(any))).toBe(JSON.stringify(new Date(any)));
        expect(jsonDate(new Date(fourDigits))).toBe(JSON.stringify(new Date(fourDigits)));
      }),
      { ...options, numRuns: RUNS * 10 },
    );
  });

  it('writes rows of every type, with their traps, byte for byte as JSON.stringify', () => {
    const rows = (typed: ResultColumn[]) => fc.array(fc.tuple(...typed.map((column) => driverValue(column.tsType))), { maxLength: 4 });
    let written = 0;
    const oneStep = columns.chain((typed) => fc.tuple(fc.constant(typed), rows(typed)));
    fc.assert(
      fc.property(oneStep, oneStep, fc.option(text), fc.integer({ min: 0, max: 2 ** 40 }), ([typedA, rowsA], [typedB, rowsB], next, insertId) => {
        const operation = operationOf([step('first', typedA), step('second', typedB, 'read', PAGED), step('written', null, 'write')]);
        const json = compiled(operation);
        const answer = {
          first: rowsA.map((values) => rowOf(typedA, values as unknown[])),
          second: rowsB.map((values) => rowOf(typedB, values as unknown[])),
          written: { affectedRows: 1, insertId: insertId === 0 ? null : insertId },
          next,
        };
        const expected = outcome(() => JSON.stringify(answer));
        expect(outcome(() => answerJson(json, answer))).toBe(expected);
        // The module's own text, not the runtime's fallback: it throws only for a value JSON leaves out.
        const own = outcome(() => json!(answer));
        if (own.startsWith('threw')) expect(JSON.stringify(answer, (_key, value) => (value === undefined ? 'UNDEFINED' : value))).toContain('UNDEFINED');
        else {
          expect(own).toBe(expected);
          written++;
        }
      }),
      options,
    );
    // Most answers hold no undefined: the text the module writes is what was compared.
    expect(written).toBeGreaterThan(RUNS / 2);
  });

  it('answers a BigInt with the error JSON.stringify throws', () => {
    const typed = [{ name: 'n', sqlType: 'bigint', tsType: 'string', nullable: false }];
    const json = compiled(operationOf([step('rows', typed)]));
    const answer = { rows: [{ n: 1n }] };
    expect(() => JSON.stringify(answer)).toThrow(TypeError);
    expect(() => answerJson(json, answer)).toThrow(TypeError);
  });

  it('writes an answer with no field in it as {}', () => {
    const operation = { method: 'DELETE', steps: [{ ...step('gone', null, 'write'), output: false }] } as unknown as Operation;
    expect(writesJson(operation)).toBe(true);
    expect(compiled(operation)?.({})).toBe('{}');
  });

  it('writes none where the answer is not known, or the row is not what its columns say', () => {
    const typed = (name: string) => [{ name, sqlType: 'int', tsType: 'number', nullable: false }];
    // __proto__ is no own property of mysql2's row; an array index is written first by JSON.stringify.
    for (const name of ['__proto__', '0', '42']) expect(writesJson(operationOf([step('rows', typed(name))]))).toBe(false);
    for (const name of ['042', '-1', '1.5', 'x42']) expect(writesJson(operationOf([step('rows', typed(name))]))).toBe(true);
    // Not typed from the database; `select *` (a column added later would be in the row); a plug-in's output.
    expect(writesJson(operationOf([step('rows', null)]))).toBe(false);
    expect(writesJson(operationOf([{ ...step('rows', typed('id')), columns: null }]))).toBe(false);
    expect(writesJson(operationOf([{ kind: 'execute', id: 'made', output: true } as unknown as SqlStep]))).toBe(false);
    // A plug-in whose output is not in the answer leaves it known.
    expect(writesJson(operationOf([{ kind: 'execute', id: 'made', output: false } as unknown as SqlStep, step('rows', typed('id'))]))).toBe(true);
  });
});
